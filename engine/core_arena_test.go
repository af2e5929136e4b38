package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// patterned returns a value of n bytes that tells its own generation: every
// byte is gen, so a torn read (parts of two values) or a foreign one shows.
func patterned(gen byte, n int) []byte { return bytes.Repeat([]byte{gen}, n) }

// checkPatterned reports what is wrong with a value read back, "" if it is
// one patterned wrote: a length that belongs to its generation, every byte
// alike.
func checkPatterned(v []byte, lengthOf func(gen byte) int) string {
	if len(v) == 0 {
		return "empty value"
	}
	if want := lengthOf(v[0]); len(v) != want {
		return fmt.Sprintf("generation %d with %d bytes, want %d", v[0], len(v), want)
	}
	for i, b := range v {
		if b != v[0] {
			return fmt.Sprintf("generation %d torn at byte %d", v[0], i)
		}
	}
	return ""
}

// churnOthers writes and deletes keys of its own until stop closes, so the
// arena frees space and the compactor moves records while a test reads.
func churnOthers(t *testing.T, s *Store, stop <-chan struct{}, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 11))
	value := make([]byte, 2000)
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		key := []byte("other:" + strconv.Itoa(r.IntN(2000)))
		if i%3 == 0 {
			s.Delete(key)
		} else if _, err := s.Set(key, value[:r.IntN(len(value))], SetOptions{}); err != nil {
			t.Error(err)
			return
		}
	}
}

