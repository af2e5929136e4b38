package engine

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// keysInShards returns n keys of different shards.
func keysInShards(s *Store, n int) [][]byte {
	var keys [][]byte
	seen := map[*shard]bool{}
	for i := 0; len(keys) < n; i++ {
		k := []byte("k" + strconv.Itoa(i))
		if sh := s.shardFor(k); !seen[sh] {
			seen[sh] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// TestReadMultiSeesWritesWhole: readers of two keys in different shards,
// which every write changes together (SetMulti, DeleteMulti, Flush), never
// see one key changed and the other not yet. Reading the keys one at a time
// (Get, Get) does, between the two reads: MGET did, with FLUSHALL.
func TestReadMultiSeesWritesWhole(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	keys := keysInShards(s, 2)
	writes := underRace(20000, 4000)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(done)
		for i := range writes {
			v := []byte(strconv.Itoa(i))
			switch i % 4 {
			case 0, 1:
				if _, err := s.SetMulti([][]byte{keys[0], v, keys[1], v}, Always); err != nil {
					t.Error(err)
					return
				}
			case 2:
				s.DeleteMulti(keys, nil)
			case 3:
				s.FlushAll()
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			for reads := 0; ; reads++ {
				select {
				case <-done:
					return
				default:
				}
				var got [2]string
				n := s.ReadMulti(keys, ReadAll, func(i int, _ Type, v []byte, found bool) {
					got[i] = "<nil>"
					if found {
						got[i] = string(v)
					}
				})
				if got[0] != got[1] || (n == 1) {
					t.Errorf("read %d: %s=%s %s=%s (%d live): half of a write", reads, keys[0], got[0], keys[1], got[1], n)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestReadMultiModes: ReadMulti reports each key in order, counts hits and
// misses only when asked, and removes expired keys as a read does.
func TestReadMultiModes(t *testing.T) {
	s, clk := newClockStore(t)
	set(t, s, "a", "1")
	mustSet(t, s, "e", "2", SetOptions{StaleUntil: clk.in(1e9)})
	keys := [][]byte{[]byte("a"), []byte("nope"), []byte("e"), []byte("a")}
	read := func(mode ReadMode) (string, int) {
		var out string
		n := s.ReadMulti(keys, mode, func(i int, _ Type, v []byte, found bool) {
			out += fmt.Sprintf("%d:%s:%v ", i, v, found)
		})
		return out, n
	}
	if got, n := read(0); got != "0:1:true 1::false 2:2:true 3:1:true " || n != 3 {
		t.Errorf("ReadMulti = %q, %d", got, n)
	}
	if st := s.Stats(); st.Hits != 0 || st.Misses != 0 {
		t.Errorf("ReadMulti without ReadCounts counted: %+v", st)
	}
	clk.advance(1e9)
	if got, n := read(ReadCounts); got != "0:1:true 1::false 2::false 3:1:true " || n != 2 {
		t.Errorf("ReadMulti past e's deadline = %q, %d", got, n)
	}
	if st := s.Stats(); st.Hits != 2 || st.Misses != 2 {
		t.Errorf("ReadCounts: hits %d misses %d, want 2 and 2", st.Hits, st.Misses)
	}
	if n := s.Stats().Expired; n != 0 {
		t.Errorf("without ReadExpires the expired key went: Expired = %d", n)
	}
	read(ReadAll)
	if n := s.Stats().Expired; n != 1 {
		t.Errorf("ReadAll left the expired key: Expired = %d", n)
	}
}

// TestDeleteMulti: DeleteMulti removes the live keys and counts each once.
func TestDeleteMulti(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	set(t, s, "a", "1")
	set(t, s, "b", "2")
	if n := s.DeleteMulti([][]byte{[]byte("a"), []byte("nope"), []byte("b"), []byte("a")}, nil); n != 2 {
		t.Errorf("DeleteMulti = %d, want 2", n)
	}
	wantMiss(t, s, "a")
	wantMiss(t, s, "b")
	checkInvariants(t, s)
}

// TestDeriveIsOneChange: Derive reads its sources and writes its result at
// one instant. The writers keep two keys in different shards equal (SetMulti)
// and Derive copies one onto the other, so a reader of both at one instant
// (ReadMulti) always sees them equal; a Derive that wrote what it had read
// before a SetMulti came between would leave them different.
func TestDeriveIsOneChange(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	keys := keysInShards(s, 2)
	src, dst := keys[0], keys[1]
	rounds := underRace(20000, 4000)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		for i := range rounds {
			v := []byte(strconv.Itoa(i))
			if _, err := s.SetMulti([][]byte{src, v, dst, v}, Always); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		defer close(done)
		for range rounds {
			_, _, err := s.Derive(dst, [][]byte{src}, ReadAll, func(v [][]byte) []byte { return bytes.Clone(v[0]) })
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			var seen [2]string
			s.ReadMulti([][]byte{src, dst}, 0, func(i int, _ Type, v []byte, _ bool) { seen[i] = string(v) })
			if seen[0] != seen[1] {
				t.Errorf("source %q and destination %q differ: a write came between Derive's read and its write", seen[0], seen[1])
				return
			}
		}
	})
	wg.Wait()
}

func TestDerive(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 1 << 20, Now: clk.Now, ExpireInterval: noSweep})
	concat := func(v [][]byte) []byte { return bytes.Join(v, nil) }
	mustSet(t, s, "a", "x", SetOptions{})
	mustSet(t, s, "d", "old", SetOptions{StaleUntil: clk.in(10e9)})
	if n, existed, err := s.Derive([]byte("d"), [][]byte{[]byte("a"), []byte("missing"), []byte("a")}, ReadAll, concat); n != 2 || !existed || err != nil {
		t.Fatalf("Derive = %d, %v, %v; want 2, true, nil", n, existed, err)
	}
	wantValue(t, s, "d", "xx")
	if env, _ := s.Peek([]byte("d")); env.StaleUntil != 0 {
		t.Errorf("Derive kept the destination's deadline: %+v", env)
	}
	if _, err := s.LPush([]byte("l"), [][]byte{[]byte("e")}, true, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Derive([]byte("d"), [][]byte{[]byte("a"), []byte("l")}, ReadAll, concat); err != ErrWrongType {
		t.Fatalf("Derive of a list = %v, want ErrWrongType", err)
	}
	wantValue(t, s, "d", "xx")
	// An empty result deletes the destination, whatever type it held.
	if n, existed, err := s.Derive([]byte("l"), [][]byte{[]byte("missing")}, ReadAll, concat); n != 0 || !existed || err != nil {
		t.Fatalf("Derive of nothing = %d, %v, %v; want 0, true, nil", n, existed, err)
	}
	if _, ok := s.TypeOf([]byte("l")); ok {
		t.Error("an empty result left the destination")
	}
}
