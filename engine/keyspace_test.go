package engine

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/glob"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

func fillKeys(t testing.TB, s *Store, format string, n int) map[string]bool {
	t.Helper()
	keys := make(map[string]bool, n)
	for i := range n {
		k := fmt.Sprintf(format, i)
		set(t, s, k, "v")
		keys[k] = true
	}
	return keys
}

func TestScanReturnsEveryKeyOnce(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	want := fillKeys(t, s, "key:%d", 10000)
	for _, count := range []int{0, 1, 10, 97, 1000, 20000} {
		t.Run(strconv.Itoa(count), func(t *testing.T) {
			got := fullScan(t, s, nil, count)
			if diff := sameSet(got, want); diff != "" {
				t.Errorf("scan with count %d: %s", count, diff)
			}
		})
	}
	if diff := sameSet(fullScan(t, s, []byte("*"), 33), want); diff != "" {
		t.Errorf("scan MATCH *: %s", diff)
	}
}

func TestScanEmptyStore(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 20})
	cursor, keys := s.Scan(0, ScanFilter{}, 10)
	if cursor != 0 || len(keys) != 0 {
		t.Errorf("Scan of an empty store = %d, %q", cursor, keys)
	}
	set(t, s, "only", "v")
	if keys := fullScan(t, s, nil, 1); !slices.Equal(keys, []string{"only"}) {
		t.Errorf("scan = %q", keys)
	}
}

func TestScanCountBatches(t *testing.T) {
	// With enough keys, a scan returns about count keys a call, not all of
	// them at once and not one shard at a time.
	s := newStore(t, Options{MaxMemory: 64 << 20})
	fillKeys(t, s, "key:%d", 5000)
	cursor, keys := s.Scan(0, ScanFilter{}, 100)
	if cursor == 0 || len(keys) != 100 {
		t.Errorf("first Scan(count 100) = cursor %#x, %d keys; want 100 keys and more to come", cursor, len(keys))
	}
	cursor, keys = s.Scan(0, ScanFilter{}, 0)
	if cursor == 0 || len(keys) != 10 {
		t.Errorf("first Scan(count 0) = cursor %#x, %d keys; want the default of 10", cursor, len(keys))
	}
}

