package engine

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// Eviction is Redis's (evict.c), over the access stamps the index keeps
// beside each slot (core_access.go) and, for the LFU policies, the store's own
// frequency sketch (engine/internal/tinylfu), with no per-key structure
// besides them and no goroutine:
//
//   - A write that finds the store over its bound makes room before it
//     changes anything (admit), as Redis's processCommand does before a
//     command: the write's own key is never its own eviction's victim, so
//     an acknowledged write is readable by the next command of any client
//     until later writes evict it. It evicts until the store is within
//     its bound, or for as long as maxmemory-eviction-tenacity allows,
//     leaving the rest to the writes after it.
//   - A victim is chosen as Redis's evictionPoolPopulate chooses it: each
//     round samples maxmemory-samples keys (consecutive slots of a random
//     shard's index, keys with a deadline only for the volatile policies),
//     scores each, and keeps the evictionPoolSize best candidates across
//     rounds and writes; the best one still in the store goes. Random
//     policies take a sampled key as it is.
//   - Scores: the idle seconds for LRU; for LFU, first how seldom the
//     sketch saw the key (on a log scale), then Redis's own decayed counter
//     (OBJECT FREQ), then the idle minutes; for volatile-ttl, how near the
//     deadline is. A
//     few random low bits break ties, so keys of equal score go in no
//     order a client can arrange.
//
// Admission, TinyLFU's idea, is in the LFU score: the sketch counts every
// read, hit or miss, and every write, of keys held or not (4-bit counters,
// halved every ten reads per key of its capacity), so a new key is stored
// as in Redis and competes when it is next sampled, a newcomer seen once
// losing to an established key seen often, and a key that comes back after
// eviction keeps its history. The window that protects a burst of new hot
// keys is the sampling itself: a key is a candidate only once a round
// samples it, on average after a fifth of the keys' count of evictions,
// by which time a hot key has been counted.
const (
	// evictionPoolSize is Redis's EVPOOL_SIZE.
	evictionPoolSize = 16
	// evictCheckEvery: the time limit is read every this many evictions,
	// as Redis reads it every 16 keys.
	evictCheckEvery = 16
	// evictFruitless is how many rounds in a row may find no candidate, or
	// only candidates no longer in the store, before eviction gives up for
	// this write: writes racing with it, or keys the sweeper must leave.
	evictFruitless = 64
)

// candidate is a key an eviction round sampled: the top 32 bits of its
// hash (its shard's and its index slot's tag: keyBits), its record's
// location when sampled, which with them finds its slot again without the
// key, and its score, higher is evicted first.
type candidate struct {
	score uint64
	key   uint32
	loc   slab.Loc
}

// keyBits is the part of a key's hash its shard and index slot know: the
// shard's bits and the tag, the top 32 bits. The frequency sketch counts
// keys by it, so that eviction scores a key from its slot alone.
func keyBits(h uint64) uint32 { return uint32(h >> 32) }

// shardAndTag are the shard and index tag of a candidate's key.
func (c candidate) shardAndTag() (shard int, tag uint32) {
	return int(c.key >> slab.TagBits), c.key & (1<<slab.TagBits - 1)
}

// evictor is the state eviction keeps across writes. Its lock is taken
// before any shard lock, and no shard lock is held while it is taken.
type evictor struct {
	mu     sync.Mutex
	pool   []candidate // ascending by score: the best is last
	sample []candidate // a round's scratch
}

// evictionTimeLimit is how long one write may evict for, from
// maxmemory-eviction-tenacity as Redis's evictionTimeLimitUs computes it:
// 50 µs a step to 10 (500 µs), then 15% more a step, and no limit at 100.
func evictionTimeLimit(tenacity int) time.Duration {
	switch {
	case tenacity <= 10:
		return time.Duration(50*tenacity) * time.Microsecond
	case tenacity < 100:
		return time.Duration(500*math.Pow(1.15, float64(tenacity-10))) * time.Microsecond
	}
	return math.MaxInt64
}

// overBound reports whether the entries, what Charge counted and need bytes
// more cost more than the bound.
func (s *Store) overBound(need int64) bool {
	return s.used.Load()+s.external.Load()+need > s.bound()
}

// farOverBound reports whether they cost more than the bound by more than
// overSlack: a write then waits for another that is evicting, instead of
// writing on.
func (s *Store) farOverBound() bool { return s.overBound(-s.overSlack()) }

// overSlack is how far the store may pass its bound while one write evicts
// and others write on: a thirty-second of the bound, at least 1 MiB (the
// bound's promise leaves the process 15% of it and 24 MiB).
func (s *Store) overSlack() int64 { return max(s.bound()/32, 1<<20) }

