package radar

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Measure is what keys are ranked by.
type Measure uint8

// The measures.
const (
	// Calls: origin calls (loads that reached the origin).
	Calls Measure = iota
	// Waiters: callers that joined a load another caller started.
	Waiters
	// Stale: stale answers served (within the grace, or stale-if-error,
	// or after a caller's TIMEOUT).
	Stale
	// Failures: origin calls that failed.
	Failures
	// Latency: the time origin calls took, summed, in milliseconds.
	Latency
	numMeasures
)

var measureNames = [numMeasures]string{"calls", "waiters", "stale", "failures", "latency"}

// String names the measure as FILL.TOP's BY does.
func (m Measure) String() string {
	if m < numMeasures {
		return measureNames[m]
	}
	return "unknown"
}

// Measures lists every measure, in FILL.TOP's order.
var Measures = [...]Measure{Calls, Waiters, Stale, Failures, Latency}

// ParseMeasure reads a measure's name, case-insensitively.
func ParseMeasure(s string) (Measure, bool) {
	for m, name := range measureNames {
		if equalFold(s, name) {
			return Measure(m), true
		}
	}
	return 0, false
}

// Window is how far back the radar looks.
type Window uint8

// The windows. Each is kept as buckets (six of 10 s, ten of a minute), so
// it covers the current bucket and the whole ones before it: the last
// minute is the last 50 to 60 s, the last ten the last 9 to 10 minutes.
const (
	Minute Window = iota
	TenMinutes
	numWindows
)

var windowNames = [numWindows]string{"1m", "10m"}

// String names the window as FILL.TOP's WINDOW does.
func (w Window) String() string {
	if w < numWindows {
		return windowNames[w]
	}
	return "unknown"
}

// ParseWindow reads a window's name (1m or 10m), case-insensitively.
func ParseWindow(s string) (Window, bool) {
	for w, name := range windowNames {
		if equalFold(s, name) {
			return Window(w), true
		}
	}
	return 0, false
}

var windowShape = [numWindows]struct {
	width   time.Duration
	buckets int
}{Minute: {10 * time.Second, 6}, TenMinutes: {time.Minute, 10}}

// Defaults and bounds.
const (
	// DefaultCapacity is the counters of each summary: a key above
	// 1/32nd of a window's weight of a measure is always listed.
	DefaultCapacity = 32
	// MaxKey is the longest key kept whole; a longer one is kept as its
	// first MaxKey bytes and "…" (Entry.Truncated).
	MaxKey = 128
	// MaxLoaders is the loaders whose health each bucket keeps; the rest
	// are counted under OtherLoaders.
	MaxLoaders = 32
	// HistorySeconds is how many seconds of reads and origin calls the
	// radar keeps (History).
	HistorySeconds = 600
)

// OtherLoaders names the loaders past MaxLoaders in a bucket.
const OtherLoaders = "(other)"

// ellipsis ends a key cut at MaxKey.
const ellipsis = "…"

// Options configure a Tracker.
type Options struct {
	// Capacity is the counters of each summary; if zero,
	// DefaultCapacity. The error bound of a window is its weight over
	// Capacity.
	Capacity int
	// Now is the clock, the server's one (the Filler's). If nil,
	// time.Now.
	Now func() time.Time
}

// Tracker is the radar. The zero value is not usable: make one with New.
// A nil *Tracker records nothing and answers empty, so the Filler can do
// without one. It is safe for concurrent use.
type Tracker struct {
	now      func() time.Time
	capacity int

	mu      sync.Mutex // guards windows; never held across I/O
	windows [numWindows][]bucket

	history [HistorySeconds]second
}

// bucket is one time slice of a window: a summary per measure and each
// loader's health.
type bucket struct {
	epoch    int64 // unix time / the window's width; -1: never used
	measures [numMeasures]summary
	loaders  map[string]*loaderCounts
}

// loaderCounts is one loader's health in one bucket.
type loaderCounts struct {
	calls, failures, cooldowns uint64
	hist                       latencyHist
}

// second counts one second's reads and origin calls. at is written after
// the counts are zeroed, so a writer that finds its second in at adds to
// zeroed counts.
type second struct {
	at           atomic.Int64 // unix seconds + 1; 0: never used
	reads, calls atomic.Uint64
}

// New returns a Tracker.
func New(opts Options) *Tracker {
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &Tracker{now: opts.Now, capacity: opts.Capacity}
	for w := range t.windows {
		t.windows[w] = make([]bucket, windowShape[w].buckets)
		for i := range t.windows[w] {
			b := &t.windows[w][i]
			b.epoch = -1
			for m := range b.measures {
				b.measures[m] = newSummary(opts.Capacity)
			}
			b.loaders = make(map[string]*loaderCounts)
		}
	}
	return t
}

// Capacity is the counters of each summary.
func (t *Tracker) Capacity() int { return t.capacity }

