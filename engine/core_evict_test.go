package engine

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fillPast writes keys until the store has evicted some, and returns how
// many it wrote. ttl, if not zero, gives each key a deadline.
func fillPast(t *testing.T, s *Store, prefix string, ttl time.Duration, clk *fakeClock) int {
	t.Helper()
	value := make([]byte, 100)
	for i := 0; ; i++ {
		opts := SetOptions{}
		if ttl != 0 {
			opts.StaleUntil = clk.in(ttl)
		}
		if _, err := s.Set([]byte(prefix+strconv.Itoa(i)), value, opts); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		if s.Stats().Evicted > 0 {
			return i + 1
		}
		if i > 1_000_000 {
			t.Fatal("nothing evicted")
		}
	}
}

// Under each volatile policy only keys with a deadline are evicted, and
// with none left a write past the bound is refused with ErrOOM, as Redis
// refuses it.
func TestVolatilePoliciesEvictOnlyVolatileKeys(t *testing.T) {
	for _, p := range []EvictionPolicy{VolatileLRU, VolatileLFU, VolatileRandom, VolatileTTL} {
		t.Run(p.String(), func(t *testing.T) {
			clk := newFakeClock()
			s := newStore(t, Options{MaxMemory: 256 << 10, Policy: p, Now: clk.Now, ExpireInterval: noSweep})
			persistent := 0
			value := make([]byte, 100)
			for ; s.Stats().Cost < 128<<10; persistent++ {
				set(t, s, "keep:"+strconv.Itoa(persistent), string(value))
			}
			fillPast(t, s, "ttl:", time.Hour, clk)
			for i := range persistent {
				wantValue(t, s, "keep:"+strconv.Itoa(i), string(value))
			}
			// Only persistent keys left to evict once the volatile ones go.
			var err error
			for i := 0; err == nil && i < 100000; i++ {
				_, err = s.Set([]byte("more:"+strconv.Itoa(i)), value, SetOptions{})
			}
			if !errors.Is(err, ErrOOM) {
				t.Fatalf("writing past the bound with only persistent keys left: %v, want ErrOOM", err)
			}
			if n := s.Volatile(); n != 0 {
				t.Errorf("%d keys with a deadline left when writes were refused", n)
			}
			for i := range persistent {
				wantValue(t, s, "keep:"+strconv.Itoa(i), string(value))
			}
			checkInvariants(t, s)
		})
	}
}

// volatile-ttl evicts the keys nearest their deadline first.
func TestVolatileTTLEvictsTheNearestDeadline(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 256 << 10, Policy: VolatileTTL, Now: clk.Now, ExpireInterval: noSweep})
	value := make([]byte, 100)
	n := 0
	for ; s.Stats().Cost < 200<<10; n++ {
		// Deadlines an hour apart in key order: key 0 nearest.
		mustSet(t, s, "k:"+strconv.Itoa(n), string(value), SetOptions{StaleUntil: clk.in(time.Duration(n+1) * time.Hour)})
	}
	for i := 0; s.Stats().Evicted < int64(n/4); i++ {
		mustSet(t, s, "far:"+strconv.Itoa(i), string(value), SetOptions{StaleUntil: clk.in(time.Duration(1000000+i) * time.Hour)})
	}
	// The evicted ones are among the nearest: with 5 samples and a pool of
	// 16 the choice is approximate, as Redis's is.
	gone := 0
	for i := range n / 2 {
		if _, ok := s.Peek([]byte("k:" + strconv.Itoa(i))); !ok {
			gone++
		}
	}
	if st := s.Stats(); gone < int(st.Evicted)*3/4 {
		t.Errorf("of %d evicted keys, %d were among the half nearest their deadline", st.Evicted, gone)
	}
	for i := 0; ; i++ {
		if _, ok := s.Peek([]byte("far:" + strconv.Itoa(i))); !ok {
			break
		}
		if i > 1000 {
			return
		}
	}
}