// TestKeysAgreesWithMatch: Keys selects exactly the keys glob.Match
// selects (which internal/glob checks against redis-server's KEYS), but for
// "*", which matches every key without matching (the empty key too), and
// the empty pattern, which Keys takes as no pattern.
func TestKeysAgreesWithMatch(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	r := rand.New(rand.NewPCG(7, 7))
	gen := func(alphabet string, maxLen int) string {
		b := make([]byte, r.IntN(maxLen+1))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	subjects := setOf("")
	for range 400 {
		subjects[gen("abcz-]\\[^*?", 5)] = true
	}
	for k := range subjects {
		set(t, s, k, "v")
	}
	for range 500 {
		p := gen("abcz*?[]^-\\", 7)
		if p == "" {
			continue
		}
		want := map[string]bool{}
		for k := range subjects {
			if p == "*" || glob.Match([]byte(p), k) {
				want[k] = true
			}
		}
		if diff := sameSet(s.Keys([]byte(p)), want); diff != "" {
			t.Fatalf("Keys(%q) disagrees with glob.Match: %s", p, diff)
		}
	}
}

func TestScanMatch(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	users := fillKeys(t, s, "user:%d", 3000)
	orders := fillKeys(t, s, "order:%d", 3000)
	fillKeys(t, s, "misc%d", 10)
	for _, count := range []int{1, 10, 500} {
		if diff := sameSet(fullScan(t, s, []byte("user:*"), count), users); diff != "" {
			t.Errorf("MATCH user:* count %d: %s", count, diff)
		}
		if diff := sameSet(fullScan(t, s, []byte("order:*"), count), orders); diff != "" {
			t.Errorf("MATCH order:* count %d: %s", count, diff)
		}
	}
	// A sparse pattern still completes, in calls bounded by count.
	if diff := sameSet(fullScan(t, s, []byte("user:7*7"), 10), setOf("user:77", "user:777", "user:707", "user:717",
		"user:727", "user:737", "user:747", "user:757", "user:767", "user:787", "user:797")); diff != "" {
		t.Errorf("MATCH user:7*7: %s", diff)
	}
	if diff := sameSet(fullScan(t, s, []byte("user:7"), 10), setOf("user:7")); diff != "" {
		t.Errorf("MATCH user:7: %s", diff)
	}
	if diff := sameSet(fullScan(t, s, []byte("nothing*"), 50), nil); diff != "" {
		t.Errorf("MATCH nothing*: %s", diff)
	}

	if diff := sameSet(s.Keys([]byte("user:*")), users); diff != "" {
		t.Errorf("Keys(user:*): %s", diff)
	}
	if diff := sameSet(s.Keys([]byte("misc?")), setOf("misc0", "misc1", "misc2", "misc3", "misc4", "misc5", "misc6", "misc7", "misc8", "misc9")); diff != "" {
		t.Errorf("Keys(misc?): %s", diff)
	}
	if diff := sameSet(s.Keys([]byte("order:1[0-2]")), setOf("order:10", "order:11", "order:12")); diff != "" {
		t.Errorf("Keys(order:1[0-2]): %s", diff)
	}
	if keys := s.Keys([]byte("nothing*")); len(keys) != 0 {
		t.Errorf("Keys(nothing*) = %q", keys)
	}
	if n := len(s.Keys([]byte("*"))); n != 6010 {
		t.Errorf("len(Keys(*)) = %d, want 6010", n)
	}
	if n := len(s.Keys(nil)); n != 6010 {
		t.Errorf("len(Keys(nil)) = %d, want 6010", n)
	}
}

func TestScanWithConcurrentWriters(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	stable := fillKeys(t, s, "stable:%d", 5000)
	// Keys that exist at the start and are deleted during the scan may or
	// may not be returned, but never twice.
	doomed := fillKeys(t, s, "doomed:%d", 2000)

	stop := make(chan struct{})
	var writes atomic.Int64
	var wg sync.WaitGroup
	for g := range 3 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 5))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				switch r.IntN(3) {
				case 0:
					s.Delete([]byte(fmt.Sprintf("doomed:%d", r.IntN(2000))))
				case 1:
					s.Delete([]byte(fmt.Sprintf("churn:%d:%d", g, r.IntN(3000))))
				default:
					// A bounded key space keeps shards small and the
					// store far from its memory bound.
					if _, err := s.Set([]byte(fmt.Sprintf("churn:%d:%d", g, i%3000)), []byte("v"), SetOptions{}); err != nil {
						t.Error(err)
						return
					}
				}
				writes.Add(1)
			}
		})
	}
	var scans [][]string
	for _, count := range []int{5, 50} {
		for round := 0; round < 3; round++ {
			var all []string
			cursor := uint64(0)
			for {
				next, keys := s.Scan(cursor, ScanFilter{}, count)
				all = append(all, keys...)
				if next == 0 {
					break
				}
				cursor = next
			}
			scans = append(scans, all)
		}
	}
	close(stop)
	wg.Wait()
	if writes.Load() == 0 {
		t.Fatal("writers made no progress during the scans")
	}
	if st := s.Stats(); st.Evicted != 0 {
		t.Fatalf("keys were evicted during the scans: %+v", st)
	}
	for i, all := range scans {
		seen := make(map[string]int, len(all))
		for _, k := range all {
			seen[k]++
			if seen[k] == 2 {
				t.Errorf("scan %d returned %q twice", i, k)
			}
		}
		for k := range stable {
			if seen[k] != 1 {
				t.Errorf("scan %d returned stable key %q %d times", i, k, seen[k])
				break
			}
		}
		for k := range seen {
			if !stable[k] && !doomed[k] && (len(k) < 6 || k[:6] != "churn:") {
				t.Errorf("scan %d returned unknown key %q", i, k)
			}
		}
	}
}

func TestScanResumesFromAnyCursor(t *testing.T) {
	// The cursor is a position in the hash space: resuming from one returns
	// exactly the keys whose hash is at or after it.
	s := newStore(t, Options{MaxMemory: 64 << 20})
	want := fillKeys(t, s, "k%d", 2000)
	for _, cursor := range []uint64{1, 1 << 40, 1 << 63, 1<<64 - 1, 0x7f << 56} {
		var got []string
		c := cursor
		for {
			next, keys := s.Scan(c, ScanFilter{}, 33)
			got = append(got, keys...)
			if next == 0 {
				break
			}
			c = next
		}
		after := make(map[string]bool)
		for k := range want {
			if s.hashString(k) >= cursor {
				after[k] = true
			}
		}
		if diff := sameSet(got, after); diff != "" {
			t.Errorf("scan from %#x: %s", cursor, diff)
		}
	}
}

