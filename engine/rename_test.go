package engine

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

// keysInTwoShards returns a key in shard 0 and one in shard 1, so a
// rename between them locks two shards.
func keysInTwoShards(s *Store) (string, string) {
	return keysInShard(s, 0, "a", 1)[0], keysInShard(s, 1, "b", 1)[0]
}

func TestRenameMovesValueDeadlinesAndFill(t *testing.T) {
	s, clk := newClockStore(t)
	src, dst := keysInTwoShards(s)
	meta := &FillMeta{Loader: "l", ETag: `"v1"`}
	fresh, stale := clk.in(time.Minute), clk.in(time.Hour)
	mustSet(t, s, src, "v", SetOptions{FreshUntil: fresh, StaleUntil: stale, Fill: meta})
	set(t, s, dst, "old")

	moved, err := s.Rename([]byte(src), []byte(dst), false)
	if err != nil || !moved {
		t.Fatalf("Rename = %v, %v", moved, err)
	}
	wantMiss(t, s, src)
	env, ok := s.Peek([]byte(dst))
	if !ok || string(env.Value) != "v" || env.FreshUntil != fresh || env.StaleUntil != stale || env.Fill == nil || *env.Fill != *meta {
		t.Fatalf("after RENAME: %+v %v", env, ok)
	}
	if n := s.Volatile(); n != 1 {
		t.Fatalf("Volatile = %d, want 1", n)
	}
	checkInvariants(t, s)

	// Back again: a key without a deadline replaces one with.
	set(t, s, src, "plain")
	if moved, err := s.Rename([]byte(src), []byte(dst), false); err != nil || !moved {
		t.Fatalf("Rename = %v, %v", moved, err)
	}
	if env, _ := s.Peek([]byte(dst)); env.StaleUntil != 0 || env.Fill != nil {
		t.Fatalf("the replaced key's deadline or fill stayed: %+v", env)
	}
	checkInvariants(t, s)
}

func TestRenameCases(t *testing.T) {
	s, clk := newClockStore(t)
	if _, err := s.Rename([]byte("missing"), []byte("x"), false); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("Rename of a missing key: %v", err)
	}
	mustSet(t, s, "gone", "v", SetOptions{StaleUntil: clk.in(time.Second)})
	clk.advance(2 * time.Second)
	if _, err := s.Rename([]byte("gone"), []byte("x"), false); !errors.Is(err, ErrNoSuchKey) {
		t.Fatalf("Rename of an expired key: %v", err)
	}
	set(t, s, "a", "1")
	set(t, s, "b", "2")
	if moved, err := s.Rename([]byte("a"), []byte("b"), true); err != nil || moved {
		t.Fatalf("RENAMENX onto a live key = %v, %v", moved, err)
	}
	wantValue(t, s, "a", "1")
	wantValue(t, s, "b", "2")
	for _, nx := range []bool{false, true} {
		if moved, err := s.Rename([]byte("a"), []byte("a"), nx); err != nil || moved == nx {
			t.Fatalf("Rename(a, a, nx=%v) = %v, %v", nx, moved, err)
		}
		wantValue(t, s, "a", "1")
	}
	// A destination past its deadline counts as absent.
	mustSet(t, s, "c", "3", SetOptions{StaleUntil: clk.in(time.Second)})
	clk.advance(2 * time.Second)
	if moved, err := s.Rename([]byte("a"), []byte("c"), true); err != nil || !moved {
		t.Fatalf("RENAMENX onto an expired key = %v, %v", moved, err)
	}
	wantValue(t, s, "c", "1")
	checkInvariants(t, s)
}

