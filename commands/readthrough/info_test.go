package readthrough

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFillInfo: FILL.INFO's state of a key as the clock moves: missing,
// fresh, stale, gone; negative after a 404, cooldown after a failure;
// the origin's tags; a map in RESP3.
func TestFillInfo(t *testing.T) {
	f := newHarness(t)
	o := newOrigin(t)
	o.set("k:1", "one")
	o.tags["k:1"] = "t1 t2"
	o.status["k:bad"] = 500
	info := func(state string, fresh, stale int, loader string, tags ...any) []any {
		return []any{"state", state, "fresh_ms", fresh, "stale_ms", stale, "loader", loader, "in_flight", 0, "tags", append([]any{}, tags...)}
	}
	f.Run([]Case{
		{"FILL.INFO k:1", info("missing", 0, 0, "")},
		{"LOADER.REGISTER k: " + o.loader(), "OK"},
		{"FILL.INFO k:1", info("missing", 0, 0, "k:")},
		{"GETFILL k:1 10 5", "one"},
		{"FILL.INFO k:1", info("fresh", 10000, 15000, "k:", "t1", "t2")},
		{"GETFILL k:nosuch 10 5", nil},
		{"FILL.INFO k:nosuch", info("negative", 0, 0, "k:")},
		{"GETFILL k:bad 10 5", Err("LOADERR k: status 500")},
		{"FILL.INFO k:bad", info("cooldown", 0, 0, "k:")},
		{"SET plain v", "OK"},
		{"FILL.INFO plain", info("fresh", -1, -1, "")},
	})
	f.Clock.Advance(12 * time.Second)
	f.Check("FILL.INFO k:1", info("stale", 0, 3000, "k:", "t1", "t2"))
	f.Clock.Advance(3 * time.Second)
	f.Check("FILL.INFO k:1", info("missing", 0, 0, "k:"))
	f.Proto(3)
	f.Check("FILL.INFO plain", Map{"state", "fresh", "fresh_ms", -1, "stale_ms", -1, "loader", "", "in_flight", 0, "tags", []any{}})
}

// TestInfoStampede: INFO's stampede section counts each loader's loads
// and answers, and the application's fills (FILL.LEASE).
func TestInfoStampede(t *testing.T) {
	f, o := newServed(t)
	o.set("k:1", "one")
	f.Check("GETFILL k:1 10 5", "one")
	f.Check("GETFILL k:1 10 5", "one")
	f.Check("GETFILL k:2 10 5", nil)
	_, token := f.lease(t, "app:1", "10", "5")
	f.Check("FILL.SET app:1 "+token.(string)+" v", "OK")
	f.Check("FILL.LEASE app:1 10 5", []any{"v", nil})
	fields := map[string]string{}
	var names []string
	for _, s := range InfoSections(f.opts) {
		if s.Name != "stampede" {
			t.Errorf("section %q, want stampede alone", s.Name)
		}
		s.Write(func(name string, value any) {
			names = append(names, name)
			fields[name] = fmt.Sprint(value)
		})
	}
	want := []string{"loaders", "loader0", "app_fills", "tag_entries", "tag_bytes", "tag_evictions",
		"tag_purges_hard", "tag_purged_keys_hard", "tag_purges_soft", "tag_purged_keys_soft"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("fields %q, want %q", names, want)
	}
	if fields["loaders"] != "1" {
		t.Errorf("loaders:%s, want 1", fields["loaders"])
	}
	for name, want := range map[string]string{
		"loader0": "prefix=k:,timeout_ms=5000,batch=0,in_flight=0,fills=2,failures=0,batch_requests=0," +
			"answers_fresh=1,answers_stale=0,answers_stale_if_error=0,answers_loaded=1,answers_negative=1,answers_cooldown=0," +
			"answers_timeout=0,answers_timeout_stale=0,answers_error=0," +
			"coalesced_waiters=0,refreshes_started=0,refreshes_early=0,refreshes_dropped=0,past_grace=0",
		"app_fills": "answers_fresh=1,answers_stale=0,answers_stale_if_error=0,answers_loaded=0,answers_negative=0,answers_cooldown=0," +
			"answers_timeout=0,answers_timeout_stale=0,answers_error=0," +
			"leases_granted=1,leases_set=1,leases_aborted=0,leases_expired=0,leases_lost=0,waiters=0,past_grace=0",
		"tag_purges_hard": "0",
	} {
		if fields[name] != want {
			t.Errorf("%s:%s, want %s", name, fields[name], want)
		}
	}
}
