// Package board is the stampede radar's screen: one Board (the replica, the
// loaders' health, reads against origin calls second by second, and the
// top keys by each measure) gathered from a Tracker in the process (the
// metrics port's status page) or from FILL.RADAR and FILL.TOP over RESP
// (`stampedeless top`, against any server), and drawn as text or as HTML.
// Both show the same figures, drawn by the same code.
package board

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/radar"
)

// TopCount is how many keys a Board lists per measure.
const TopCount = 10

// RateSeconds is how many whole seconds the rates are averaged over.
const RateSeconds = 10

// Board is one screen of the radar.
type Board struct {
	// Replica is the server's replica id with --redis (each replica shows
	// its own view); empty for a server alone.
	Replica string
	Window  radar.Window
	// Capacity is the radar's counters per summary: a count may be up to
	// the measure's total over it above the truth.
	Capacity int
	Loaders  []radar.LoaderHealth
	History  []radar.Second
	// Keys are the top keys of each measure, in radar.Measures' order.
	Keys [len(radar.Measures)][]Key
}

// Key is one key of a Board.
type Key struct {
	Key, Loader string
	Count, Err  uint64
}

// Rates are reads and origin calls per second over the last RateSeconds
// whole seconds, and their ratio: how many reads each origin call served
// (the coalescing ratio; 0 without calls).
func (b *Board) Rates() (reads, calls, ratio float64) {
	h := b.History
	if len(h) > 1 {
		h = h[max(len(h)-1-RateSeconds, 0) : len(h)-1] // the current second is partial
	}
	for _, s := range h {
		reads += float64(s.Reads)
		calls += float64(s.Calls)
	}
	if n := float64(len(h)); n > 0 {
		reads, calls = reads/n, calls/n
	}
	if calls > 0 {
		ratio = reads / calls
	}
	return reads, calls, ratio
}

// Local gathers Boards from the process's own radar.
type Local struct {
	Radar   *radar.Tracker
	Loaders *loader.Registry
	Replica string
}

// Board is the radar's view over w.
func (l Local) Board(w radar.Window) Board {
	infos := l.Loaders.List()
	inFlight := make(map[string]int64, len(infos))
	for _, in := range infos {
		inFlight[in.Prefix] = in.InFlight
	}
	b := Board{Replica: l.Replica, Window: w, Capacity: l.Radar.Capacity(), Loaders: l.Radar.Loaders(w, inFlight),
		History: l.Radar.History(radar.HistorySeconds / 2)}
	for i, m := range radar.Measures {
		entries, _ := l.Radar.Top(m, w, TopCount, nil)
		for _, e := range entries {
			k := Key{Key: e.Key, Count: e.Count, Err: e.Err}
			if ld, ok := l.Loaders.Lookup(e.Key); ok {
				k.Loader = ld.Prefix()
			}
			b.Keys[i] = append(b.Keys[i], k)
		}
	}
	return b
}

// Remote gathers a Board from a server over RESP, with FILL.RADAR and a
// FILL.TOP per measure: the keys are those the client's user may read.
func Remote(ctx context.Context, c redis.UniversalClient, w radar.Window) (Board, error) {
	b := Board{Window: w}
	v, err := c.Do(ctx, "FILL.RADAR", "WINDOW", w.String()).Result()
	if err != nil {
		return b, err
	}
	m := asMap(v)
	b.Replica = str(m["replica"])
	b.Capacity = int(num(m["capacity"]))
	for _, l := range list(m["loaders"]) {
		lm := asMap(l)
		b.Loaders = append(b.Loaders, radar.LoaderHealth{Loader: str(lm["loader"]), InFlight: num(lm["in_flight"]),
			Calls: uint64(num(lm["calls"])), Failures: uint64(num(lm["failures"])), Cooldowns: uint64(num(lm["cooldowns"])),
			P50: time.Duration(num(lm["p50_us"])) * time.Microsecond, P99: time.Duration(num(lm["p99_us"])) * time.Microsecond})
	}
	for _, s := range list(m["history"]) {
		if a := list(s); len(a) == 3 {
			b.History = append(b.History, radar.Second{At: num(a[0]), Reads: uint64(num(a[1])), Calls: uint64(num(a[2]))})
		}
	}
	for i, meas := range radar.Measures {
		v, err := c.Do(ctx, "FILL.TOP", "BY", meas.String(), "COUNT", TopCount, "WINDOW", w.String()).Result()
		if err != nil {
			return b, err
		}
		for _, e := range list(asMap(v)["keys"]) {
			em := asMap(e)
			b.Keys[i] = append(b.Keys[i], Key{Key: str(em["key"]), Loader: str(em["loader"]),
				Count: uint64(num(em["count"])), Err: uint64(num(em["error"]))})
		}
	}
	return b, nil
}

// asMap reads a RESP3 map, or a RESP2 flat array of pairs, as go-redis
// returns them.
func asMap(v any) map[string]any {
	out := map[string]any{}
	switch m := v.(type) {
	case map[any]any:
		for k, v := range m {
			out[fmt.Sprint(k)] = v
		}
	case map[string]any:
		return m
	case []any:
		for i := 0; i+1 < len(m); i += 2 {
			out[fmt.Sprint(m[i])] = m[i+1]
		}
	}
	return out
}

func list(v any) []any { a, _ := v.([]any); return a }

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func num(v any) int64 { n, _ := v.(int64); return n }