func TestKeysAndLenAgree(t *testing.T) {
	s, clk := newClockStore(t)
	for i := range 500 {
		k := fmt.Sprintf("k%d", i)
		switch i % 3 {
		case 0:
			set(t, s, k, "v")
		case 1:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Second)})
		case 2:
			mustSet(t, s, k, "v", SetOptions{StaleUntil: clk.in(time.Hour)})
		}
	}
	if n, k := s.Len(), len(s.Keys(nil)); n != 500 || k != 500 {
		t.Errorf("Len() = %d, len(Keys) = %d; want 500", n, k)
	}
	clk.advance(time.Second)
	live := 500 - 167
	if n, k, sc := s.Len(), len(s.Keys(nil)), len(fullScan(t, s, nil, 20)); n != live || k != live || sc != live {
		t.Errorf("Len() = %d, len(Keys) = %d, len(Scan) = %d; want %d", n, k, sc, live)
	}
}

func TestRandomKey(t *testing.T) {
	s, clk := newClockStore(t)
	if k, ok := s.RandomKey(); ok || k != "" {
		t.Errorf("RandomKey() of an empty store = %q, %v", k, ok)
	}
	keys := fillKeys(t, s, "live:%d", 50)
	for i := range 500 {
		mustSet(t, s, fmt.Sprintf("exp:%d", i), "v", SetOptions{StaleUntil: clk.in(time.Second)})
	}
	clk.advance(time.Second)
	seen := make(map[string]bool)
	for range 2000 {
		k, ok := s.RandomKey()
		if !ok || !keys[k] {
			t.Fatalf("RandomKey() = %q, %v; want a live key", k, ok)
		}
		if _, ok := s.Peek([]byte(k)); !ok {
			t.Fatalf("RandomKey() = %q, which is not live", k)
		}
		seen[k] = true
	}
	if len(seen) < 10 {
		t.Errorf("2000 calls of RandomKey returned only %d distinct keys of 50", len(seen))
	}

	for k := range keys {
		s.Delete([]byte(k))
	}
	if k, ok := s.RandomKey(); ok {
		t.Errorf("RandomKey() = %q with only expired keys left", k)
	}
}

func TestFlush(t *testing.T) {
	for _, all := range []bool{false, true} {
		t.Run(fmt.Sprintf("all=%v", all), func(t *testing.T) {
			clk := newFakeClock()
			s := newStore(t, Options{MaxMemory: 64 << 20, Now: clk.Now, ExpireInterval: noSweep})
			keys := fillKeys(t, s, "k%d", 5000)
			for i := range 100 {
				mustSet(t, s, fmt.Sprintf("vol%d", i), "v", SetOptions{StaleUntil: clk.in(time.Hour)})
			}
			if st := s.Stats(); st.Cost == 0 {
				t.Fatal("Cost = 0 with 5100 keys")
			}

			if all {
				s.FlushAll()
			} else {
				s.Flush() // the only database with keys: the whole arena goes too
			}
			if n := s.Len(); n != 0 {
				t.Errorf("Len() = %d right after Flush", n)
			}
			if n := s.Volatile(); n != 0 {
				t.Errorf("Volatile() = %d right after Flush", n)
			}
			for k := range keys {
				if _, ok := s.Get([]byte(k)); ok {
					t.Fatalf("Get(%q) found a flushed key", k)
				}
			}
			if k := s.Keys(nil); len(k) != 0 {
				t.Errorf("Keys() = %d keys after Flush", len(k))
			}
			if k := fullScan(t, s, nil, 100); len(k) != 0 {
				t.Errorf("Scan returned %d keys after Flush", len(k))
			}
			if k, ok := s.RandomKey(); ok {
				t.Errorf("RandomKey() = %q after Flush", k)
			}
			if c := s.Stats().Cost; c != 0 {
				t.Fatalf("Cost = %d right after Flush", c)
			}

			// The store works as before.
			set(t, s, "k1", "new")
			wantValue(t, s, "k1", "new")
			mustSet(t, s, "after", "v", SetOptions{StaleUntil: clk.in(time.Second)})
			if n := s.Len(); n != 2 {
				t.Errorf("Len() = %d after two writes following Flush", n)
			}
			clk.advance(time.Second)
			if n := s.Len(); n != 1 {
				t.Errorf("Len() = %d after one of them expired", n)
			}
			s.FlushAll()
			if c := s.Stats().Cost; c != 0 {
				t.Fatalf("Cost = %d right after Flush", c)
			}
			set(t, s, "again", "v")
			checkInvariants(t, s)
		})
	}
}