// MemoryBound is the most a Tracker of capacity counters per summary holds,
// in bytes, with every key MaxKey bytes long and MaxLoaders loaders in
// every bucket: about 0.9 MiB at DefaultCapacity. A test holds a Tracker
// to it.
func MemoryBound(capacity int) int {
	buckets := 0
	for _, s := range windowShape {
		buckets += s.buckets
	}
	// A counter: the heap slot (key header, count, error) and the map's
	// slot (key header, index, and the map's own share, rounded up), and
	// the key's bytes.
	const perCounter = 40 + 48 + MaxKey + len(ellipsis)
	const perLoader = 16 + 8 + 24 + histSize*4 + 48 + 32 // name, pointer, counts, histogram, map slot, name bytes
	perBucket := int(numMeasures)*(capacity*perCounter+64) + MaxLoaders*perLoader + 128
	return buckets*perBucket + HistorySeconds*24 + 512
}

// Read counts a read-through read (every GETFILL, MGETFILL key or
// FILL.LEASE answer), for the reads per second: the one thing the radar
// does on a hit, two atomic operations on the current second.
func (t *Tracker) Read() {
	if t == nil {
		return
	}
	t.second(t.now().Unix()).reads.Add(1)
}

// Joined counts a caller of key that joined a load another started.
func (t *Tracker) Joined(key string) {
	if t == nil {
		return
	}
	t.add(key, Waiters, 1)
}

// Stale counts a stale answer of key.
func (t *Tracker) Stale(key string) {
	if t == nil {
		return
	}
	t.add(key, Stale, 1)
}

// Cooldown counts an answer of loader's that was a remembered failure,
// given without an origin call (the key cools down).
func (t *Tracker) Cooldown(loader string) {
	if t == nil {
		return
	}
	now := t.now().Unix()
	t.mu.Lock()
	for w := range t.windows {
		t.loaderIn(t.bucket(Window(w), now), loader).cooldowns++
	}
	t.mu.Unlock()
}

// Called counts an origin call of key by loader that took took, and
// whether it failed.
func (t *Tracker) Called(key, loader string, took time.Duration, failed bool) {
	if t == nil {
		return
	}
	now := t.now().Unix()
	t.second(now).calls.Add(1)
	key, _ = cut(key)
	ms := uint64(max(took, 0) / time.Millisecond)
	t.mu.Lock()
	for w := range t.windows {
		b := t.bucket(Window(w), now)
		b.measures[Calls].add(key, 1)
		if ms > 0 {
			b.measures[Latency].add(key, ms)
		}
		if failed {
			b.measures[Failures].add(key, 1)
		}
		lc := t.loaderIn(b, loader)
		lc.calls++
		if failed {
			lc.failures++
		}
		lc.hist.add(took)
	}
	t.mu.Unlock()
}

// add adds w to key's count of measure m in every window.
func (t *Tracker) add(key string, m Measure, w uint64) {
	now := t.now().Unix()
	key, _ = cut(key)
	t.mu.Lock()
	for win := range t.windows {
		t.bucket(Window(win), now).measures[m].add(key, w)
	}
	t.mu.Unlock()
}

// cut returns key as the radar keeps it: whole, or cut at MaxKey (at a
// character's start) with "…".
func cut(key string) (string, bool) {
	if len(key) <= MaxKey {
		return key, false
	}
	n := MaxKey
	for n > 0 && !utf8.RuneStart(key[n]) {
		n--
	}
	return key[:n] + ellipsis, true
}

// bucket returns window w's bucket for unix time now, emptied if it last
// held an older slice. t.mu must be held.
func (t *Tracker) bucket(w Window, now int64) *bucket {
	epoch := now / int64(windowShape[w].width/time.Second)
	bs := t.windows[w]
	b := &bs[int(epoch%int64(len(bs)))]
	if b.epoch != epoch {
		for m := range b.measures {
			b.measures[m].reset()
		}
		clear(b.loaders)
		b.epoch = epoch
	}
	return b
}

// loaderIn returns loader's counts in b, or OtherLoaders' once b holds
// MaxLoaders.
func (t *Tracker) loaderIn(b *bucket, loader string) *loaderCounts {
	if lc := b.loaders[loader]; lc != nil {
		return lc
	}
	if len(b.loaders) >= MaxLoaders {
		loader = OtherLoaders
		if lc := b.loaders[loader]; lc != nil {
			return lc
		}
	}
	lc := &loaderCounts{}
	b.loaders[loader] = lc
	return lc
}

// second returns unix second now's counts, zeroed if they held an older
// second's.
func (t *Tracker) second(now int64) *second {
	s := &t.history[int(now%HistorySeconds)]
	if s.at.Load() != now+1 {
		t.mu.Lock()
		if s.at.Load() != now+1 {
			s.reads.Store(0)
			s.calls.Store(0)
			s.at.Store(now + 1)
		}
		t.mu.Unlock()
	}
	return s
}

