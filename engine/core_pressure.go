package engine

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/stampedeless/stampedeless/internal/memsize"
)

// The memory bound of a store that owns its process (Options.OwnsProcess):
// the entries' costs are held to MaxMemory by eviction, and what the
// process holds beside them is charged against the same bound
// (chargeDrift), measured as often as memoryWatchEvery, so that the
// resident set keeps the promise of docs/operations.md (processTotal) at
// its peak too.

// memoryWatchEvery is how often watchMemory reads the resident set near
// the store's aim. Where one kind of value replaces another (the typed
// churn's sets, then 4 KB hashes), the resident set rose 3 to 6 MiB in the
// 100 ms between two of the sweeper's ticks, which the charge then met
// only after the peak. A read (/proc/self/statm, runtime/metrics, Go's
// memory limit set) took 13 µs on the 2-core bench machine: a hundred a
// second are 0.13% of a core.
const memoryWatchEvery = 10 * time.Millisecond

// memoryWatchFar is how often it reads it while the process is far below
// its aim (watchNear): each of the hundred wakings a second is a timer
// firing in Go's scheduler (a futex call and a switch), which a serving
// process far from its bound (the speed benchmarks') has no use for.
const memoryWatchFar = 100 * time.Millisecond

// watchNear is how far below its aim the process is near it: a quarter of
// the aim, at least 32 MiB, more than a process can grow in memoryWatchFar
// (a 32 MiB bound's process is always near).
func watchNear(aim int64) int64 { return max(aim/4, 32<<20) }

// watchMemory keeps a store that owns its process within its promise
// until the store closes: every memoryWatchEvery (memoryWatchFar while the
// process is far below its aim, or no write came since the last look: a
// full cache at rest is near its aim for good, and a hundred wakings a
// second were most of what it spent; never less often than interval, the
// sweeper's) it charges the drift (chargeDrift), sets Go's memory limit to
// what the arena leaves (processLimit) and wakes the compactor if there
// is enough to win back; every interval the pressure takes a step (its
// rise and decay are per 100 ms).
func (s *Store) watchMemory(interval time.Duration) {
	defer s.bg.Done()
	t := time.NewTimer(min(interval, memoryWatchEvery))
	defer t.Stop()
	lastStep := time.Now()
	lastChanges := s.changes.Load()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			// The timer is set again after each read, so a step is
			// taken when one is due give or take half a watch.
			step := now.Sub(lastStep) >= interval-memoryWatchEvery/2
			if step {
				lastStep = now
			}
			every := memoryWatchFar
			if s.chargeDrift(step) && s.changes.Load() != lastChanges {
				every = memoryWatchEvery
			}
			lastChanges = s.changes.Load()
			debug.SetMemoryLimit(s.processLimit())
			s.kickCompactor()
			t.Reset(min(interval, every))
		}
	}
}

// chargeDrift charges, for a store that owns its process, what the
// process holds beyond what is charged: Go's live heap and the arena's
// live records, less the entries' costs and the bytes charged with Charge.
// EntryOverhead is an average (the indexes hold between 3/8 and 3/4 of
// their slots), and the process holds what no entry is charged for
// (connections' buffers, scripts); so that what the process holds stays within the
// bound, the entries get the bound less that too. The charge rises to the
// measure at once and, on a step (every 100 ms), falls halfway to it (a
// burst's transient buffers are not charged for long), at most half the
// bound.
//
// The live heap is not all the process holds: when one kind of value
// replaces another, the freed objects leave Go's spans of their size
// classes partly empty, which the new values cannot use, and a heap whose
// live objects and those holes pass Go's memory limit stays past it
// however often the collector runs. So the charge also counts how far
// the process's resident set is past its aim (processAim: processTotal
// less peakSlack), or where there is no /proc what Go's runtime and the
// arena hold past their budget (processBudget), three ways:
//
//   - the pressure: half of it added up on each step while it is passed,
//     decayed by a sixteenth a step while it is not, so that eviction
//     frees objects until the holes are reused or released;
//   - the excess itself, at once (recomputed at each read), so that the
//     next writes evict that much while the pressure builds up;
//   - and the entries never have more room under the bound than the
//     resident set has under its aim: what they may still take is at
//     most the aim less the resident set, so that a new kind of value
//     cannot fill room the old one's holes have taken.
//
// It also records the heap's holes (peakSlack) and whether the process is
// within squeezeMargin of its aim (the compactor's squeeze), and reports
// whether it is near its aim (watchNear).
func (s *Store) chargeDrift(step bool) (near bool) {
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(samples)
	s.holes.Store(int64(samples[3].Value.Uint64()))
	held := int64(samples[0].Value.Uint64()) + s.arena.Live()
	charged := s.used.Load() + s.external.Load() - s.drift
	// The resident set where /proc tells it: Go's own count of what it
	// holds takes in metadata it has reserved but not touched, about
	// 8 MiB past the resident set at a 64 MiB bound.
	aim := s.processAim()
	var over int64
	if rss, _, ok := memsize.Resident(); ok {
		over = rss - aim
		// Go may hold what it holds now and what the resident set has
		// left under the aim (processLimit).
		s.runtimeLimit.Store(max(int64(samples[1].Value.Uint64())-int64(samples[2].Value.Uint64())-over, minProcessLimit))
	} else {
		over = int64(samples[1].Value.Uint64()) - int64(samples[2].Value.Uint64()) + s.arena.Mapped() - s.processBudget()
	}
	s.squeezed.Store(over > -squeezeMargin)
	near = over > -watchNear(aim)
	if step {
		if over > 0 {
			s.pressure = min(s.pressure+over/2, s.MaxMemory()/2)
		} else {
			s.pressure -= s.pressure / 16
		}
	}
	delta := driftCharge(s.MaxMemory(), held, charged, s.pressure, over) - s.drift
	if delta < 0 {
		if !step {
			return near
		}
		delta /= 2
	}
	if delta != 0 {
		s.drift += delta
		s.Charge(delta)
	}
	return near
}