// Flush forgets the frequency sketch's counts: a key written again after
// FLUSHALL starts as new.
func TestFlushClearsTheSketch(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20, ExpireInterval: noSweep})
	for range 5 {
		set(t, s, "k", "v")
		s.Get([]byte("k"))
	}
	if got := s.sketch.Estimate(keyBits(s.hash([]byte("k")))); got < 5 {
		t.Fatalf("the sketch counted %d of 10 accesses", got)
	}
	s.FlushAll()
	if got := s.sketch.Estimate(keyBits(s.hash([]byte("k")))); got != 0 {
		t.Fatalf("the sketch counts %d after Flush", got)
	}
}

func TestFlushWithConcurrentWriters(t *testing.T) {
	// Writes racing with flushes must leave the indexes, the costs and the
	// arena in step.
	s := newStore(t, Options{MaxMemory: 64 << 20})
	var wg sync.WaitGroup
	var writes atomic.Int64
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				writes.Add(1)
				select {
				case <-stop:
					return
				default:
				}
				key := []byte(fmt.Sprintf("g%d:%d", g, i%500))
				if _, err := s.Set(key, []byte("value"), SetOptions{}); err != nil {
					t.Error(err)
					return
				}
				if v, ok := s.Get(key); ok && string(v) != "value" {
					t.Errorf("Get(%q) = %q", key, v)
					return
				}
			}
		})
	}
	for range 20 {
		s.FlushAll()
		// Let the writers refill the store before the next flush.
		n := writes.Load()
		testwait.For(t, "writers to make progress", func() bool { return writes.Load() >= n+200 })
	}
	close(stop)
	wg.Wait()
	s.FlushAll()
	if n := s.Len(); n != 0 {
		t.Errorf("Len() = %d after the last Flush", n)
	}
	testwait.For(t, "Cost to return to 0", func() bool { return s.Stats().Cost == 0 })
	set(t, s, "x", "y")
	checkInvariants(t, s)
}

func TestFlushAsyncThenClose(t *testing.T) {
	// Close waits for an asynchronous flush still releasing entries.
	s, err := New(Options{MaxMemory: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	fillKeys(t, s, "k%d", 20000)
	s.FlushAll()
	s.Close()
}

func TestCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 5 {
		s, err := New(Options{MaxMemory: 1 << 20, ExpireInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		set(t, s, "k", "v")
		s.FlushAll()
		s.Close()
	}
	testwait.For(t, "the stores' goroutines to exit", func() bool {
		return runtime.NumGoroutine() <= before
	})
}

// TestScanFilterType: SCAN's TYPE keeps the keys of that type, which the
// filter decides as it visits them, beside MATCH.
func TestScanFilterType(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 64 << 20})
	strings := fillKeys(t, s, "s:%d", 300)
	hashes := map[string]bool{}
	for i := range 300 {
		k := fmt.Sprintf("h:%d", i)
		hset(t, s, k, "f", "v")
		hashes[k] = true
	}
	scan := func(f ScanFilter) []string {
		var got []string
		for cursor := uint64(0); ; {
			next, keys := s.Scan(cursor, f, 10)
			got = append(got, keys...)
			if next == 0 {
				return got
			}
			cursor = next
		}
	}
	if diff := sameSet(scan(ScanFilter{Type: TypeHash, OfType: true}), hashes); diff != "" {
		t.Errorf("TYPE hash: %s", diff)
	}
	if diff := sameSet(scan(ScanFilter{Type: TypeString, OfType: true}), strings); diff != "" {
		t.Errorf("TYPE string: %s", diff)
	}
	if diff := sameSet(scan(ScanFilter{Pattern: []byte("h:1?"), Type: TypeHash, OfType: true}), setOf("h:10", "h:11", "h:12", "h:13", "h:14", "h:15", "h:16", "h:17", "h:18", "h:19")); diff != "" {
		t.Errorf("MATCH h:1? TYPE hash: %s", diff)
	}
	if got := scan(ScanFilter{Pattern: []byte("s:*"), Type: TypeHash, OfType: true}); len(got) != 0 {
		t.Errorf("MATCH s:* TYPE hash: %q, want none", got)
	}
}
