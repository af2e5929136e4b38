package engine

import (
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
				s.DeleteMulti(keys)
			case 3:
				s.Flush(false)
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
	if n := s.DeleteMulti([][]byte{[]byte("a"), []byte("nope"), []byte("b"), []byte("a")}); n != 2 {
		t.Errorf("DeleteMulti = %d, want 2", n)
	}
	wantMiss(t, s, "a")
	wantMiss(t, s, "b")
	checkInvariants(t, s)
}