// driftCharge is the drift charge chargeDrift aims at, for a bound, what
// the process holds (held) and what is charged besides the drift
// (charged), the pressure, and how far the resident set is past its aim
// (over; negative: under it).
func driftCharge(bound, held, charged, pressure, over int64) int64 {
	want := max(held-charged, 0) + pressure
	// The entries' room under the bound, bound-charged-want, at most the
	// resident set's under its aim; past the aim, the excess evicted.
	want = max(want, bound-charged-max(-over, 0)) + max(over, 0)
	return min(want, bound/2)
}

// squeezeMargin: within it of its aim, the process is squeezed, and the
// compactor wins back more of the arena (compactSqueezeFraction).
const squeezeMargin = 2 << 20

// processLimit is the soft memory limit for Go's runtime when the store owns
// the process: its budget (processBudget) less the arena's mappings, which
// are outside the runtime's count. What the limit leaves the runtime is
// what the entries' charges expect on Go's heap (EntryOverhead covers each
// one's index slot and sketch share, a heap object's charge is
// what it holds) plus a margin for garbage. It has no floor but a token
// one: a floor above what the bound leaves (there was one of 32 MiB) lets
// the heap grow past the bound at small bounds, and a limit below what the
// runtime holds live only makes the collector work harder (Go caps it at
// half the CPU) while the process is over its bound anyway; chargeDrift
// then evicts.
//
// Where /proc tells the resident set, chargeDrift sets the limit instead
// to what Go's runtime holds by its own count and what the resident set
// has left under its aim (runtimeLimit): Go's count takes in metadata it
// reserved but never touched (8 MiB and more at a 64 MiB bound), so the
// budget less the arena put the limit below what the runtime held live
// once the indexes on its heap (charged with the entries) grew with the
// keys the bound holds, and the collector ran without pause at rest (19%
// of a core after a churn at a 64 MiB bound).
func (s *Store) processLimit() int64 {
	if s.MaxMemory() == 0 {
		return math.MaxInt64 // no bound, so no limit: Go's default
	}
	if l := s.runtimeLimit.Load(); l > 0 {
		return l
	}
	return max(s.processBudget()-s.arena.Mapped(), minProcessLimit)
}

// processBudget is what Go's runtime and the arena together may hold when
// the store owns the process: what it aims to hold (processAim), less what
// is resident outside their count: the binary's pages (about 14 MiB, read
// from /proc where there is one) and 2 MiB for the rest.
func (s *Store) processBudget() int64 {
	return s.processAim() - fileResident() - 2<<20
}

// processAim is the resident set the store steers the process to: its
// promise (processTotal) less peakSlack.
func (s *Store) processAim() int64 { return s.processTotal() - s.peakSlack() }

// peakSlack is how far below its promise the process aims, so that its
// peak keeps the promise too: Go's memory limit is soft (the collector
// takes at most half the CPU, and the heap grows past the limit while it
// would need more) and the charge (chargeDrift) follows the resident set
// only as often as memoryWatchEvery, so under a churn of writes the
// resident set swings a few MiB past where it is steered. Aimed at the
// promise less a thirty-second of the bound, the typed churn's sorted
// sets peaked 4 to 6 MiB past it at a 32 MiB bound: an eighth of the
// bound, at least 4 MiB.
//
// Past that, a quarter of the heap's holes (Go's free room in spans in
// use, holes as chargeDrift last read it): the room that one kind of
// value's evicted objects left in their size classes, which the next kind
// cannot use. When what is written changes, its new objects take new
// spans while the old holes empty only as the last of their neighbours
// go, so the resident set rises by about what arrives in the time the
// charge takes to evict it: with the typed churn's sets' 13 MiB of holes,
// 3 to 5 MiB as the 4 KB hashes came. Aiming lower while there are holes
// gives that rise its room; there are few but where collections on the
// heap churn.
func (s *Store) peakSlack() int64 { return max(s.bound()/8, 4<<20) + s.holes.Load()/4 }

// processTotal is the resident memory the process may take in all when
// the store owns it: 1.15 times MaxMemory plus 24 MiB (the bound docs/operations.md
// promises).
func (s *Store) processTotal() int64 {
	if s.MaxMemory() == 0 {
		return unbounded
	}
	return s.MaxMemory() + s.MaxMemory()*15/100 + 24<<20
}

// minProcessLimit is processLimit's token floor.
const minProcessLimit = 4 << 20
