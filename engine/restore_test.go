package engine

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func listItem(key string, members ...string) LoadItem {
	it := LoadItem{Key: []byte(key), Type: TypeList}
	for _, m := range members {
		it.Members = append(it.Members, []byte(m))
	}
	return it
}

// Restore refuses a live key without replace, and a corrupt collection
// leaves the key it would replace as it was.
func TestRestoreRefusesWithoutChanging(t *testing.T) {
	s, clk := newClockStore(t)
	mustSet(t, s, "k", "old", SetOptions{StaleUntil: clk.in(time.Hour)})
	if err := s.Restore(listItem("k", "a"), false, -1, -1); !errors.Is(err, ErrBusyKey) {
		t.Fatalf("Restore of a live key without replace: %v, want ErrBusyKey", err)
	}
	dup := LoadItem{Key: []byte("k"), Type: TypeSet, Members: [][]byte{[]byte("a"), []byte("a")}}
	if err := s.Restore(dup, true, -1, -1); !errors.Is(err, ErrDuplicateMember) {
		t.Fatalf("Restore of a set with a repeated member: %v, want ErrDuplicateMember", err)
	}
	if env, ok := s.Peek([]byte("k")); !ok || string(env.Value) != "old" || env.StaleUntil != clk.in(time.Hour) {
		t.Fatalf("after the refused Restores k is %+v, %v; want the old value and deadline", env, ok)
	}
	// Replaced, with its deadline and its access stamp, in one change.
	it := listItem("k", "x", "y")
	it.StaleUntil = clk.in(time.Minute)
	s.SetEvictionPolicy(AllKeysLFU)
	if err := s.Restore(it, true, -1, 42); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.LLen([]byte("k")); n != 2 {
		t.Fatalf("LLEN after Restore = %d", n)
	}
	if env, _ := s.Peek([]byte("k")); env.StaleUntil != clk.in(time.Minute) {
		t.Fatalf("deadline %d, want %d", env.StaleUntil, clk.in(time.Minute))
	}
	if f, _, _ := s.AccessFrequency([]byte("k")); f != 42 {
		t.Fatalf("OBJECT FREQ after Restore ... FREQ 42 = %d", f)
	}
	// A deadline already past deletes the key it replaces and stores nothing.
	past := listItem("k", "z")
	past.StaleUntil = clk.in(-time.Second)
	if err := s.Restore(past, true, -1, -1); err != nil {
		t.Fatal(err)
	}
	wantMiss(t, s, "k")
	if _, ok := s.TypeOf([]byte("k")); ok {
		t.Fatal("a Restore with a past deadline left the key")
	}
	checkInvariants(t, s)
}

// Racing Restores of one key, with and without replace, and deletes: a
// reader sees the list whole or not at all, and a Restore without replace
// that finds it is refused.
func TestRestoreIsAtomic(t *testing.T) {
	s := newStore(t, Options{})
	var wg sync.WaitGroup
	var stop atomic.Bool
	var busy atomic.Int64
	for g := range 3 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				err := s.Restore(listItem("rk", "a", "b", "c"), g == 2 && i%2 == 0, -1, -1)
				switch {
				case errors.Is(err, ErrBusyKey):
					busy.Add(1)
				case err != nil:
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for !stop.Load() {
			s.Delete([]byte("rk"))
		}
	})
	// Read until the writers have raced a while: on a busy machine they
	// may start late.
	for i := 0; i < underRace(20000, 4000) || busy.Load() < 100; i++ {
		if i > 10_000_000 {
			break
		}
		if n, err := s.LLen([]byte("rk")); err != nil || (n != 0 && n != 3) {
			t.Errorf("LLEN = %d, %v while Restores race: want 0 or 3", n, err)
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	if busy.Load() == 0 {
		t.Error("no Restore found the key there: the test raced nothing")
	}
	checkInvariants(t, s)
}