// TestConcurrentOverwriteNeverTorn: readers of one key, through every read
// path, see whole values only, while writers overwrite it with values of
// other sizes and the compactor moves records around it.
func TestConcurrentOverwriteNeverTorn(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 256 << 20, ExpireInterval: time.Millisecond})
	lengthOf := func(gen byte) int { return 1 + int(gen)*37%3000 }
	key := []byte("contended")
	set(t, s, string(key), string(patterned(1, lengthOf(1))))
	stop := make(chan struct{})
	var bg sync.WaitGroup
	for w := range 2 {
		bg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				gen := byte(1 + (i*2+w)%250)
				if _, err := s.Set(key, patterned(gen, lengthOf(gen)), SetOptions{KeepTTL: i%2 == 0}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	bg.Go(func() { churnOthers(t, s, stop, 1) })
	reads := underRace(20000, 5000)
	var readers sync.WaitGroup
	for r := range 3 {
		readers.Go(func() {
			var buf []byte
			for i := range reads {
				var v []byte
				var ok bool
				switch (i + r) % 4 {
				case 0:
					v, ok = s.Get(key)
				case 1:
					ok = s.View(key, func(b []byte) {
						if msg := checkPatterned(b, lengthOf); msg != "" {
							t.Errorf("View: %s", msg)
						}
					})
					continue
				case 2:
					ok = s.View(key, func(b []byte) { buf = append(buf[:0], b...) })
					v = buf
				case 3:
					var env Envelope
					env, ok = s.Peek(key)
					v = env.Value
				}
				if !ok {
					t.Errorf("read %d: the key is missing", i)
					return
				}
				if msg := checkPatterned(v, lengthOf); msg != "" {
					t.Errorf("read %d: %s", i, msg)
					return
				}
			}
		})
	}
	readers.Wait()
	close(stop)
	bg.Wait()
	checkInvariants(t, s)
}

// TestEvictionDuringReads: keys are evicted and rejected while readers read
// them; a read returns the key's own value or nothing.
func TestEvictionDuringReads(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 256 << 10})
	valueOf := func(k string) []byte { return []byte("value of " + k + " " + string(patterned('x', len(k)*7))) }
	const keys = 20000
	stop := make(chan struct{})
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 12))
			for range 20000 {
				k := "k" + strconv.Itoa(r.IntN(keys))
				if _, err := s.Set([]byte(k), valueOf(k), SetOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var readers sync.WaitGroup
	var found atomic.Int64
	for g := range 2 {
		readers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 13))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := "k" + strconv.Itoa(r.IntN(keys))
				s.View([]byte(k), func(v []byte) {
					found.Add(1)
					if !bytes.Equal(v, valueOf(k)) {
						t.Errorf("View(%q) = %q", k, v)
					}
				})
				if v, ok := s.Get([]byte(k)); ok && !bytes.Equal(v, valueOf(k)) {
					t.Errorf("Get(%q) = %q", k, v)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if st := s.Stats(); st.Evicted == 0 || found.Load() == 0 {
		t.Fatalf("evicted %d, values read %d: the test did not race reads with evictions",
			st.Evicted, found.Load())
	}
	checkInvariants(t, s)
}

// waitCompacted waits until the compactor has left at most
// 1/compactStartFraction of the shared segments dead (the fraction at which
// it starts).
func waitCompacted(t *testing.T, s *Store) {
	t.Helper()
	testwait.For(t, "compaction", func() bool {
		s.kickCompactor()
		return !s.slackOver(compactStartFraction)
	})
}

// TestFreedSpaceIsReused: overwriting and deleting a steady set of keys,
// over and over, leaves the arena no larger than its live records need. Half
// the keys are written once, so the first segments stay half live: only
// compaction gives their dead half back.
func TestFreedSpaceIsReused(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 256 << 20})
	r := rand.New(rand.NewPCG(3, 14))
	value := make([]byte, 2000)
	rounds := underRace(40, 10)
	for round := range rounds {
		for i := range 5000 {
			if round > 0 && i%2 == 1 {
				continue
			}
			key := []byte("k" + strconv.Itoa(i))
			if i%10 == 0 {
				s.Delete(key)
				continue
			}
			if _, err := s.Set(key, value[:r.IntN(len(value))], SetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitCompacted(t, s)
	st := s.Stats()
	if limit := st.ArenaLiveBytes*compactStartFraction/(compactStartFraction-1) + 2*slab.SegmentSize; st.ArenaBytes > limit {
		t.Errorf("arena maps %d bytes for %d live: freed space is not reused (limit %d)", st.ArenaBytes, st.ArenaLiveBytes, limit)
	}
	if st.Compactions == 0 {
		t.Errorf("nothing was compacted: %+v", st)
	}
	checkInvariants(t, s)
}

// TestBoundHoldsWithMixedSizes: a churn of 1 KB, 100 KB and 10 MB values,
// written many times over the bound, keeps the charged cost within the
// bound and the arena within 1.15 times it (plus the head segment), and the
// waste of freed space within what compaction allows.
func TestBoundHoldsWithMixedSizes(t *testing.T) {
	const maxMem = 64 << 20
	s := newStore(t, Options{MaxMemory: maxMem})
	sizes := []int{1 << 10, 100 << 10, 10 << 20}
	values := make([][]byte, len(sizes))
	for i, n := range sizes {
		values[i] = patterned(byte('a'+i), n)
	}
	writes := underRace(3000, 1000)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 15))
			for range writes {
				i := r.IntN(100)
				size := 0 // mostly 1 KB, some 100 KB, a few 10 MB
				switch {
				case i >= 98:
					size = 2
				case i >= 80:
					size = 1
				}
				key := []byte(fmt.Sprintf("k%d:%d", size, r.IntN(2000)))
				if _, err := s.Set(key, values[size], SetOptions{}); err != nil {
					t.Error(err)
					return
				}
				if v, ok := s.Get(key); ok && len(v) != sizes[size] {
					t.Errorf("Get(%q) = %d bytes, want %d", key, len(v), sizes[size])
				}
			}
		})
	}
	wg.Wait()
	waitCompacted(t, s)
	st := s.Stats()
	if st.Cost > maxMem {
		t.Errorf("charged %d bytes, over the bound %d", st.Cost, maxMem)
	}
	if limit := int64(maxMem)*115/100 + slab.SegmentSize; st.ArenaBytes > limit {
		t.Errorf("the arena maps %d bytes, over 1.15 times the bound plus a segment (%d)", st.ArenaBytes, limit)
	}
	if st.Evicted == 0 {
		t.Errorf("nothing evicted: the bound was never reached (%+v)", st)
	}
	checkInvariants(t, s)
}