// admit returns the error a write of an entry costing cost gets before it
// changes anything, and makes room for it first: ErrTooLarge if the entry
// alone exceeds the bound; ErrOOM if the store is over its bound and
// eviction cannot bring it back (noeviction, or a volatile policy with no
// key with a deadline), as Redis refuses a write then, whatever its size.
// A write that does not know its cost yet (a collection's) passes 0: it
// makes room if the store is over its bound already, and may leave it over
// by what it adds, until the next write. The caller holds no shard lock.
func (s *Store) admit(cost int64) error {
	if s.oomAllowed.Load() {
		return nil
	}
	if err := s.fits(cost); err != nil {
		return err
	}
	if !s.overBound(cost) || s.frozen.Load() {
		return nil
	}
	if s.EvictionPolicy() == NoEviction {
		// Redis refuses a write only once the store is over: a write
		// may take it there.
		if s.overBound(0) {
			return ErrOOM
		}
		return nil
	}
	err := s.makeRoom(forWrite, cost)
	if err != nil && !s.overBound(0) {
		// Nothing to evict, but the store is within its bound: the
		// write takes it over, as under noeviction.
		return nil
	}
	return err
}

// Admit makes room as a write is about to, evicting under an allkeys or
// volatile policy, and returns ErrOOM if the store stays over its bound:
// Redis's check of a deny-oom command before it runs, for a command whose
// writes are not known yet (EXEC of a queue that may write). The caller
// holds the atomic section, as a write's handler does.
func (s *Store) Admit() error { return s.admit(0) }

// admitLocked is admit for a caller that holds a shard lock, which may not
// evict (eviction takes other shards' locks): it only refuses a write
// under noeviction. Its caller makes room after unlocking (Loader.Write)
// or leaves it to the next write.
func (s *Store) admitLocked(cost int64) error {
	if s.oomAllowed.Load() {
		return nil
	}
	if err := s.fits(cost); err != nil {
		return err
	}
	if s.EvictionPolicy() == NoEviction && s.overBound(0) && !s.frozen.Load() {
		return ErrOOM
	}
	return nil
}

// fits returns ErrTooLarge if an entry costing cost alone exceeds the
// bound.
func (s *Store) fits(cost int64) error {
	if cost > s.bound() {
		return ErrTooLarge
	}
	return nil
}

// A roomFor says who makes room, which decides how long it may evict and
// what.
type roomFor uint8

const (
	// forWrite: a write, before it changes anything. It evicts for as
	// long as the tenacity allows, and waits for another write that is
	// evicting only if the store is far over its bound.
	forWrite roomFor = iota
	// forBound: a new bound or a load's batch, which evicts until the
	// store is within its bound, however long that takes.
	forBound
	// forSweep: the sweeper, which finishes what writes left (a bound
	// that Charge lowered with no write since). It never waits, and
	// never evicts a key accessed in the last recentSeconds: a write
	// just acknowledged stays readable by the next command.
	forSweep
)

// recentSeconds: the sweeper leaves keys accessed this recently.
const recentSeconds = 2

// grown is called by a write that did not know what it would add (a
// collection's, admit(0)) once it has released its locks: if it took the
// store over its bound, it evicts back to it, never the key with hash
// kept, which it wrote, so that it stays readable by the next command.
func (s *Store) grown(kept uint64) {
	if s.overBound(0) && s.EvictionPolicy() != NoEviction {
		s.makeRoomKeeping(forWrite, 0, kept)
	}
}

// makeRoom evicts until the store has need bytes free within its bound, as
// who allows. It returns ErrOOM if that is not so and nothing can be
// evicted.
func (s *Store) makeRoom(who roomFor, need int64) error { return s.makeRoomKeeping(who, need, noKey) }

// noKey is makeRoomKeeping's kept when it keeps no key: a hash no key has
// but by a chance of 2^-64, whose key would only never be evicted so.
const noKey = 0

