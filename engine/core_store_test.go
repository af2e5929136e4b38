package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

func TestNewDefaults(t *testing.T) {
	s := newStore(t, Options{})
	if got := s.MaxMemory(); got != DefaultMaxMemory {
		t.Errorf("MaxMemory() = %d, want %d", got, DefaultMaxMemory)
	}
	if st := s.Stats(); st.MaxCost != DefaultMaxMemory || st.Cost != 0 {
		t.Errorf("Stats() = %+v, want MaxCost %d and Cost 0", st, DefaultMaxMemory)
	}
	set(t, s, "k", "v")
	wantValue(t, s, "k", "v")
}

func TestReadYourWritesConcurrent(t *testing.T) {
	writers, perWriter := 50, 2000
	if raceEnabled {
		perWriter = 1000 // keeps the package's tests well under 20s
	}
	s := newStore(t, Options{MaxMemory: 256 << 20})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				key := fmt.Sprintf("w%02d:k%05d", w, i)
				val := "value-of-" + key
				res, err := s.Set([]byte(key), []byte(val), SetOptions{})
				if err != nil || !res.Written || res.HadOld {
					t.Errorf("Set(%q) = %+v, %v; want a fresh write", key, res, err)
					return
				}
				got, ok := s.Get([]byte(key))
				if !ok || string(got) != val {
					t.Errorf("Get(%q) right after Set = %q, %v; want %q", key, got, ok, val)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for w := range writers {
		for i := range perWriter {
			key := fmt.Sprintf("w%02d:k%05d", w, i)
			wantValue(t, s, key, "value-of-"+key)
		}
	}
	if n := s.Len(); n != writers*perWriter {
		t.Errorf("Len() = %d, want %d", n, writers*perWriter)
	}
	st := s.Stats()
	if st.Evicted != 0 {
		t.Errorf("Stats() = %+v; nothing should be evicted", st)
	}
	checkInvariants(t, s)
}

func TestOverwriteIsVisibleImmediately(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 1000 {
				key := []byte(fmt.Sprintf("g%d:fresh:%d", g, i))
				if _, err := s.Set(key, []byte("1"), SetOptions{}); err != nil {
					t.Error(err)
					return
				}
				res, err := s.Set(key, []byte("2"), SetOptions{Get: true})
				if err != nil || !res.HadOld || string(res.Old) != "1" {
					t.Errorf("second Set(%q) = %+v, %v; want Old \"1\"", key, res, err)
					return
				}
				if got, ok := s.Get(key); !ok || string(got) != "2" {
					t.Errorf("Get(%q) after Set 1, Set 2 = %q, %v; want \"2\"", key, got, ok)
					return
				}
			}
		})
	}
	wg.Wait()
	checkInvariants(t, s)
}

func TestSetDeleteGet(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	for i := range 1000 {
		key := []byte("del:" + strconv.Itoa(i))
		if _, err := s.Set(key, []byte("x"), SetOptions{}); err != nil {
			t.Fatal(err)
		}
		if !s.Delete(key) {
			t.Fatalf("Delete(%q) = false right after Set", key)
		}
		if got, ok := s.Get(key); ok {
			t.Fatalf("Get(%q) after Delete = %q, want a miss", key, got)
		}
		if s.Delete(key) {
			t.Fatalf("second Delete(%q) = true", key)
		}
	}
	if n := s.Len(); n != 0 {
		t.Errorf("Len() = %d after deleting everything", n)
	}
	if st := s.Stats(); st.Cost != 0 {
		t.Errorf("Stats().Cost = %d after deleting everything, want 0", st.Cost)
	}
	checkInvariants(t, s)
}

func TestGetDel(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	set(t, s, "k", "v")
	v, ok := s.GetDel([]byte("k"))
	if !ok || string(v) != "v" {
		t.Fatalf("GetDel = %q, %v; want \"v\", true", v, ok)
	}
	wantMiss(t, s, "k")
	if v, ok := s.GetDel([]byte("k")); ok || v != nil {
		t.Fatalf("GetDel of a missing key = %q, %v", v, ok)
	}
}

func TestConcurrentSetDeleteSameKeys(t *testing.T) {
	// Writers and deleters race on a small key set; the costs must end up
	// exactly those of the entries left in the maps.
	s := newStore(t, Options{MaxMemory: 64 << 20})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 5000 {
				key := []byte("k" + strconv.Itoa(r.IntN(64)))
				if r.IntN(2) == 0 {
					if _, err := s.Set(key, bytes.Repeat([]byte("v"), r.IntN(50)), SetOptions{}); err != nil {
						t.Error(err)
						return
					}
				} else {
					s.Delete(key)
				}
			}
		})
	}
	wg.Wait()
	checkInvariants(t, s)
}

func TestSetCopiesKeyAndValue(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	key := []byte("key")
	val := []byte("value")
	if _, err := s.Set(key, val, SetOptions{}); err != nil {
		t.Fatal(err)
	}
	copy(key, "XXX")
	copy(val, "XXXXX")
	wantValue(t, s, "key", "value")
	wantMiss(t, s, "XXX")

	pairs := [][]byte{[]byte("a"), []byte("1"), []byte("b"), []byte("2")}
	if ok, err := s.SetMulti(pairs, Always); !ok || err != nil {
		t.Fatalf("SetMulti = %v, %v", ok, err)
	}
	for _, p := range pairs {
		p[0] = 'Z'
	}
	wantValue(t, s, "a", "1")
	wantValue(t, s, "b", "2")
}

