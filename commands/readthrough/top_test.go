package readthrough

import (
	"strings"
	"testing"
)

// TestFillTopArguments: FILL.TOP's and FILL.RADAR's options and errors.
func TestFillTopArguments(t *testing.T) {
	f := newHarness(t)
	empty := func(by, window string) []any {
		return []any{"by", by, "window", window, "replica", "", "total", 0, "bound", 0, "keys", []any{}}
	}
	f.Run([]Case{
		{"FILL.TOP", empty("waiters", "1m")},
		{"FILL.TOP BY calls WINDOW 10m COUNT 5", empty("calls", "10m")},
		{"FILL.TOP BY latency", empty("latency", "1m")},
		{"FILL.TOP BY bogus", Err("ERR BY must be calls, waiters, stale, failures or latency")},
		{"FILL.TOP WINDOW 1h", Err("ERR WINDOW must be 1m or 10m")},
		{"FILL.TOP COUNT 0", Err("ERR syntax error")},
		{"FILL.TOP COUNT x", Err("ERR value is not an integer or out of range")},
		{"FILL.TOP COUNT", Err("ERR syntax error")},
		{"FILL.TOP BOGUS 1", Err("ERR syntax error")},
		{"FILL.RADAR BY calls", Err("ERR syntax error")},
		{"FILL.RADAR WINDOW 1h", Err("ERR WINDOW must be 1m or 10m")},
	})
	f.Proto(3)
	f.Check("FILL.TOP", Map{"by", "waiters", "window", "1m", "replica", "", "total", 0, "bound", 0, "keys", []any{}})
}

// TestFillTop: the radar's keys by origin calls, among those the caller
// may read, with their loader; FILL.RADAR's loaders and history.
func TestFillTop(t *testing.T) {
	f, o := newServed(t, func(o *Options) { o.Replica = "r1" })
	o.set("k:a", "a")
	o.set("k:b", "b")
	o.status["k:bad"] = 500
	f.Check("GETFILL k:a 10 5", "a")
	f.Check("GETFILL k:b 10 5", "b")
	f.Check("GETFILL k:bad 10 5", Err("LOADERR k: status 500"))
	key := func(k string, count, errs int) []any {
		return []any{"key", k, "loader", "k:", "count", count, "error", errs}
	}
	f.Check("FILL.TOP BY calls COUNT 2", []any{"by", "calls", "window", "1m", "replica", "r1", "total", 3, "bound", 0,
		"keys", []any{key("k:a", 1, 0), key("k:b", 1, 0)}})
	f.Check("FILL.TOP BY failures", []any{"by", "failures", "window", "1m", "replica", "r1", "total", 1, "bound", 0,
		"keys", []any{key("k:bad", 1, 0)}})
	// A user who may not read every key sees only those it may.
	f.Client.Restricted = true
	f.Client.Readable = func(k string) bool { return strings.HasSuffix(k, "b") }
	f.Check("FILL.TOP BY calls", []any{"by", "calls", "window", "1m", "replica", "r1", "total", 3, "bound", 0,
		"keys", []any{key("k:b", 1, 0)}})

	radar, ok := f.Do("FILL.RADAR").([]any)
	if !ok || len(radar) != 10 || radar[0] != "replica" || radar[1] != "r1" || radar[5] != int64(32) {
		t.Fatalf("FILL.RADAR = %#v", radar)
	}
	loaders := radar[7].([]any)
	if len(loaders) != 1 {
		t.Fatalf("FILL.RADAR's loaders = %#v, want k: alone", loaders)
	}
	if l := loaders[0].([]any); l[1] != "k:" || l[5] != int64(3) || l[7] != int64(1) {
		t.Errorf("FILL.RADAR's loader = %#v, want k: with 3 calls and 1 failure", l)
	}
	history := radar[9].([]any)
	last := history[len(history)-1].([]any)
	if len(history) != 300 || last[0] != f.Clock.Now().Unix() || last[2] != int64(3) {
		t.Errorf("FILL.RADAR's history: %d seconds, the last %#v; want 300, the last now with 3 calls", len(history), last)
	}
}