// allkeys-lru keeps the keys read lately and evicts those no one read.
func TestAllKeysLRUKeepsRecentlyReadKeys(t *testing.T) {
	clk := newFakeClock()
	s := newStore(t, Options{MaxMemory: 512 << 10, Policy: AllKeysLRU, Now: clk.Now, ExpireInterval: noSweep})
	value := make([]byte, 100)
	n := 0
	for ; s.Stats().Cost < 400<<10; n++ {
		set(t, s, "k:"+strconv.Itoa(n), string(value))
	}
	clk.advance(time.Minute)
	// Half the keys are read a minute later; then new keys arrive, a
	// second apart in batches.
	for i := 0; i < n; i += 2 {
		s.Get([]byte("k:" + strconv.Itoa(i)))
	}
	clk.advance(time.Second)
	for i := 0; s.Stats().Evicted < int64(n/3); i++ {
		set(t, s, "new:"+strconv.Itoa(i), string(value))
		if i%100 == 0 {
			clk.advance(time.Second)
		}
	}
	read, unread := 0, 0
	for i := range n {
		if _, ok := s.Peek([]byte("k:" + strconv.Itoa(i))); ok {
			if i%2 == 0 {
				read++
			} else {
				unread++
			}
		}
	}
	if read < n/2*9/10 || unread > read/2 {
		t.Errorf("kept %d of %d keys read lately and %d of %d unread", read, n/2, unread, n/2)
	}
}

// noeviction refuses writes past the bound and evicts nothing; reads,
// deletes and writes that shrink still work.
func TestNoEvictionRefuses(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 128 << 10, Policy: NoEviction, ExpireInterval: noSweep})
	value := make([]byte, 100)
	var err error
	i := 0
	for ; err == nil; i++ {
		_, err = s.Set([]byte("k:"+strconv.Itoa(i)), value, SetOptions{})
	}
	if !errors.Is(err, ErrOOM) || s.Stats().Evicted != 0 {
		t.Fatalf("after %d writes: %v, %d evicted", i, err, s.Stats().Evicted)
	}
	wantValue(t, s, "k:0", string(value))
	if !s.Delete([]byte("k:0")) {
		t.Fatal("Delete past the bound deleted nothing")
	}
}

// The write that makes room never evicts its own key, and a collection
// grown past the bound evicts others after it, never itself: with no
// other write between, an acknowledged write is readable by the next call,
// under every policy. (Another client's write in between may evict it, as
// in Redis: TestEvictionRacesStayConsistent writes from several.)
func TestEvictionNeverTakesTheWriteBack(t *testing.T) {
	for _, name := range PolicyNames() {
		p, _ := ParseEvictionPolicy(name)
		if p == NoEviction {
			continue
		}
		t.Run(name, func(t *testing.T) {
			clk := newFakeClock()
			s := newStore(t, Options{MaxMemory: 1 << 20, Policy: p, Now: clk.Now})
			opts := SetOptions{}
			if p.volatile() {
				opts.StaleUntil = clk.in(time.Hour)
			}
			value := make([]byte, 100)
			for i := range underRace(40000, 10000) {
				key := []byte("k:" + strconv.Itoa(i))
				if _, err := s.Set(key, value, opts); err != nil {
					t.Fatal(err)
				}
				if _, ok := s.Get(key); !ok {
					t.Fatalf("acknowledged SET of %s missing on the next call", key)
				}
				if i%20 == 0 {
					// A new set, and one grown a member at a time.
					for _, set := range [][]byte{[]byte("set:" + strconv.Itoa(i)), []byte("grown")} {
						if _, err := s.SAdd(set, [][]byte{value[:40], []byte(strconv.Itoa(i))}); err != nil {
							t.Fatal(err)
						}
						if opts.StaleUntil != 0 {
							s.Expire(set, opts.StaleUntil, ExpireAlways)
						}
						if ok, _ := s.SIsMember(set, [][]byte{[]byte(strconv.Itoa(i))}); len(ok) != 1 || !ok[0] {
							t.Fatalf("SADD to %s not read back", set)
						}
					}
				}
			}
			if s.Stats().Evicted == 0 {
				t.Fatal("nothing evicted: the test ran below the bound")
			}
			checkInvariants(t, s)
		})
	}
}