// makeRoomKeeping is makeRoom that never evicts the key with hash kept.
func (s *Store) makeRoomKeeping(who roomFor, need int64, kept uint64) error {
	if s.frozen.Load() {
		return nil // SetFrozen: the dataset stays as the clients left it
	}
	p := s.EvictionPolicy()
	if p == NoEviction {
		return ErrOOM
	}
	if !s.evictor.mu.TryLock() {
		if who == forSweep || (who == forWrite && !s.farOverBound()) {
			return nil
		}
		s.evictor.mu.Lock()
	}
	defer s.evictor.mu.Unlock()
	limit := time.Duration(math.MaxInt64)
	if who != forBound {
		limit = evictionTimeLimit(s.params.Load().Tenacity)
	}
	minIdle := uint32(0)
	if who == forSweep {
		minIdle = recentSeconds
	}
	start := time.Now()
	evicted, fruitless := 0, 0
	for s.overBound(need) {
		if evicted > 0 && evicted%evictCheckEvery == 0 && time.Since(start) > limit {
			return nil // the next writes go on
		}
		switch s.evictOne(p, minIdle, kept) {
		case evictedKey:
			evicted++
			fruitless = 0
		case nothingToEvict:
			return ErrOOM
		case raced:
			if fruitless++; fruitless > evictFruitless {
				return nil
			}
		}
	}
	return nil
}

// evictOutcome is what one eviction step did.
type evictOutcome uint8

const (
	evictedKey     evictOutcome = iota // a key went
	nothingToEvict                     // no shard holds a key the policy may evict
	raced                              // no candidate found, or all gone: try again
)

// evictOne evicts one key as p chooses, among those idle for at least
// minIdle seconds but the one with hash kept. The caller holds evictor.mu.
func (s *Store) evictOne(p EvictionPolicy, minIdle uint32, kept uint64) evictOutcome {
	e := &s.evictor
	samples := s.params.Load().Samples
	if p.random() {
		samples = 1
	}
	if minIdle > 0 {
		// The pool's candidates were sampled with no such condition.
		e.pool = e.pool[:0]
	}
	var eligible bool
	e.sample, eligible = s.sampleKeys(p, e.sample[:0], samples, minIdle)
	if !eligible && len(e.pool) == 0 {
		return nothingToEvict
	}
	if p.random() {
		if len(e.sample) > 0 && s.evictCandidate(p, e.sample[0], false, kept) {
			return evictedKey
		}
		return raced
	}
	for _, c := range e.sample {
		e.insert(c)
	}
	for len(e.pool) > 0 {
		c := e.pool[len(e.pool)-1]
		e.pool = e.pool[:len(e.pool)-1]
		if s.evictCandidate(p, c, true, kept) {
			return evictedKey
		}
	}
	return raced
}

// insert puts c in the pool in score order, unless the pool is full of
// better candidates; a key already there takes its new score.
func (e *evictor) insert(c candidate) {
	for i, o := range e.pool {
		if o.key == c.key && o.loc == c.loc {
			e.pool = append(e.pool[:i], e.pool[i+1:]...)
			break
		}
	}
	if len(e.pool) == evictionPoolSize {
		if c.score <= e.pool[0].score {
			return
		}
		e.pool = append(e.pool[:0], e.pool[1:]...)
	}
	i := 0
	for i < len(e.pool) && e.pool[i].score < c.score {
		i++
	}
	e.pool = append(e.pool, candidate{})
	copy(e.pool[i+1:], e.pool[i:])
	e.pool[i] = c
}

// clear empties the pool (Flush: its locations no longer mean anything).
func (e *evictor) clear() {
	e.mu.Lock()
	e.pool = e.pool[:0]
	e.mu.Unlock()
}

// sampleVisits bounds the slots the sweeper's round visits in one shard,
// per key it samples: a shard of keys accessed lately is not walked whole
// every pass. A write's round under a volatile policy walks a shard that
// holds keys with a deadline until it finds one, as Redis samples its
// expires dictionary: a bounded walk among keys without could find none,
// and the write then passes the bound.
const sampleVisits = 16

// sampleKeys appends up to n keys p may evict, idle for minIdle seconds or
// more, with their scores, from consecutive slots of one shard, the first
// from a random one where a walk finds such keys (the sweeper's walk
// bounded by sampleVisits). eligible reports
// whether any shard holds a key p may evict at all (for a volatile policy,
// one with a deadline): if not, nothing can be evicted. The allkeys
// policies score a key from its index slot alone (its tag, its location and
// its access stamp), reading no record: a record is a cache miss, and
// reading five of them made an eviction cost more than the write it made
// room for. The volatile ones read the record for its deadline.
func (s *Store) sampleKeys(p EvictionPolicy, into []candidate, n int, minIdle uint32) (_ []candidate, eligible bool) {
	start := rand.IntN(numShards)
	nowSec := s.clockSeconds()
	now := s.now()
	for i := range numShards {
		shard := (start + i) % numShards
		sh := &s.shards[shard]
		sh.mu.RLock()
		if sh.index.Len() == 0 || (p.volatile() && sh.volatile == 0) {
			sh.mu.RUnlock()
			continue
		}
		eligible = true
		visits := sampleVisits * n
		sh.index.RangeFrom(rand.IntN(sh.index.Slots()), func(pos int, loc slab.Loc) bool {
			if visits--; visits < 0 && minIdle > 0 {
				return false
			}
			var stale int64
			if p.volatile() {
				if stale = recordStale(s.arena.Block(loc)); stale == 0 {
					return true
				}
			}
			stamp := sh.index.Stamp(pos)
			if minIdle > 0 && idleSeconds(p, stamp, nowSec) < minIdle {
				return true
			}
			key := uint32(shard)<<slab.TagBits | sh.index.Tag(pos)
			into = append(into, candidate{score: s.score(p, stamp, stale, key, nowSec, now), key: key, loc: loc})
			return len(into) < n
		})
		sh.mu.RUnlock()
		if len(into) > 0 {
			return into, true
		}
	}
	return into, eligible
}