// live returns window w's buckets that hold part of the window at unix
// time now. t.mu must be held.
func (t *Tracker) live(w Window, now int64) []*bucket {
	epoch := now / int64(windowShape[w].width/time.Second)
	bs := t.windows[w]
	var out []*bucket
	for i := range bs {
		if b := &bs[i]; b.epoch >= 0 && b.epoch > epoch-int64(len(bs)) && b.epoch <= epoch {
			out = append(out, b)
		}
	}
	return out
}

// Entry is one key of Top.
type Entry struct {
	// Key is the key, or its first MaxKey bytes and "…" (Truncated).
	Key       string
	Truncated bool
	// Count is the key's weight in the window (Latency: milliseconds);
	// it is at least the true weight and at most Err above it.
	Count uint64
	Err   uint64
}

// Top returns the n keys (n ≤ 0: all) with the highest counts of m over
// window w, highest first, among those visible says may be shown (nil:
// all). Every key whose weight is above Total/Capacity is among them when
// n is large enough.
func (t *Tracker) Top(m Measure, w Window, n int, visible func(key string, truncated bool) bool) (entries []Entry, total uint64) {
	if t == nil {
		return nil, 0
	}
	now := t.now().Unix()
	t.mu.Lock()
	live := t.live(w, now)
	type est struct{ count, err uint64 }
	ests := map[string]*est{}
	for _, b := range live {
		s := &b.measures[m]
		total += s.total
		for _, c := range s.heap {
			if ests[c.key] == nil {
				ests[c.key] = &est{}
			}
		}
	}
	// A key with no counter in a bucket may have had up to its floor.
	for _, b := range live {
		s := &b.measures[m]
		floor := s.floor()
		for k, e := range ests {
			if i, ok := s.index[k]; ok {
				e.count += s.heap[i].count
				e.err += s.heap[i].err
			} else {
				e.count += floor
				e.err += floor
			}
		}
	}
	t.mu.Unlock()
	for k, e := range ests {
		// cut leaves MaxKey-3 to MaxKey bytes before the ellipsis; a real
		// key of that shape is taken as cut, which only hides it more.
		truncated := len(k) >= MaxKey-3+len(ellipsis) && strings.HasSuffix(k, ellipsis)
		if visible != nil && !visible(k, truncated) {
			continue
		}
		entries = append(entries, Entry{Key: k, Truncated: truncated, Count: e.count, Err: e.err})
	}
	slices.SortFunc(entries, func(a, b Entry) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if n > 0 && len(entries) > n {
		entries = entries[:n]
	}
	return entries, total
}

// LoaderHealth is one loader's origin calls over a window.
type LoaderHealth struct {
	Loader                     string
	InFlight                   int64 // origin calls running now
	Calls, Failures, Cooldowns uint64
	// P50 and P99 are the load times half and 99% of its calls took at
	// most, to the histogram's precision (within 25%); zero without calls.
	P50, P99 time.Duration
}

// Loaders returns the health of each loader that called its origin or
// answered from a cooldown in window w, and of each of inFlight's (the
// registered loaders' calls running now), by name.
func (t *Tracker) Loaders(w Window, inFlight map[string]int64) []LoaderHealth {
	if t == nil {
		return nil
	}
	now := t.now().Unix()
	sum := map[string]*loaderCounts{}
	t.mu.Lock()
	for _, b := range t.live(w, now) {
		for name, lc := range b.loaders {
			s := sum[name]
			if s == nil {
				s = &loaderCounts{}
				sum[name] = s
			}
			s.calls += lc.calls
			s.failures += lc.failures
			s.cooldowns += lc.cooldowns
			s.hist.merge(&lc.hist)
		}
	}
	t.mu.Unlock()
	for name := range inFlight {
		if sum[name] == nil {
			sum[name] = &loaderCounts{}
		}
	}
	out := make([]LoaderHealth, 0, len(sum))
	for name, s := range sum {
		out = append(out, LoaderHealth{Loader: name, InFlight: inFlight[name], Calls: s.calls, Failures: s.failures,
			Cooldowns: s.cooldowns, P50: s.hist.quantile(0.5), P99: s.hist.quantile(0.99)})
	}
	slices.SortFunc(out, func(a, b LoaderHealth) int { return cmp.Compare(a.Loader, b.Loader) })
	return out
}

// Second is one second's reads and origin calls.
type Second struct {
	At           int64 // unix seconds
	Reads, Calls uint64
}

// History returns the last n seconds (at most HistorySeconds), oldest
// first, the current one last; a second nothing happened in counts zero.
func (t *Tracker) History(n int) []Second {
	if t == nil {
		return nil
	}
	n = min(max(n, 0), HistorySeconds)
	now := t.now().Unix()
	out := make([]Second, n)
	for i := range out {
		at := now - int64(n-1-i)
		out[i].At = at
		s := &t.history[int(at%HistorySeconds)]
		if s.at.Load() == at+1 {
			out[i].Reads, out[i].Calls = s.reads.Load(), s.calls.Load()
		}
	}
	return out
}

// equalFold compares ASCII case-insensitively.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