// Writers racing at the bound under every policy leave the indexes, the
// costs and the arena in step, and the store within its bound by at most a
// write per writer.
func TestEvictionRacesStayConsistent(t *testing.T) {
	for _, name := range PolicyNames() {
		p, _ := ParseEvictionPolicy(name)
		t.Run(name, func(t *testing.T) {
			clk := newFakeClock()
			s := newStore(t, Options{MaxMemory: 1 << 20, Policy: p, Now: clk.Now})
			value := make([]byte, 100)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range underRace(10000, 2500) {
						key := []byte(fmt.Sprintf("g%d:%d", g, i))
						_, err := s.Set(key, value, SetOptions{StaleUntil: clk.in(time.Hour)})
						if err != nil && !(p == NoEviction && errors.Is(err, ErrOOM)) {
							t.Error(err)
							return
						}
						s.Get(key)
						if i%10 == 0 {
							s.SAdd([]byte(fmt.Sprintf("s%d:%d", g, i%100)), [][]byte{key})
						}
					}
				})
			}
			wg.Wait()
			// A write that finds another evicting writes on until the
			// store is past its bound by overSlack.
			if st := s.Stats(); st.Cost > st.MaxCost+s.overSlack()+4*(entryCost(10, len(value))+1024) {
				t.Errorf("cost %d past the bound %d by more than its slack and a write per writer", st.Cost, st.MaxCost)
			}
			checkInvariants(t, s)
		})
	}
}

// recordStale reads what parseRecord reads, for every layout of a record.
func TestRecordStaleMatchesParse(t *testing.T) {
	fill := &FillMeta{Loader: "l", ETag: `"e"`, LoadTime: time.Millisecond}
	for _, r := range []newRecord{
		makeNewRecord([]byte("k"), []byte("v"), 0, 0, nil),
		makeNewRecord([]byte("k"), []byte("v"), 5, 9, nil),
		makeNewRecord([]byte("key"), []byte("value"), 5, 9, fill),
		makeNewRecord([]byte("key"), []byte("value"), 0, 0, fill),
	} {
		b := make([]byte, r.size())
		r.write(b)
		if got, want := recordStale(b), parseRecord(b).stale; got != want {
			t.Errorf("recordStale = %d, parseRecord's stale = %d", got, want)
		}
	}
}

// The tenacity maps to Redis's time limits, and the parameters are kept in
// their ranges, the zero value giving Redis's defaults.
func TestEvictionParams(t *testing.T) {
	for tenacity, want := range map[int]time.Duration{0: 0, 1: 50 * time.Microsecond, 10: 500 * time.Microsecond, 11: 575 * time.Microsecond} {
		if got := evictionTimeLimit(tenacity); got != want {
			t.Errorf("evictionTimeLimit(%d) = %v, want %v", tenacity, got, want)
		}
	}
	if got := evictionTimeLimit(99); got < time.Minute || got > 3*time.Minute {
		t.Errorf("evictionTimeLimit(99) = %v, want about 2 minutes", got)
	}
	s := newStore(t, Options{})
	if got := s.EvictionParams(); got != DefaultEvictionParams {
		t.Errorf("a new store's params: %+v", got)
	}
	s.setEvictionParams(EvictionParams{Samples: -3, Tenacity: 400, LFULogFactor: -1, LFUDecayTime: 7})
	if got, want := s.EvictionParams(), (EvictionParams{Samples: 1, Tenacity: 100, LFULogFactor: 0, LFUDecayTime: 7}); got != want {
		t.Errorf("clamped: %+v, want %+v", got, want)
	}
	s.TuneEviction(func(p *EvictionParams) { p.Samples = 10 })
	if got := s.EvictionParams(); got.Samples != 10 || got.LFUDecayTime != 7 {
		t.Errorf("after TuneEviction: %+v", got)
	}
}

// Shrinking the bound evicts down to it at once, as CONFIG SET maxmemory
// does in Redis.
func TestSetMaxMemoryEvictsAtOnce(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20, ExpireInterval: noSweep})
	fillKeys(t, s, "k%d", 5000)
	s.SetMaxMemory(64 << 10)
	if st := s.Stats(); st.Cost > 64<<10 || st.Evicted == 0 {
		t.Fatalf("after shrinking the bound: %+v", st)
	}
	checkInvariants(t, s)
}