func TestSetEmptyValue(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	for _, v := range [][]byte{nil, {}} {
		if _, err := s.Set([]byte("empty"), v, SetOptions{}); err != nil {
			t.Fatal(err)
		}
		got, ok := s.Get([]byte("empty"))
		if !ok || got == nil || len(got) != 0 {
			t.Fatalf("Get after Set(%#v) = %#v, %v; want a non-nil empty value", v, got, ok)
		}
	}
	// The empty key is a key like any other.
	set(t, s, "", "empty key")
	wantValue(t, s, "", "empty key")
	if n := s.Len(); n != 2 {
		t.Errorf("Len() = %d, want 2", n)
	}
}

func TestSetConditions(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})

	res := mustSet(t, s, "k", "v1", SetOptions{Condition: IfPresent, Get: true})
	if res.Written || res.HadOld || res.Old != nil {
		t.Errorf("IfPresent on a missing key = %+v, want nothing written", res)
	}
	wantMiss(t, s, "k")

	res = mustSet(t, s, "k", "v1", SetOptions{Condition: IfAbsent, Get: true})
	if !res.Written || res.HadOld || res.Old != nil {
		t.Errorf("IfAbsent on a missing key = %+v, want written with no old value", res)
	}
	wantValue(t, s, "k", "v1")

	res = mustSet(t, s, "k", "v2", SetOptions{Condition: IfAbsent, Get: true})
	if res.Written || !res.HadOld || string(res.Old) != "v1" {
		t.Errorf("IfAbsent on an existing key = %+v, want not written, Old v1", res)
	}
	wantValue(t, s, "k", "v1")

	res = mustSet(t, s, "k", "v3", SetOptions{Condition: IfPresent, Get: true})
	if !res.Written || !res.HadOld || string(res.Old) != "v1" {
		t.Errorf("IfPresent on an existing key = %+v, want written, Old v1", res)
	}
	wantValue(t, s, "k", "v3")

	// Without Get, the old value is not copied out.
	if res := mustSet(t, s, "k", "v3", SetOptions{}); res.Old != nil || !res.HadOld {
		t.Errorf("Set without Get = %+v, want HadOld and no Old", res)
	}
	res = mustSet(t, s, "k", "v4", SetOptions{Get: true})
	if !res.Written || !res.HadOld || string(res.Old) != "v3" {
		t.Errorf("Always on an existing key = %+v, want written, Old v3", res)
	}
	wantValue(t, s, "k", "v4")

	// The old value handed out is not changed by the overwrite.
	old := res.Old
	mustSet(t, s, "k", "v5", SetOptions{})
	if string(old) != "v3" {
		t.Errorf("Old value changed to %q by a later Set", old)
	}
}