// idleSeconds is how long ago, at least, stamp says its key was accessed.
func idleSeconds(p EvictionPolicy, stamp, nowSec uint32) uint32 {
	if p.LFU() {
		return lfuElapsedSeconds(stamp, nowSec)
	}
	return nowSec - stamp
}

// score is how much p would rather evict a key than others, from its access
// stamp, its stale deadline (read for the volatile policies only: 0
// otherwise) and its keyBits: a key past its deadline first of all.
func (s *Store) score(p EvictionPolicy, stamp uint32, stale int64, key uint32, nowSec uint32, now int64) uint64 {
	if stale != 0 && stale <= now {
		return math.MaxUint64
	}
	jitter := uint64(rand.Uint32() & 0xff)
	switch {
	case p == VolatileTTL:
		return ^uint64(stale) // the nearer, the higher; below MaxUint64
	case p.LFU():
		// The sketch's count on a log scale (0, 1, 2-3, 4-7, 8-15, 16):
		// keys a count or two apart are as frequent, and Redis's counter,
		// which grows only on reads of a key held, ranks them, so that a
		// newcomer loses to a key as frequent that was read while held
		// (TinyLFU's admission: a loop larger than the cache keeps a
		// stable part of it rather than none).
		//
		// Then the idle minutes, not seconds: within minutes the order of
		// keys as frequent is left to chance, as LRU's order within them
		// evicts a loop's keys just before they are read again (a loop
		// larger than the cache at a 64 MiB bound: 0.45 with minutes,
		// 0.27 with seconds; a trace of new keys hot for seconds gains
		// from seconds, 0.713 to 0.729: bench/HISTORY.md, issue 37).
		seldom := uint64(5 - bits.Len(uint(s.sketch.Estimate(key))))
		counter := uint64(lfuCounterMax - s.lfuCounter(stamp, nowSec))
		idle := uint64(min(lfuElapsedMinutes(stamp, nowSec), 255))
		return seldom<<24 | counter<<16 | idle<<8 | jitter
	}
	return uint64(nowSec-stamp)<<8 | jitter
}

// evictCandidate evicts c's key if it is still in the store, unless its
// hash is kept, and reports whether it did. With rescore, a key whose score
// fell since it was sampled (it was read meanwhile) goes back to the pool
// instead, if the pool holds a better candidate now. The caller holds
// evictor.mu.
func (s *Store) evictCandidate(p EvictionPolicy, c candidate, rescore bool, kept uint64) bool {
	shard, tag := c.shardAndTag()
	sh := &s.shards[shard]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	pos, found := sh.index.Find(tag, func(l slab.Loc) bool { return l == c.loc })
	if !found {
		return false
	}
	victim := slot{pos: pos, loc: c.loc, rec: parseRecord(s.arena.Block(c.loc))}
	h := s.hashOf(&victim.rec)
	if kept != noKey && h == kept {
		return false
	}
	now := s.now()
	if rescore {
		score := s.score(p, sh.index.Stamp(pos), victim.rec.stale, c.key, s.clockSeconds(), now)
		if pool := s.evictor.pool; score>>8 < c.score>>8 && len(pool) > 0 && pool[len(pool)-1].score > score {
			s.evictor.insert(candidate{score: score, key: c.key, loc: c.loc})
			return false
		}
	}
	if victim.rec.stale != 0 && victim.rec.expiredAt(now) {
		s.expireLocked(sh, h, victim)
		return true
	}
	s.dbs[victim.rec.db].notify(Evicted, victim.rec.key)
	s.removeLocked(sh, h, victim)
	s.evicted.Add(1)
	return true
}
