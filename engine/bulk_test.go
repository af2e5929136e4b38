package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A Loader writes what Set writes, the last of a repeated key wins, and
// once Sync returns ristretto knows every key it wrote, written over
// meanwhile or not.
func TestLoaderStrings(t *testing.T) {
	s, clk := newClockStore(t)
	n := underRace(20000, 5000)
	l := s.NewLoader(n)
	fill := &FillMeta{Loader: "app", ETag: `"e"`, LoadTime: time.Millisecond}
	var items []LoadItem
	for i := range n {
		it := LoadItem{Key: fmt.Appendf(nil, "k:%d", i), Value: fmt.Appendf(nil, "v:%d", i)}
		switch i % 4 {
		case 1:
			it.StaleUntil = clk.in(time.Hour)
		case 2:
			it.FreshUntil, it.StaleUntil, it.Fill = clk.in(time.Minute), clk.in(time.Hour), fill
		}
		items = append(items, it)
		if len(items) == 700 || i == n-1 {
			if err := l.Strings(items); err != nil {
				t.Fatal(err)
			}
			items = items[:0]
		}
	}
	if err := l.Strings([]LoadItem{{Key: []byte("k:3"), Value: []byte("first")}, {Key: []byte("k:3"), Value: []byte("last")}}); err != nil {
		t.Fatal(err)
	}
	l.Done()
	// Writes while ristretto is being told of the keys.
	set(t, s, "k:5", strings.Repeat("longer ", 20))
	s.Delete([]byte("k:6"))
	set(t, s, "new", "x")
	checkInvariants(t, s)
	if got := s.Len(); got != n {
		t.Errorf("Len %d, want %d", got, n)
	}
	// k:5 and k:6 had deadlines: one was written over without, one deleted.
	if got, want := s.Volatile(), n/2-2; got != want {
		t.Errorf("Volatile %d, want %d", got, want)
	}
	wantValue(t, s, "k:3", "last")
	wantValue(t, s, "k:9", "v:9")
	env, ok := s.Peek([]byte("k:10"))
	if !ok || env.FreshUntil != clk.in(time.Minute) || env.StaleUntil != clk.in(time.Hour) || env.Fill == nil || *env.Fill != *fill {
		t.Errorf("k:10: %+v %v", env, ok)
	}
	if env, _ := s.Peek([]byte("k:13")); env.FreshUntil != env.StaleUntil || env.StaleUntil != clk.in(time.Hour) {
		t.Errorf("k:13's deadlines: %+v", env)
	}
}

// Keys past the memory bound are told to ristretto as they are loaded, so
// it evicts during the load rather than after it: in the middle of a load
// of six times the bound, the store holds no more than the bound.
func TestLoaderOverBound(t *testing.T) {
	const bound = 1 << 20
	s := newStore(t, Options{MaxMemory: bound})
	l := s.NewLoader(1 << 30)
	value := []byte(strings.Repeat("v", 100))
	keys := 0
	for batch := range 3 {
		var items []LoadItem
		for range 2 * bound / 300 {
			items = append(items, LoadItem{Key: fmt.Appendf(nil, "k:%d", keys), Value: value})
			keys++
		}
		if err := l.Strings(items); err != nil {
			t.Fatal(err)
		}
		s.Sync()
		if st := s.Stats(); st.Cost > bound {
			t.Fatalf("after batch %d: cost %d over the bound of %d", batch, st.Cost, bound)
		}
	}
	l.Done()
	checkInvariants(t, s)
	if st := s.Stats(); st.Evicted+st.Rejected == 0 || s.Len() >= keys {
		t.Errorf("nothing evicted: %+v, %d keys of %d", st, s.Len(), keys)
	}
}