func TestSetIfAbsentConcurrentOneWinner(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	for round := range 50 {
		key := []byte("lock:" + strconv.Itoa(round))
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners []int
		for g := range 8 {
			wg.Go(func() {
				res, err := s.Set(key, []byte(strconv.Itoa(g)), SetOptions{Condition: IfAbsent})
				if err != nil {
					t.Error(err)
				}
				if res.Written {
					mu.Lock()
					winners = append(winners, g)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: %d IfAbsent Sets succeeded, want 1", round, len(winners))
		}
		wantValue(t, s, string(key), strconv.Itoa(winners[0]))
	}
}

func TestSetFill(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	fill := &FillMeta{Loader: "http", ETag: `"abc"`, LastModified: "yesterday", LoadTime: 1500 * time.Millisecond}
	mustSet(t, s, "k", "v", SetOptions{Fill: fill})
	env, ok := s.Lookup([]byte("k"))
	if !ok || env.Fill == nil || *env.Fill != *fill {
		t.Fatalf("Lookup = %+v, %v; want Fill %+v", env, ok, fill)
	}
	// A plain write replaces the fill's metadata.
	mustSet(t, s, "k", "w", SetOptions{})
	if env, _ := s.Lookup([]byte("k")); env.Fill != nil {
		t.Errorf("Fill = %+v after a plain Set, want nil", env.Fill)
	}
}

func TestErrTooLarge(t *testing.T) {
	const maxMem = 4096
	s := newStore(t, Options{MaxMemory: maxMem})
	key := []byte("big")
	tooBig := make([]byte, maxMem-EntryOverhead-len(key)+1)
	fits := tooBig[:len(tooBig)-1] // costs exactly maxMem

	if _, err := s.Set(key, tooBig, SetOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Set of a %d-byte value: err = %v, want ErrTooLarge", len(tooBig), err)
	}
	wantMiss(t, s, "big")

	set(t, s, "small", "v")
	if ok, err := s.SetMulti([][]byte{[]byte("a"), []byte("1"), key, tooBig}, Always); ok || !errors.Is(err, ErrTooLarge) {
		t.Errorf("SetMulti with a too large pair = %v, %v; want false, ErrTooLarge", ok, err)
	}
	wantMiss(t, s, "a") // nothing of the call is written
	wantMiss(t, s, "big")
	if ok, err := s.SetMulti([][]byte{key, tooBig}, IfAbsent); ok || !errors.Is(err, ErrTooLarge) {
		t.Errorf("SetMulti IfAbsent with a too large pair = %v, %v; want false, ErrTooLarge", ok, err)
	}

	if _, err := s.Update([]byte("small"), func(old []byte, _ bool) ([]byte, error) {
		return append(old, tooBig...), nil
	}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Update to a too large value: err = %v, want ErrTooLarge", err)
	}
	wantValue(t, s, "small", "v")
	if _, err := s.Update(key, func([]byte, bool) ([]byte, error) { return tooBig, nil }); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Update creating a too large value: err = %v, want ErrTooLarge", err)
	}
	wantMiss(t, s, "big")

	// An entry costing exactly MaxMemory is allowed, and is admitted into
	// the otherwise empty store.
	s.Delete([]byte("small"))
	if _, err := s.Set(key, fits, SetOptions{}); err != nil {
		t.Fatalf("Set of an entry costing exactly MaxMemory: %v", err)
	}
	if got, ok := s.Get(key); !ok || len(got) != len(fits) {
		t.Errorf("entry costing exactly MaxMemory: Get = %d bytes, %v", len(got), ok)
	}
	checkInvariants(t, s)
}

func TestSetMaxMemory(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	s.SetMaxMemory(4096)
	if got := s.MaxMemory(); got != 4096 {
		t.Fatalf("MaxMemory() = %d after SetMaxMemory(4096)", got)
	}
	if got := s.Stats().MaxCost; got != 4096 {
		t.Errorf("Stats().MaxCost = %d after SetMaxMemory(4096)", got)
	}
	// The bound that ErrTooLarge enforces moves with the memory bound: an
	// entry bigger than the new bound cannot be stored, so the write must
	// fail rather than be acknowledged and then dropped.
	big := make([]byte, 8192)
	if _, err := s.Set([]byte("big"), big, SetOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Set of %d bytes with MaxMemory 4096: err = %v, want ErrTooLarge", len(big), err)
	}

	// Growing the bound admits entries the original bound refused.
	huge := make([]byte, 2<<20)
	s.SetMaxMemory(8 << 20)
	if _, err := s.Set([]byte("huge"), huge, SetOptions{}); err != nil {
		t.Fatalf("Set of 2 MiB with MaxMemory 8 MiB: %v", err)
	}
	if got, ok := s.Get([]byte("huge")); !ok || len(got) != len(huge) {
		t.Errorf("Get(huge) = %d bytes, %v after it was written", len(got), ok)
	}

	s.SetMaxMemory(0)
	if got := s.MaxMemory(); got != 0 {
		t.Errorf("MaxMemory() = %d after SetMaxMemory(0), want 0 (no bound)", got)
	}
}

// TestNoMaxMemory: a store without a bound (Redis's maxmemory 0) reports
// 0, refuses no entry for its size, evicts nothing even under noeviction's
// check, and lifts Go's memory limit rather than deriving one from 0.
func TestNoMaxMemory(t *testing.T) {
	s := newStore(t, Options{MaxMemory: NoMaxMemory, Policy: NoEviction})
	if got := s.MaxMemory(); got != 0 {
		t.Fatalf("MaxMemory() = %d with NoMaxMemory, want 0", got)
	}
	if got := s.Stats().MaxCost; got != 0 {
		t.Errorf("Stats().MaxCost = %d with NoMaxMemory, want 0", got)
	}
	if got := s.processLimit(); got != math.MaxInt64 {
		t.Errorf("processLimit() = %d with no bound, want math.MaxInt64 (no limit)", got)
	}
	big := make([]byte, 4<<20)
	for i := range 4 {
		if _, err := s.Set([]byte(fmt.Sprint("big", i)), big, SetOptions{}); err != nil {
			t.Fatalf("Set %d of 4 MiB with no bound: %v", i, err)
		}
	}
	// A bound set at run time applies, and 0 lifts it again.
	s.SetMaxMemory(1 << 20)
	if _, err := s.Set([]byte("big"), big, SetOptions{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Set of 4 MiB under a 1 MiB bound: err = %v, want ErrTooLarge", err)
	}
	s.SetMaxMemory(0)
	if _, err := s.Set([]byte("big"), big, SetOptions{}); err != nil {
		t.Errorf("Set of 4 MiB after SetMaxMemory(0): %v", err)
	}
	checkInvariants(t, s)
}

func TestSetMaxMemoryShrinkEvicts(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 8 << 20})
	val := make([]byte, 100)
	for i := range 5000 {
		if _, err := s.Set([]byte(fmt.Sprintf("k%05d", i)), val, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 5000 {
		t.Fatalf("Len() = %d before shrinking, want 5000", n)
	}
	const small = 256 << 10
	s.SetMaxMemory(small)
	for i := range 2000 {
		if _, err := s.Set([]byte(fmt.Sprintf("n%05d", i)), val, SetOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	st := s.Stats()
	if st.Cost > small {
		t.Errorf("Cost = %d after shrinking to %d and writing", st.Cost, small)
	}
	if st.Evicted == 0 {
		t.Errorf("nothing evicted after shrinking: %+v", st)
	}
	if got := int64(s.Len()) * entryCost(6, 100); got > small {
		t.Errorf("%d live entries cost %d, more than MaxMemory %d", s.Len(), got, small)
	}
	checkInvariants(t, s)
}

func TestMemoryBound(t *testing.T) {
	const (
		maxMem  = 1 << 20
		writers = 4
		perW    = 12500
		valLen  = 100
	)
	s := newStore(t, Options{MaxMemory: maxMem})
	keyOf := func(w, i int) string { return fmt.Sprintf("w%d:%07d", w, i) } // 10 bytes
	valOf := func(key string) []byte {
		v := bytes.Repeat([]byte{'.'}, valLen)
		copy(v, key)
		return v
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perW {
				key := keyOf(w, i)
				if _, err := s.Set([]byte(key), valOf(key), SetOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	testwait.For(t, "Cost <= MaxCost", func() bool {
		st := s.Stats()
		return st.Cost <= st.MaxCost
	})

	st := s.Stats()
	if st.Evicted == 0 {
		t.Errorf("wrote %d bytes into %d but nothing was evicted or rejected: %+v",
			writers*perW*(valLen+10), maxMem, st)
	}
	found := 0
	for w := range writers {
		for i := range perW {
			key := keyOf(w, i)
			got, ok := s.Get([]byte(key))
			if !ok {
				continue
			}
			found++
			if !bytes.Equal(got, valOf(key)) {
				t.Fatalf("Get(%q) = %q, want its own value", key, got)
			}
		}
	}
	n := s.Len()
	if n != found {
		t.Errorf("Len() = %d, but Get finds %d keys", n, found)
	}
	if k := len(s.Keys([]byte("*"))); k != n {
		t.Errorf("len(Keys(*)) = %d, Len() = %d", k, n)
	}
	if n == 0 {
		t.Errorf("everything was evicted")
	}
	perEntry := entryCost(10, valLen)
	if used := int64(n) * perEntry; used > maxMem {
		t.Errorf("%d live entries cost %d bytes, more than MaxMemory %d", n, used, maxMem)
	}
	if got := st.Evicted + int64(n); got != writers*perW {
		t.Errorf("evicted %d + live %d = %d, want the %d keys written",
			st.Evicted, n, got, writers*perW)
	}
	checkInvariants(t, s)
}

func TestCostMatchesEntriesUnderChurn(t *testing.T) {
	// Every kind of write races on a small key space, some changing the size
	// of entries already held, with and without memory pressure. When the
	// writes stop, the store must be charged exactly for the entries in the
	// maps.
	for _, maxMem := range []int64{64 << 20, 64 << 10} {
		t.Run(strconv.FormatInt(maxMem, 10), func(t *testing.T) {
			s := newStore(t, Options{MaxMemory: maxMem})
			var wg sync.WaitGroup
			for g := range 6 {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 2))
					val := make([]byte, 400)
					for range 6000 {
						key := []byte("k" + strconv.Itoa(r.IntN(500)))
						var err error
						switch r.IntN(8) {
						case 0, 1, 2:
							_, err = s.Set(key, val[:r.IntN(len(val))], SetOptions{})
						case 3:
							_, err = s.Update(key, func(old []byte, _ bool) ([]byte, error) {
								if len(old) > 300 {
									return old[:0:0], nil
								}
								return append(old, "0123456789"...), nil
							})
						case 4:
							k2 := []byte("k" + strconv.Itoa(r.IntN(500)))
							_, err = s.SetMulti([][]byte{key, val[:r.IntN(50)], k2, val[:r.IntN(50)]}, Condition(r.IntN(2)))
						case 5:
							s.Delete(key)
						case 6:
							s.Get(key)
						case 7:
							_, err = s.Set(key, val[:r.IntN(len(val))], SetOptions{Condition: IfPresent, KeepTTL: true})
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			checkInvariants(t, s)
		})
	}
}

func TestNoCrossKeyConfusion(t *testing.T) {
	// Values are derived from their key; under concurrent writes, deletes
	// and evictions no read may ever return another key's value.
	for _, maxMem := range []int64{64 << 20, 128 << 10} {
		t.Run(strconv.FormatInt(maxMem, 10), func(t *testing.T) {
			s := newStore(t, Options{MaxMemory: maxMem})
			const nkeys = 3000
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() { // writers
					r := rand.New(rand.NewPCG(uint64(g), 3))
					for gen := range 5000 {
						i := r.IntN(nkeys)
						key := fmt.Sprintf("key:%d", i)
						switch r.IntN(10) {
						case 0:
							s.Delete([]byte(key))
						case 1:
							s.SetMulti([][]byte{[]byte(key), []byte(fmt.Sprintf("val:%s:%d", key, gen))}, Always)
						default:
							val := fmt.Sprintf("val:%s:%d:%s", key, gen, strings.Repeat("x", r.IntN(30)))
							if _, err := s.Set([]byte(key), []byte(val), SetOptions{}); err != nil {
								t.Error(err)
								return
							}
						}
					}
				})
				wg.Go(func() { // readers
					r := rand.New(rand.NewPCG(uint64(g), 4))
					for range 10000 {
						key := fmt.Sprintf("key:%d", r.IntN(nkeys))
						v, ok := s.Get([]byte(key))
						if ok && !strings.HasPrefix(string(v), "val:"+key+":") {
							t.Errorf("Get(%q) = %q, another key's value", key, v)
							return
						}
						if env, ok := s.Peek([]byte(key)); ok && !strings.HasPrefix(string(env.Value), "val:"+key+":") {
							t.Errorf("Peek(%q) = %q, another key's value", key, env.Value)
							return
						}
					}
				})
			}
			wg.Wait()
			for _, k := range s.Keys([]byte("*")) {
				if v, ok := s.Get([]byte(k)); ok && !strings.HasPrefix(string(v), "val:"+k+":") {
					t.Errorf("Get(%q) = %q, another key's value", k, v)
				}
			}
			checkInvariants(t, s)
		})
	}
}

func TestSetMulti(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 1 << 20, Now: clk.Now, ExpireInterval: noSweep})
	kv := func(s ...string) [][]byte {
		out := make([][]byte, len(s))
		for i := range s {
			out[i] = []byte(s[i])
		}
		return out
	}

	mustSet(t, s, "a", "old", SetOptions{StaleUntil: clk.in(10e9), Fill: &FillMeta{Loader: "l"}})
	if ok, err := s.SetMulti(kv("a", "1", "b", "2", "c", "3"), Always); !ok || err != nil {
		t.Fatalf("SetMulti Always = %v, %v", ok, err)
	}
	wantValue(t, s, "a", "1")
	wantValue(t, s, "b", "2")
	wantValue(t, s, "c", "3")
	// MSET clears an existing key's deadline and fill metadata.
	if env, _ := s.Peek([]byte("a")); env.StaleUntil != 0 || env.FreshUntil != 0 || env.Fill != nil {
		t.Errorf("after SetMulti, a's envelope = %+v, want no deadline and no fill", env)
	}
	if n := s.Volatile(); n != 0 {
		t.Errorf("Volatile() = %d after SetMulti cleared the only deadline", n)
	}

	// A repeated key takes its last value, as in MSET.
	if ok, _ := s.SetMulti(kv("d", "1", "d", "2"), Always); !ok {
		t.Fatal("SetMulti with a repeated key failed")
	}
	wantValue(t, s, "d", "2")

	// IfAbsent writes nothing if any key exists.
	if ok, err := s.SetMulti(kv("x", "1", "y", "2", "a", "3"), IfAbsent); ok || err != nil {
		t.Fatalf("SetMulti IfAbsent with an existing key = %v, %v; want false", ok, err)
	}
	wantMiss(t, s, "x")
	wantMiss(t, s, "y")
	wantValue(t, s, "a", "1")

	if ok, err := s.SetMulti(kv("x", "1", "y", "2"), IfAbsent); !ok || err != nil {
		t.Fatalf("SetMulti IfAbsent with new keys = %v, %v; want true", ok, err)
	}
	wantValue(t, s, "x", "1")
	wantValue(t, s, "y", "2")

	// An expired key counts as absent.
	mustSet(t, s, "e", "old", SetOptions{StaleUntil: clk.in(1e9)})
	clk.advance(2e9)
	if ok, _ := s.SetMulti(kv("e", "new", "f", "1"), IfAbsent); !ok {
		t.Fatal("SetMulti IfAbsent over an expired key = false, want true")
	}
	wantValue(t, s, "e", "new")
	if env, _ := s.Peek([]byte("e")); env.StaleUntil != 0 {
		t.Errorf("e kept its old deadline: %+v", env)
	}

	if ok, err := s.SetMulti(nil, Always); !ok || err != nil {
		t.Errorf("empty SetMulti = %v, %v", ok, err)
	}
	if n := s.Len(); n != 8 {
		t.Errorf("Len() = %d, want 8", n)
	}
	checkInvariants(t, s)
}

func TestSetMultiIfAbsentConcurrentAllOrNothing(t *testing.T) {
	// Each goroutine tries to claim the shared key together with keys of
	// its own. Exactly one may succeed per round, and the losers must not
	// have written any of their keys.
	s := newStore(t, Options{MaxMemory: 16 << 20})
	const goroutines = 16
	for round := range 30 {
		shared := fmt.Sprintf("shared:%d", round)
		won := make([]bool, goroutines)
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				var pairs [][]byte
				for i := range 5 {
					pairs = append(pairs, []byte(fmt.Sprintf("own:%d:%d:%d", round, g, i)), []byte(strconv.Itoa(g)))
				}
				pairs = append(pairs, []byte(shared), []byte(strconv.Itoa(g)))
				ok, err := s.SetMulti(pairs, IfAbsent)
				if err != nil {
					t.Error(err)
				}
				won[g] = ok
			})
		}
		wg.Wait()
		winner := -1
		for g, ok := range won {
			if ok {
				if winner >= 0 {
					t.Fatalf("round %d: goroutines %d and %d both won", round, winner, g)
				}
				winner = g
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody won", round)
		}
		wantValue(t, s, shared, strconv.Itoa(winner))
		for g := range goroutines {
			for i := range 5 {
				key := fmt.Sprintf("own:%d:%d:%d", round, g, i)
				_, ok := s.Get([]byte(key))
				if ok != (g == winner) {
					t.Fatalf("round %d: %s live = %v, winner was %d", round, key, ok, winner)
				}
			}
		}
	}
}

func TestUpdate(t *testing.T) {
	s, clk := newClockStore(t)

	// A missing key is created without expiry.
	v, err := s.Update([]byte("n"), func(old []byte, exists bool) ([]byte, error) {
		if old != nil || exists {
			t.Errorf("fn(%q, %v) for a missing key", old, exists)
		}
		return []byte("created"), nil
	})
	if err != nil || string(v) != "created" {
		t.Fatalf("Update = %q, %v", v, err)
	}
	wantValue(t, s, "n", "created")
	if env, _ := s.Peek([]byte("n")); env.StaleUntil != 0 || env.FreshUntil != 0 {
		t.Errorf("created key has deadlines: %+v", env)
	}

	// An existing key keeps its deadlines.
	fresh, stale := clk.in(5e9), clk.in(10e9)
	mustSet(t, s, "k", "abc", SetOptions{FreshUntil: fresh, StaleUntil: stale})
	v, err = s.Update([]byte("k"), func(old []byte, exists bool) ([]byte, error) {
		if string(old) != "abc" || !exists {
			t.Errorf("fn(%q, %v), want (\"abc\", true)", old, exists)
		}
		return []byte("xyz"), nil
	})
	if err != nil || string(v) != "xyz" {
		t.Fatalf("Update = %q, %v", v, err)
	}
	env, ok := s.Peek([]byte("k"))
	if !ok || string(env.Value) != "xyz" || env.FreshUntil != fresh || env.StaleUntil != stale {
		t.Errorf("after Update: %+v, %v; want xyz with deadlines %d/%d", env, ok, fresh, stale)
	}

	// An error changes nothing and is returned.
	boom := errors.New("boom")
	v, err = s.Update([]byte("k"), func(old []byte, _ bool) ([]byte, error) {
		return []byte("changed"), boom
	})
	if !errors.Is(err, boom) || v != nil {
		t.Errorf("Update with failing fn = %q, %v; want nil, boom", v, err)
	}
	wantValue(t, s, "k", "xyz")
	if _, err := s.Update([]byte("missing"), func([]byte, bool) ([]byte, error) { return []byte("x"), boom }); !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
	wantMiss(t, s, "missing")

	// An expired key is replaced by a new one without expiry.
	clk.advance(11e9)
	if _, err := s.Update([]byte("k"), func(old []byte, exists bool) ([]byte, error) {
		if old != nil || exists {
			t.Errorf("fn(%q, %v) for an expired key", old, exists)
		}
		return []byte("again"), nil
	}); err != nil {
		t.Fatal(err)
	}
	if env, _ := s.Peek([]byte("k")); string(env.Value) != "again" || env.StaleUntil != 0 {
		t.Errorf("after Update of an expired key: %+v", env)
	}
	if n := s.Volatile(); n != 0 {
		t.Errorf("Volatile() = %d", n)
	}
	checkInvariants(t, s)
}

func TestUpdateAppendDoesNotChangePublishedValues(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	appendFn := func(suffix string) func([]byte, bool) ([]byte, error) {
		return func(old []byte, _ bool) ([]byte, error) { return append(old, suffix...), nil }
	}
	set(t, s, "k", "a")
	var held [][]byte
	var want []string
	for i := range 200 {
		v, _ := s.Get([]byte("k"))
		held = append(held, v)
		want = append(want, string(v))
		suffix := string(rune('a' + i%26))
		if i%7 == 0 {
			// A failed update may scribble past the published length;
			// nobody may see it.
			s.Update([]byte("k"), func(old []byte, _ bool) ([]byte, error) {
				return append(old, "!!!!"...), errors.New("no")
			})
		}
		got, err := s.Update([]byte("k"), appendFn(suffix))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[i]+suffix {
			t.Fatalf("Update returned %q, want %q", got, want[i]+suffix)
		}
	}
	for i, v := range held {
		if string(v) != want[i] {
			t.Fatalf("value %d returned by Get changed from %q to %q", i, want[i], v)
		}
	}
	wantFinal := "a"
	for i := range 200 {
		wantFinal += string(rune('a' + i%26))
	}
	wantValue(t, s, "k", wantFinal)
}

func TestUpdateAppendConcurrentReaders(t *testing.T) {
	// Readers keep the slices they got while a writer appends in place;
	// the bytes within each slice's length must never change.
	s := newStore(t, Options{MaxMemory: 1 << 20})
	set(t, s, "log", "")
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			var held [][]byte
			for {
				select {
				case <-done:
					for _, v := range held {
						for i, c := range v {
							if c != byte('a'+i%26) {
								t.Errorf("byte %d of a held value changed to %q", i, c)
								return
							}
						}
					}
					return
				default:
				}
				if v, ok := s.Get([]byte("log")); ok && len(held) < 5000 {
					held = append(held, v)
				}
			}
		})
	}
	for i := range 3000 {
		if _, err := s.Update([]byte("log"), func(old []byte, _ bool) ([]byte, error) {
			return append(old, byte('a'+i%26)), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
}

func TestStatsHitsMisses(t *testing.T) {
	s, clk := newClockStore(t)
	set(t, s, "a", "1")
	mustSet(t, s, "e", "1", SetOptions{StaleUntil: clk.in(1e9)})
	base := s.Stats()
	if base.Hits != 0 || base.Misses != 0 {
		t.Fatalf("writes counted as reads: %+v", base)
	}

	s.Get([]byte("a"))                          // hit
	s.Get([]byte("nope"))                       // miss
	s.Lookup([]byte("a"))                       // hit
	s.Lookup([]byte("nope"))                    // miss
	s.Peek([]byte("a"))                         // not counted
	s.Peek([]byte("nope"))                      // not counted
	touch(s, "a")                               // not counted
	s.GetEx([]byte("a"), 0, true)               // hit
	s.GetEx([]byte("nope"), clk.in(1e9), false) // miss
	st := s.Stats()
	if st.Hits != 3 || st.Misses != 3 {
		t.Errorf("Stats() = %+v, want 3 hits and 3 misses", st)
	}

	clk.advance(2e9)
	s.Peek([]byte("e"))
	if _, ok := s.Get([]byte("e")); ok {
		t.Error("expired key found")
	}
	st = s.Stats()
	if st.Hits != 3 || st.Misses != 4 {
		t.Errorf("Stats() = %+v, want 3 hits and 4 misses after reading an expired key", st)
	}
	if st.Expired != 1 {
		t.Errorf("Stats().Expired = %d, want 1", st.Expired)
	}
}

func TestTouch(t *testing.T) {
	s, clk := newClockStore(t)
	set(t, s, "a", "1")
	mustSet(t, s, "e", "1", SetOptions{StaleUntil: clk.in(1e9)})
	if !touch(s, "a") || !touch(s, "e") {
		t.Error("Touch of a live key = false")
	}
	if touch(s, "nope") {
		t.Error("Touch of a missing key = true")
	}
	clk.advance(1e9)
	if touch(s, "e") {
		t.Error("Touch of an expired key = true")
	}
}

// TestCostUpdatesAreNeverDropped: a flood of cost changes from several
// writers (values rewritten at random sizes) is charged exactly.
func TestCostUpdatesAreNeverDropped(t *testing.T) {
	const keys = 1000
	perWriter := underRace(40000, 15000)
	s := newStore(t, Options{MaxMemory: 256 << 20, ExpireInterval: noSweep})
	for i := range keys {
		set(t, s, "k"+strconv.Itoa(i), "v")
	}
	value := make([]byte, 300)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range perWriter {
				key := []byte("k" + strconv.Itoa(r.IntN(keys)))
				if _, err := s.Set(key, value[:r.IntN(len(value))], SetOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	checkInvariants(t, s)
}

// TestWriteAfterCloseReturns: a write that comes after Close, such as a
// read-through fill finishing during shutdown, returns.
func TestWriteAfterCloseReturns(t *testing.T) {
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	done := make(chan struct{})
	go func() {
		s.Set([]byte("late"), []byte("v"), SetOptions{})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Set after Close did not return")
	}
}

// TestReadsKeepHotKeys: under allkeys-lfu, reads count in the frequency
// sketch, so keys read often outlive a churn of keys written once and never
// read, which would otherwise push them out in turn, however full the
// store was when they were read.
func TestReadsKeepHotKeys(t *testing.T) {
	const (
		hot    = 2000
		bound  = 6000 // entries
		reads  = 40
		churn  = 40000
		valLen = 100
	)
	for _, tc := range []struct {
		name   string
		filler int // keys written once before the hot keys are read
	}{
		{"read in a store a third full", 0},
		{"read in a store nearly full", 3500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, Options{MaxMemory: bound * entryCost(10, valLen)})
			value := bytes.Repeat([]byte{'v'}, valLen)
			hotKey := func(i int) []byte { return fmt.Appendf(nil, "hot:%06d", i) } // 10 bytes
			for i := range tc.filler {
				if _, err := s.Set(fmt.Appendf(nil, "old:%06d", i), value, SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range hot {
				if _, err := s.Set(hotKey(i), value, SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			for range reads {
				for i := range hot {
					if _, ok := s.Get(hotKey(i)); !ok {
						t.Fatalf("hot key %d gone before the churn", i)
					}
				}
			}
			for i := range churn {
				if _, err := s.Set(fmt.Appendf(nil, "new:%06d", i), value, SetOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			kept := 0
			for i := range hot {
				if _, ok := s.Get(hotKey(i)); ok {
					kept++
				}
			}
			st := s.Stats()
			t.Logf("hot keys kept: %d of %d; %+v", kept, hot, st)
			if st.Evicted < churn/2 {
				t.Fatalf("the churn evicted or rejected only %d keys: the bound was not reached", st.Evicted)
			}
			if kept < hot*8/10 {
				t.Errorf("only %d of %d hot keys survived %d keys written once", kept, hot, churn)
			}
		})
	}
}

// ViewEntry shows a live string where it lies; a read its function
// declines, or of a key missing, past its deadline or of another type,
// counts as nothing and calls nothing.
func TestViewEntry(t *testing.T) {
	s, clk := newClockStore(t)
	now := clk.Now().UnixNano()
	fill := &FillMeta{Loader: "l:", ETag: `"e"`, LoadTime: 7 * time.Millisecond}
	if _, err := s.Set([]byte("f"), []byte("value"), SetOptions{FreshUntil: now + 10, StaleUntil: now + 20, Fill: fill}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, s, "plain", "p", SetOptions{})
	mustSet(t, s, "gone", "g", SetOptions{FreshUntil: now + 1, StaleUntil: now + 1})
	if _, err := s.SAdd([]byte("set"), [][]byte{[]byte("m")}); err != nil {
		t.Fatal(err)
	}
	clk.advance(1)

	var seen EntryView
	var value string
	if !s.ViewEntry([]byte("f"), func(e EntryView) bool { seen, value = e, string(e.Value); return true }) {
		t.Fatal("ViewEntry of a live string: not shown")
	}
	if value != "value" || seen.FreshUntil != now+10 || seen.StaleUntil != now+20 || seen.LoadTime() != 7*time.Millisecond {
		t.Fatalf("ViewEntry showed %q fresh %d stale %d load %v", value, seen.FreshUntil, seen.StaleUntil, seen.LoadTime())
	}
	if st := s.Stats(); st.Hits != 1 || st.Misses != 0 {
		t.Fatalf("after an accepted view: hits %d misses %d, want 1 and 0", st.Hits, st.Misses)
	}
	if s.ViewEntry([]byte("plain"), func(e EntryView) bool { return e.LoadTime() != 0 }) {
		t.Fatal("a key no fill stored has a load time")
	}
	for _, key := range []string{"missing", "gone", "set"} {
		if s.ViewEntry([]byte(key), func(EntryView) bool { t.Errorf("%s shown", key); return true }) {
			t.Errorf("ViewEntry(%s) = true", key)
		}
	}
	if st := s.Stats(); st.Hits != 1 || st.Misses != 0 {
		t.Fatalf("after declined and missing views: hits %d misses %d, want 1 and 0", st.Hits, st.Misses)
	}
}

// A SET of a value as long as the one it replaces is written over it: no
// block taken or freed (the arena's live bytes and mappings stay), and
// every reader sees the new value, deadlines and counts as for any write.
func TestOverwriteInPlace(t *testing.T) {
	s, clk := newClockStore(t)
	mustSet(t, s, "k", "aaaa", SetOptions{})
	loc := func() slab.Loc {
		sh := s.shardOf(s.hash([]byte("k")))
		sh.mu.RLock()
		defer sh.mu.RUnlock()
		sl, _ := s.findLocked(sh, s.hash([]byte("k")), []byte("k"))
		return sl.loc
	}
	before, live := loc(), s.arena.Live()
	for _, v := range []string{"bbbb", "cccc"} {
		mustSet(t, s, "k", v, SetOptions{})
		if got, ok := s.Get([]byte("k")); !ok || string(got) != v {
			t.Fatalf("after SET k %s: GET = %q, %v", v, got, ok)
		}
		if loc() != before || s.arena.Live() != live {
			t.Fatalf("SET k %s moved the record (%v to %v) or changed the arena's live bytes (%d to %d)", v, before, loc(), live, s.arena.Live())
		}
	}
	// A longer value needs a new block.
	mustSet(t, s, "k", "eeeee", SetOptions{})
	if loc() == before {
		t.Fatal("a longer value was written over the old block")
	}
	now := clk.Now().UnixNano()
	// Same size with deadlines both times: in place, and the shard's
	// count of keys with deadlines stays right (checkInvariants).
	mustSet(t, s, "t", "xx", SetOptions{FreshUntil: now + 10, StaleUntil: now + 10})
	mustSet(t, s, "t", "yy", SetOptions{FreshUntil: now + 20, StaleUntil: now + 30})
	if env, _ := s.Lookup([]byte("t")); string(env.Value) != "yy" || env.FreshUntil != now+20 || env.StaleUntil != now+30 {
		t.Fatalf("in place with deadlines: %+v", env)
	}
	// A deadline's 16 bytes for 16 of value: the same size, in place,
	// and the key now counts among those with deadlines.
	mustSet(t, s, "v", strings.Repeat("a", 20), SetOptions{})
	mustSet(t, s, "v", "bbbb", SetOptions{FreshUntil: now + 30, StaleUntil: now + 30})
	checkInvariants(t, s)
	clk.advance(31)
	if _, ok := s.Get([]byte("v")); ok {
		t.Fatal("v kept past the deadline written in place")
	}
	if _, ok := s.Get([]byte("t")); ok {
		t.Fatal("the key overwritten in place did not expire at its new deadline")
	}
	checkInvariants(t, s)
}