func TestNoEviction(t *testing.T) {
	const maxMem = 64 << 10
	s := newStore(t, Options{MaxMemory: maxMem, Policy: NoEviction})
	value := make([]byte, 100)
	var i int
	var err error
	for i = 0; i < 10000; i++ {
		if _, err = s.Set([]byte("k"+strconv.Itoa(i)), value, SetOptions{}); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrOOM) {
		t.Fatalf("after %d writes err = %v, want ErrOOM", i, err)
	}
	st := s.Stats()
	if st.Evicted != 0 {
		t.Errorf("noeviction evicted %d", st.Evicted)
	}
	// Redis refuses writes once used memory is over the bound, whatever
	// they are, and lets the one that crossed it through.
	if st.Cost <= maxMem || st.Cost > maxMem+entryCost(len("k")+5, len(value)) {
		t.Errorf("Cost = %d, want just over the bound %d", st.Cost, maxMem)
	}
	if n := s.Len(); n != i {
		t.Errorf("Len() = %d, want the %d keys written", n, i)
	}
	if _, err := s.Update([]byte("k0"), func(old []byte, _ bool) ([]byte, error) { return old[:1], nil }); !errors.Is(err, ErrOOM) {
		t.Errorf("Update over the bound: err = %v, want ErrOOM", err)
	}
	if ok, err := s.SetMulti([][]byte{[]byte("m"), []byte("1")}, Always); ok || !errors.Is(err, ErrOOM) {
		t.Errorf("SetMulti over the bound = %v, %v; want ErrOOM", ok, err)
	}
	wantValue(t, s, "k0", string(value))
	// Deleting brings the store under the bound, and writes work again.
	for j := range 10 {
		s.Delete([]byte("k" + strconv.Itoa(j)))
	}
	set(t, s, "again", "v")
	// Switching to allkeys-lfu evicts to make room.
	s.SetEvictionPolicy(AllKeysLFU)
	for j := range 2000 {
		if _, err := s.Set([]byte("n"+strconv.Itoa(j)), value, SetOptions{}); err != nil {
			t.Fatalf("allkeys-lfu write %d: %v", j, err)
		}
	}
	if st := s.Stats(); st.Cost > maxMem || st.Evicted == 0 {
		t.Errorf("after switching to allkeys-lfu: %+v", st)
	}
	checkInvariants(t, s)
}

func TestParseEvictionPolicy(t *testing.T) {
	names := PolicyNames()
	if len(names) != 8 {
		t.Fatalf("PolicyNames() = %v, want Redis's eight", names)
	}
	seen := map[EvictionPolicy]bool{}
	for _, name := range names {
		p, err := ParseEvictionPolicy(strings.ToUpper(name))
		if err != nil || p.String() != name {
			t.Errorf("ParseEvictionPolicy(%q) = %v, %v", name, p, err)
		}
		seen[p] = true
	}
	if len(seen) != 8 {
		t.Errorf("eight names parse to %d policies", len(seen))
	}
	if _, err := ParseEvictionPolicy("lfu"); !errors.Is(err, ErrUnknownPolicy) {
		t.Errorf("ParseEvictionPolicy(lfu): err = %v, want ErrUnknownPolicy", err)
	}
	if p, _ := ParseEvictionPolicy("allkeys-lfu"); p != AllKeysLFU || EvictionPolicy(0) != AllKeysLFU {
		t.Errorf("allkeys-lfu is not the zero policy")
	}
}

func TestView(t *testing.T) {
	s, clk := newClockStore(t)
	set(t, s, "k", "value")
	mustSet(t, s, "e", "old", SetOptions{StaleUntil: clk.in(time.Second)})
	var got []byte
	if !s.View([]byte("k"), func(v []byte) { got = append(got, v...) }) || string(got) != "value" {
		t.Errorf("View(k) saw %q", got)
	}
	if s.View([]byte("missing"), func([]byte) { t.Error("View called fn for a missing key") }) {
		t.Error("View(missing) = true")
	}
	clk.advance(time.Second)
	if s.View([]byte("e"), func([]byte) { t.Error("View called fn for an expired key") }) {
		t.Error("View of an expired key = true")
	}
	if st := s.Stats(); st.Hits != 1 || st.Misses != 2 || st.Expired != 1 {
		t.Errorf("Stats() = %+v, want 1 hit, 2 misses, 1 expired", st)
	}
}

// TestUpdateReturningOldKeepsItsBytes: fn may return the stored value
// itself (APPEND of nothing does); the store frees that record, so what
// Update returns must be a copy.
func TestUpdateReturningOldKeepsItsBytes(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	set(t, s, "k", "original")
	v, err := s.Update([]byte("k"), func(old []byte, _ bool) ([]byte, error) { return append(old, ""...), nil })
	if err != nil {
		t.Fatal(err)
	}
	// Reuse the freed space: the same size, other bytes, many times.
	for i := range 5000 {
		set(t, s, "f"+strconv.Itoa(i), "XXXXXXXX")
		s.Delete([]byte("f" + strconv.Itoa(i)))
	}
	if string(v) != "original" {
		t.Errorf("the value Update returned changed to %q", v)
	}
	wantValue(t, s, "k", "original")
}
