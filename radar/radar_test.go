package radar

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/fakeclock"
)

func newTracker(capacity int) (*Tracker, *fakeclock.Clock) {
	clk := fakeclock.New()
	return New(Options{Capacity: capacity, Now: clk.Now}), clk
}

// TestSpaceSavingBound checks the summary's guarantee over a window of
// several buckets: with N the window's weight and k the capacity, every key
// whose true weight is above N/k is listed, and every listed count is at
// least the true weight, at most N/k above it, and Err bounds the excess.
func TestSpaceSavingBound(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		tr, clk := newTracker(16)
		r := rand.New(rand.NewPCG(seed, seed))
		zipf := rand.NewZipf(r, 1.2, 1, 5000)
		exact := map[string]uint64{}
		for step := 0; step < 6; step++ { // six 10 s buckets: the minute
			for i := 0; i < 5000; i++ {
				key := fmt.Sprintf("k%d", zipf.Uint64())
				exact[key]++
				tr.Joined(key)
			}
			clk.Advance(10 * time.Second)
		}
		clk.Advance(-10 * time.Second) // back into the last bucket
		entries, total := tr.Top(Waiters, Minute, 0, nil)
		if total != 30000 {
			t.Fatalf("total %d, want 30000", total)
		}
		bound := total / 16
		listed := map[string]Entry{}
		for _, e := range entries {
			listed[e.Key] = e
			truth := exact[e.Key]
			if e.Count < truth || e.Count > truth+bound || e.Count-e.Err > truth {
				t.Fatalf("seed %d: %s counted %d (err %d), true %d, bound %d", seed, e.Key, e.Count, e.Err, truth, bound)
			}
		}
		for key, truth := range exact {
			if _, ok := listed[key]; truth > bound && !ok {
				t.Fatalf("seed %d: %s with %d > N/k = %d not listed", seed, key, truth, bound)
			}
		}
		if top, _ := tr.Top(Waiters, Minute, 1, nil); top[0].Key != "k0" {
			t.Fatalf("seed %d: top key %s, want k0", seed, top[0].Key)
		}
	}
}

// TestWindowsSlide checks that events leave the minute after a minute
// and the ten minutes after ten.
func TestWindowsSlide(t *testing.T) {
	tr, clk := newTracker(8)
	tr.Called("a", "l:", 20*time.Millisecond, false)
	tr.Called("a", "l:", 40*time.Millisecond, true)
	count := func(m Measure, w Window) uint64 {
		e, _ := tr.Top(m, w, 0, nil)
		if len(e) == 0 {
			return 0
		}
		return e[0].Count
	}
	if count(Calls, Minute) != 2 || count(Failures, Minute) != 1 || count(Latency, Minute) != 60 {
		t.Fatalf("calls %d failures %d latency %d", count(Calls, Minute), count(Failures, Minute), count(Latency, Minute))
	}
	clk.Advance(61 * time.Second)
	if count(Calls, Minute) != 0 || count(Calls, TenMinutes) != 2 {
		t.Fatalf("after a minute: 1m %d, 10m %d", count(Calls, Minute), count(Calls, TenMinutes))
	}
	clk.Advance(10 * time.Minute)
	if count(Calls, TenMinutes) != 0 {
		t.Fatalf("after ten minutes: %d", count(Calls, TenMinutes))
	}
}

func TestLoadersAndHistory(t *testing.T) {
	tr, clk := newTracker(8)
	for i := 0; i < 99; i++ {
		tr.Called(fmt.Sprint("k", i), "fast:", 10*time.Millisecond, false)
	}
	tr.Called("slow", "fast:", time.Second, true)
	tr.Cooldown("fast:")
	for i := 0; i < 7; i++ {
		tr.Read()
	}
	h := tr.Loaders(Minute, nil)
	if len(h) != 1 || h[0].Calls != 100 || h[0].Failures != 1 || h[0].Cooldowns != 1 {
		t.Fatalf("health %+v", h)
	}
	if p := h[0].P50; p < 10*time.Millisecond || p > 12500*time.Microsecond {
		t.Fatalf("p50 %v, want 10ms within 25%%", p)
	}
	if p := h[0].P99; p < 10*time.Millisecond || p > 12500*time.Microsecond {
		t.Fatalf("p99 %v, want 10ms within 25%% (99 of 100 calls)", p)
	}
	clk.Advance(time.Second)
	hist := tr.History(3)
	if len(hist) != 3 || hist[1].Reads != 7 || hist[1].Calls != 100 || hist[2].Reads != 0 {
		t.Fatalf("history %+v", hist)
	}
	clk.Advance(HistorySeconds * time.Second)
	if hist := tr.History(HistorySeconds); hist[0].Reads != 0 {
		t.Fatalf("a second %d s old still counts", HistorySeconds)
	}
}