func TestCopyIsIndependent(t *testing.T) {
	s, clk := newClockStore(t)
	src, dst := keysInTwoShards(s)
	stale := clk.in(time.Hour)
	mustSet(t, s, src, "abc", SetOptions{StaleUntil: stale})
	// Room to append in place, which must not show through the copy.
	s.Update([]byte(src), func(old []byte, _ bool) ([]byte, error) {
		return append(make([]byte, 0, 64), old...), nil
	})
	if ok, err := s.Copy([]byte(src), nil, []byte(dst), false); err != nil || !ok {
		t.Fatalf("Copy = %v, %v", ok, err)
	}
	for _, k := range []string{src, dst} {
		s.Update([]byte(k), func(old []byte, _ bool) ([]byte, error) { return append(old, k...), nil })
	}
	wantValue(t, s, src, "abc"+src)
	wantValue(t, s, dst, "abc"+dst)
	if env, _ := s.Peek([]byte(dst)); env.StaleUntil != stale {
		t.Fatalf("the copy's deadline is %d, want %d", env.StaleUntil, stale)
	}
	if ok, _ := s.Copy([]byte(src), nil, []byte(dst), false); ok {
		t.Fatal("Copy onto a live key without replace copied")
	}
	if ok, _ := s.Copy([]byte(src), nil, []byte(dst), true); !ok {
		t.Fatal("Copy with replace did not copy")
	}
	wantValue(t, s, dst, "abc"+src)
	if ok, err := s.Copy([]byte("missing"), nil, []byte(dst), true); ok || err != nil {
		t.Fatalf("Copy of a missing key = %v, %v", ok, err)
	}
	if n := s.Volatile(); n != 2 {
		t.Fatalf("Volatile = %d, want 2", n)
	}
	checkInvariants(t, s)
}

func TestRenameAndCopyFenceFills(t *testing.T) {
	s := newStore(t, Options{})
	set(t, s, "src", "v")
	fDst, fSrc := s.Fence([]byte("dst")), s.Fence([]byte("src"))
	if moved, err := s.Rename([]byte("src"), []byte("dst"), false); err != nil || !moved {
		t.Fatalf("Rename = %v, %v", moved, err)
	}
	if fill(t, s, "dst", "loaded", fDst) {
		t.Fatal("a fill of the destination was stored over the renamed key")
	}
	if fill(t, s, "src", "loaded", fSrc) {
		t.Fatal("a fill of the source was stored after the rename deleted it")
	}
	wantValue(t, s, "dst", "v")
	wantMiss(t, s, "src")

	f := s.Fence([]byte("copy"))
	if ok, _ := s.Copy([]byte("dst"), nil, []byte("copy"), false); !ok {
		t.Fatal("Copy did not copy")
	}
	if fill(t, s, "copy", "loaded", f) {
		t.Fatal("a fill of the destination was stored over the copy")
	}
	wantValue(t, s, "copy", "v")
}

func TestRenameTooLarge(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	value := make([]byte, 1<<20-EntryOverhead-1)
	if _, err := s.Set([]byte("k"), value, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rename([]byte("k"), []byte("longer"), false); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Rename to a longer key past the bound: %v", err)
	}
	if _, ok := s.Get([]byte("k")); !ok {
		t.Fatal("a refused rename removed its source")
	}
}

// TestRenameConcurrent moves keys around in a ring while others read them:
// no key is lost or duplicated, and the bookkeeping holds.
func TestRenameConcurrent(t *testing.T) {
	s := newStore(t, Options{})
	const n = 8
	name := func(i int) []byte { return []byte("ring" + strconv.Itoa(i%n)) }
	for i := 0; i < n; i += 2 {
		set(t, s, string(name(i)), strconv.Itoa(i))
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				from := w + i
				s.Rename(name(from), name(from+1), true)
				s.Get(name(from + 2))
			}
		}()
	}
	wg.Wait()
	if got := s.Len(); got != n/2 {
		t.Fatalf("%d keys after the renames, want %d", got, n/2)
	}
	seen := make(map[string]bool)
	for i := range n {
		if v, ok := s.Get(name(i)); ok {
			if seen[string(v)] {
				t.Fatalf("value %q is under two keys", v)
			}
			seen[string(v)] = true
		}
	}
	checkInvariants(t, s)
}

func TestCostAndLookupNoTouch(t *testing.T) {
	s := newStore(t, Options{})
	set(t, s, "key", "value")
	if c, ok := s.Cost([]byte("key")); !ok || c != int64(len("key")+len("value"))+EntryOverhead {
		t.Fatalf("Cost = %d, %v", c, ok)
	}
	if _, ok := s.Cost([]byte("nope")); ok {
		t.Fatal("Cost of a missing key")
	}
	before := s.Stats()
	if env, ok := s.LookupNoTouch([]byte("key")); !ok || string(env.Value) != "value" {
		t.Fatalf("LookupNoTouch = %q, %v", env.Value, ok)
	}
	s.LookupNoTouch([]byte("nope"))
	after := s.Stats()
	if after.Hits != before.Hits+1 || after.Misses != before.Misses+1 {
		t.Fatalf("hits %d->%d, misses %d->%d", before.Hits, after.Hits, before.Misses, after.Misses)
	}
}
