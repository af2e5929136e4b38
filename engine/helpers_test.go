package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// fakeClock is a clock for Options.Now that only moves when told to.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	return c
}

func (c *fakeClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// nanos returns the current fake time in unix nanoseconds.
func (c *fakeClock) nanos() int64 { return c.ns.Load() }

// in returns the fake time d from now in unix nanoseconds.
func (c *fakeClock) in(d time.Duration) int64 { return c.ns.Load() + int64(d) }

func (c *fakeClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// noSweep is an ExpireInterval long enough that the sweeper never runs
// during a test, so lazy expiry can be observed on its own.
const noSweep = time.Hour

// underRace returns n, or race when the race detector, which slows the
// store about tenfold, is on.
func underRace(n, race int) int {
	if raceEnabled {
		return race
	}
	return n
}

// newStore returns a store closed when the test ends.
func newStore(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	t.Cleanup(s.Close)
	return s
}

// newClockStore returns a store on a fake clock whose sweeper does not run.
func newClockStore(t testing.TB) (*Store, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 64 << 20, Now: clk.Now, ExpireInterval: noSweep})
	return s, clk
}

func mustSet(t testing.TB, s *Store, key, value string, opts SetOptions) SetResult {
	t.Helper()
	res, err := s.Set([]byte(key), []byte(value), opts)
	if err != nil {
		t.Fatalf("Set(%q): %v", key, err)
	}
	return res
}

func set(t testing.TB, s *Store, key, value string) {
	t.Helper()
	res := mustSet(t, s, key, value, SetOptions{})
	if !res.Written {
		t.Fatalf("Set(%q) not written", key)
	}
}

// wantValue fails the test unless key is live with value want.
func wantValue(t testing.TB, s *Store, key, want string) {
	t.Helper()
	got, ok := s.Get([]byte(key))
	if !ok {
		t.Fatalf("Get(%q): miss, want %q", key, want)
	}
	if string(got) != want {
		t.Fatalf("Get(%q) = %q, want %q", key, got, want)
	}
}

// wantMiss fails the test if key is live.
func wantMiss(t testing.TB, s *Store, key string) {
	t.Helper()
	if got, ok := s.Get([]byte(key)); ok {
		t.Fatalf("Get(%q) = %q, want a miss", key, got)
	}
}

// liveCost sums the cost of the records in the indexes.
func liveCost(s *Store) (entries int, cost int64) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		sh.index.Range(func(_ int, loc slab.Loc) bool {
			rec := parseRecord(s.arena.Block(loc))
			entries++
			cost += rec.cost()
			return true
		})
		sh.mu.RUnlock()
	}
	return entries, cost
}

// checkInvariants checks the store's internal bookkeeping. It must be called
// when no other goroutine is using s: every entry in the indexes is in its
// right shard, is found by its own key, and is charged its size; the
// shards' volatile counts are right; and the arena holds exactly the
// indexes' records.
func checkInvariants(t testing.TB, s *Store) {
	t.Helper()
	// A compaction between one shard's count and the arena's would count
	// a record it is moving twice (allocated, not yet freed): none runs
	// while the invariants are read.
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	var total, recordBytes int64
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		volatile := 0
		sh.index.Range(func(pos int, loc slab.Loc) bool {
			rec := parseRecord(s.arena.Block(loc))
			k := string(rec.key)
			h := s.hash(rec.key)
			if got := s.shardOf(h); got != sh {
				t.Errorf("key %q is in shard %d, not its own", k, i)
			}
			if sl, ok := s.findLocked(sh, h, rec.key); !ok || sl.loc != loc {
				t.Errorf("key %q at slot %d: its own lookup finds %v, %v", k, pos, sl.loc, ok)
			}
			if rec.stale != 0 {
				volatile++
			}
			total += rec.cost()
			recordBytes += int64(len(s.arena.Block(loc))) + 4
			return true
		})
		if volatile != sh.volatile {
			t.Errorf("shard %d: volatile = %d, but %d entries have a deadline", i, sh.volatile, volatile)
		}
		sh.mu.RUnlock()
	}
	st := s.Stats()
	if st.Cost != total {
		t.Errorf("Stats().Cost = %d, entries in the indexes cost %d", st.Cost, total)
	}
	if st.ArenaLiveBytes != recordBytes {
		t.Errorf("the arena holds %d live bytes, the indexes' records take %d", st.ArenaLiveBytes, recordBytes)
	}
}

// fullScan runs SCAN from cursor 0 to completion and returns every key it
// returned, in order, with duplicates kept.
func fullScan(t testing.TB, s *Store, pattern []byte, count int) []string {
	t.Helper()
	var all []string
	cursor := uint64(0)
	for calls := 0; ; calls++ {
		if calls > 1_000_000 {
			t.Fatalf("scan with count %d did not finish", count)
		}
		next, keys := s.Scan(cursor, ScanFilter{Pattern: pattern}, count)
		if count > 0 && len(keys) > count {
			t.Fatalf("Scan(%#x, count %d) returned %d keys", cursor, count, len(keys))
		}
		if next != 0 && next <= cursor {
			t.Fatalf("Scan(%#x) returned cursor %#x, which does not advance", cursor, next)
		}
		all = append(all, keys...)
		if next == 0 {
			return all
		}
		cursor = next
	}
}

// sameSet reports the difference between got (which may hold duplicates)
// and the set want, or "" if got holds each of want exactly once.
func sameSet(got []string, want map[string]bool) string {
	var b bytes.Buffer
	seen := make(map[string]int, len(got))
	for _, k := range got {
		seen[k]++
	}
	var dup, extra, missing []string
	for k, n := range seen {
		if n > 1 {
			dup = append(dup, k)
		}
		if !want[k] {
			extra = append(extra, k)
		}
	}
	for k := range want {
		if seen[k] == 0 {
			missing = append(missing, k)
		}
	}
	for _, l := range []struct {
		name string
		keys []string
	}{{"duplicated", dup}, {"unexpected", extra}, {"missing", missing}} {
		if len(l.keys) == 0 {
			continue
		}
		slices.Sort(l.keys)
		if len(l.keys) > 10 {
			fmt.Fprintf(&b, "%d %s keys, e.g. %q; ", len(l.keys), l.name, l.keys[:10])
		} else {
			fmt.Fprintf(&b, "%s keys %q; ", l.name, l.keys)
		}
	}
	return b.String()
}

func setOf(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// keysInShard returns n keys with prefix that all live in shard idx.
func keysInShard(s *Store, idx int, prefix string, n int) []string {
	var keys []string
	for i := 0; len(keys) < n; i++ {
		k := prefix + strconv.Itoa(i)
		if s.shardFor([]byte(k)) == &s.shards[idx] {
			keys = append(keys, k)
		}
	}
	return keys
}

// inIndex reports whether key has a record in its shard's index, live or
// past its deadline.
func inIndex(s *Store, key string) bool {
	h := s.hash([]byte(key))
	sh := s.shardOf(h)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	_, ok := s.findLocked(sh, h, []byte(key))
	return ok
}

// touch is TOUCH of one key, as the command reads it (ReadMulti with
// ReadNotes): it records an access and reports whether key is live.
func touch(s *Store, key string) bool {
	return s.ReadMulti([][]byte{[]byte(key)}, ReadNotes, func(int, Type, []byte, bool) {}) == 1
}