func TestLongKeysAreCut(t *testing.T) {
	tr, _ := newTracker(8)
	long := strings.Repeat("é", MaxKey) // two bytes each: cut at a character
	tr.Stale(long)
	e, _ := tr.Top(Stale, Minute, 0, nil)
	if len(e) != 1 || !e[0].Truncated || !strings.HasPrefix(long, strings.TrimSuffix(e[0].Key, ellipsis)) ||
		len(e[0].Key) > MaxKey+len(ellipsis) {
		t.Fatalf("entries %+v", e)
	}
	if e, _ := tr.Top(Stale, Minute, 0, func(key string, truncated bool) bool { return !truncated }); len(e) != 0 {
		t.Fatalf("the filter saw %+v", e)
	}
}

func TestNilTracker(t *testing.T) {
	var tr *Tracker
	tr.Read()
	tr.Joined("k")
	tr.Called("k", "l:", time.Second, false)
	if e, _ := tr.Top(Calls, Minute, 0, nil); e != nil {
		t.Fatal(e)
	}
}

func TestParse(t *testing.T) {
	for _, m := range Measures {
		if got, ok := ParseMeasure(strings.ToUpper(m.String())); !ok || got != m {
			t.Fatal(m)
		}
	}
	if w, ok := ParseWindow("10M"); !ok || w != TenMinutes {
		t.Fatal(w)
	}
	if _, ok := ParseWindow("5m"); ok {
		t.Fatal("5m parsed")
	}
}

// TestNoAllocationOnTrackedKey: the hot path of a key the summaries
// already track allocates nothing.
func TestNoAllocationOnTrackedKey(t *testing.T) {
	tr, _ := newTracker(DefaultCapacity)
	tr.Joined("hot")
	tr.Stale("hot")
	tr.Read()
	if n := testing.AllocsPerRun(1000, func() { tr.Joined("hot"); tr.Stale("hot"); tr.Read() }); n != 0 {
		t.Fatalf("%v allocations per run", n)
	}
}

// TestMemoryBound fills every summary of every bucket with keys of
// MaxKey bytes and every bucket with MaxLoaders loaders, and holds the
// heap it took to MemoryBound, itself at most 1 MiB by default.
func TestMemoryBound(t *testing.T) {
	if b := MemoryBound(DefaultCapacity); b > 1<<20 {
		t.Fatalf("MemoryBound(DefaultCapacity) = %d, over 1 MiB", b)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	clk := fakeclock.New()
	tr := New(Options{Now: clk.Now})
	n := 0
	for step := 0; step < 10; step++ { // every bucket of both windows
		for i := 0; i < 4*DefaultCapacity; i++ {
			n++
			key := fmt.Sprintf("%0*d", MaxKey+10, n)
			tr.Called(key, fmt.Sprintf("loader%02d:", i%(MaxLoaders+2)), time.Millisecond, true)
			tr.Joined(key)
			tr.Stale(key)
		}
		clk.Advance(time.Minute)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	used := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("tracker heap %d bytes, bound %d", used, MemoryBound(DefaultCapacity))
	if used > int64(MemoryBound(DefaultCapacity)) {
		t.Fatalf("the tracker holds %d bytes, over its bound %d", used, MemoryBound(DefaultCapacity))
	}
	runtime.KeepAlive(tr)
}

// BenchmarkJoinedTracked is the cost of an event of a tracked key.
func BenchmarkJoinedTracked(b *testing.B) {
	tr := New(Options{})
	tr.Joined("hot")
	b.ReportAllocs()
	for b.Loop() {
		tr.Joined("hot")
	}
}

// BenchmarkStaleSpread is the cost of stale answers spread over many
// keys, most of which take the smallest counter.
func BenchmarkStaleSpread(b *testing.B) {
	tr := New(Options{})
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprint("key:", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tr.Stale(keys[i&4095])
		i++
	}
}

// BenchmarkRead is the radar's cost on every read-through answer.
func BenchmarkRead(b *testing.B) {
	tr := New(Options{})
	b.ReportAllocs()
	for b.Loop() {
		tr.Read()
	}
}

// BenchmarkReadServerClock is Read on a clock kept in an atomic word, as
// the server's (internal/clock) is: the radar's whole cost on a GETFILL hit.
func BenchmarkReadServerClock(b *testing.B) {
	now := time.Now()
	tr := New(Options{Now: func() time.Time { return now }})
	b.ReportAllocs()
	for b.Loop() {
		tr.Read()
	}
}
