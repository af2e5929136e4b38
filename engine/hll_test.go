package engine

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestPFAddConcurrent: writers adding to the same HLLs, a merger and
// counters at once lose no register: the registers are the same as one
// writer's adding everything, whatever the order (the count depends on
// the registers alone).
func TestPFAddConcurrent(t *testing.T) {
	s := newStore(t, Options{})
	ref := newStore(t, Options{})
	const writers, each = 4, 1500
	elems := func(w int) [][]byte {
		out := make([][]byte, each)
		for i := range out {
			out[i] = fmt.Appendf(nil, "w%d-%d", w, i)
		}
		return out
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, e := range elems(w) {
				if _, err := s.PFAdd([]byte("h"), [][]byte{e}); err != nil {
					t.Error(err)
					return
				}
				if i%100 == 0 {
					if _, err := s.PFCount([][]byte{[]byte("h")}); err != nil {
						t.Error(err)
					}
					if err := s.PFMerge([]byte("m"), [][]byte{[]byte("h")}); err != nil {
						t.Error(err)
					}
				}
			}
		}()
		if _, err := ref.PFAdd([]byte("h"), elems(w)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if err := s.PFMerge([]byte("m"), [][]byte{[]byte("h")}); err != nil {
		t.Fatal(err)
	}
	want, _ := ref.PFCount([][]byte{[]byte("h")})
	for _, key := range []string{"h", "m"} {
		if got, err := s.PFCount([][]byte{[]byte(key)}); got != want || err != nil {
			t.Errorf("PFCOUNT %s after concurrent PFADDs = %d, %v; one writer's = %d", key, got, err, want)
		}
	}
	a, _ := s.PFDebug([]byte("h"), true)
	b, _ := ref.PFDebug([]byte("h"), true)
	if !bytes.Equal(a.Registers, b.Registers) {
		t.Error("the registers differ from one writer's")
	}
}

// TestPFKeepsDeadlinesAndTypes: PF writes keep a key's deadlines, refuse
// another type with ErrWrongType and a string that is no HLL with
// ErrNotHLL, and leave both as they were.
func TestPFKeepsDeadlinesAndTypes(t *testing.T) {
	clock := newFakeClock()
	s := newStore(t, Options{Now: clock.Now, ExpireInterval: noSweep})
	at := clock.in(1e12)
	if _, err := s.PFAdd([]byte("h"), [][]byte{[]byte("a")}); err != nil {
		t.Fatal(err)
	}
	s.Expire([]byte("h"), at, 0)
	s.PFAdd([]byte("h"), [][]byte{[]byte("b")})
	s.PFCount([][]byte{[]byte("h")})
	s.PFMerge([]byte("h"), nil)
	if env, _ := s.Peek([]byte("h")); env.StaleUntil != at {
		t.Errorf("deadline after PF writes = %d, want %d", env.StaleUntil, at)
	}
	s.Set([]byte("str"), []byte("not an hll"), SetOptions{})
	s.SAdd([]byte("set"), [][]byte{[]byte("m")})
	for _, key := range []string{"str", "set"} {
		want := ErrNotHLL
		if key == "set" {
			want = ErrWrongType
		}
		if _, err := s.PFAdd([]byte(key), [][]byte{[]byte("x")}); !errors.Is(err, want) {
			t.Errorf("PFADD %s: %v, want %v", key, err, want)
		}
		if _, err := s.PFCount([][]byte{[]byte("h"), []byte(key)}); !errors.Is(err, want) {
			t.Errorf("PFCOUNT h %s: %v, want %v", key, err, want)
		}
		if err := s.PFMerge([]byte("h"), [][]byte{[]byte(key)}); !errors.Is(err, want) {
			t.Errorf("PFMERGE h %s: %v, want %v", key, err, want)
		}
	}
	if v, _ := s.Get([]byte("str")); string(v) != "not an hll" {
		t.Errorf("str after refused PF writes = %q", v)
	}
}
