package engine

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
	"github.com/stampedeless/stampedeless/internal/glob"
)

// Len returns the number of live keys (DBSIZE). Keys past their deadline that
// the sweeper has not removed yet are not counted, unless SetActiveExpire
// turned its removal off. A shard whose keys have
// deadlines is walked to leave the expired out, so Len locks one shard at a
// time: holding every shard for the walks (an instant, as KEYS has) stalled
// every write for the whole walk, at each DBSIZE and INFO keyspace, where
// Redis's DBSIZE costs nothing.
func (s *Store) Len() int {
	n := 0
	now := s.now()
	// With the sweeper's removal off, a key past its deadline counts until
	// a reader removes it, as Redis's DBSIZE (its dictSize) counts it then
	// (DEBUG SET-ACTIVE-EXPIRE 0).
	lazy := s.noActiveExpire.Load()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		if sh.volatile == 0 || lazy {
			n += int(sh.keys[s.db])
		} else {
			s.eachLiveLocked(sh, now, func(record) { n++ })
		}
		sh.mu.RUnlock()
	}
	return n
}

// eachLiveLocked calls fn with every record of the database in sh that is
// live at now. The caller holds sh.mu.
func (s *Store) eachLiveLocked(sh *shard, now int64, fn func(record)) {
	if sh.keys[s.db] == 0 {
		return
	}
	sh.index.Range(func(_ int, loc slab.Loc) bool {
		if b := s.arena.Block(loc); recordDB(b) == s.db {
			if rec := parseRecord(b); !rec.expiredAt(now) {
				fn(rec)
			}
		}
		return true
	})
}

// Volatile returns the number of live keys that have a deadline.
func (s *Store) Volatile() int {
	n, _ := s.VolatileTTL()
	return n
}

// VolatileTTL returns the number of live keys that have a deadline and the
// mean time left to their deadlines (0 with none), INFO keyspace's expires
// and avg_ttl. Redis's avg_ttl is a running estimate from its expiry
// cycle's samples; this walk, which counting the keys makes anyway, gives
// the exact mean.
func (s *Store) VolatileTTL() (n int, avg time.Duration) {
	now := s.now()
	var sum float64 // of nanoseconds: an int64 sum of many far deadlines would overflow
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		if sh.volatile > 0 {
			s.eachLiveLocked(sh, now, func(rec record) {
				if rec.stale != 0 {
					n++
					sum += float64(rec.stale - now)
				}
			})
		}
		sh.mu.RUnlock()
	}
	if n == 0 {
		return 0, 0
	}
	return n, time.Duration(sum / float64(n))
}

// Keys returns every live key matching the glob pattern (KEYS), at one
// instant: writes wait for the walk, as they wait for Redis's KEYS.
func (s *Store) Keys(pattern []byte) []string {
	now := s.now()
	all := glob.MatchesAll(pattern)
	var keys []string
	defer unlockShards(s.lockAllShards((*sync.RWMutex).RLock), (*sync.RWMutex).RUnlock)
	for i := range s.shards {
		s.eachLiveLocked(&s.shards[i], now, func(rec record) {
			if all || glob.Match(pattern, string(rec.key)) {
				keys = append(keys, string(rec.key))
			}
		})
	}
	return keys
}

// ScanFilter selects which of the names a scan visits it returns, as the
// MATCH and TYPE options of SCAN, HSCAN, SSCAN and ZSCAN do: those that
// match Pattern (nil: every one) and, for SCAN with OfType, the keys that
// hold Type. It is the one such filter; each scan counts what it visits
// towards COUNT whether or not the filter keeps it, as Redis does.
type ScanFilter struct {
	Pattern []byte
	Type    Type
	OfType  bool
}

// matcher is f's test of a name, with the pattern's match-all case
// decided once.
func (f ScanFilter) matcher() func(name string) bool {
	if glob.MatchesAll(f.Pattern) {
		return func(string) bool { return true }
	}
	return func(name string) bool { return glob.Match(f.Pattern, name) }
}

// filterNames keeps the items whose names f keeps, in place (the MATCH of
// HSCAN, SSCAN and ZSCAN, applied to what a step visited).
func filterNames[T any](f ScanFilter, items []T, name func(T) []byte) []T {
	if glob.MatchesAll(f.Pattern) {
		return items
	}
	match := f.matcher()
	return slices.DeleteFunc(items, func(it T) bool { return !match(string(name(it))) })
}

// Scan returns up to about count live keys that f keeps, starting at
// cursor, and the cursor to continue from; 0 means the scan is complete.
//
// The cursor is a position in the 64-bit hash space of keys, which shards
// partition in order: a call returns keys in hash order from the cursor on, so
// every key live for a whole scan is returned exactly once whatever is written
// meanwhile. Keys with equal hashes are never split across calls.
func (s *Store) Scan(cursor uint64, f ScanFilter, count int) (uint64, []string) {
	if count <= 0 {
		count = 10
	}
	now := s.now()
	match := f.matcher()
	type hashed struct {
		h   uint64
		key string
		ok  bool
	}
	var found []string
	for idx := cursor >> (64 - shardBits); idx < numShards; idx++ {
		sh := &s.shards[idx]
		var cands []hashed
		sh.mu.RLock()
		sh.index.Range(func(_ int, loc slab.Loc) bool {
			rec := parseRecord(s.arena.Block(loc))
			if rec.db != s.db {
				return true
			}
			if h := s.hashOf(&rec); h >= cursor {
				k := string(rec.key)
				keep := !rec.expiredAt(now) && (!f.OfType || rec.typ() == f.Type) && match(k)
				cands = append(cands, hashed{h, k, keep})
			}
			return true
		})
		sh.mu.RUnlock()
		slices.SortFunc(cands, func(a, b hashed) int {
			switch {
			case a.h < b.h:
				return -1
			case a.h > b.h:
				return 1
			}
			return 0
		})
		// Visiting a candidate counts towards count even if it does not
		// match, as Redis counts buckets visited, so a sparse MATCH still
		// returns to the client regularly.
		for i, c := range cands {
			if i >= count && c.h != cands[i-1].h {
				return c.h, found
			}
			if c.ok {
				found = append(found, c.key)
			}
		}
		count -= len(cands)
		next := (idx + 1) << (64 - shardBits)
		if next == 0 { // wrapped past the last shard
			return 0, found
		}
		cursor = next
		if count <= 0 {
			return cursor, found
		}
	}
	return 0, found
}

// RandomKey returns a random live key.
func (s *Store) RandomKey() (string, bool) {
	now := s.now()
	start := rand.IntN(numShards)
	for i := range numShards {
		sh := &s.shards[(start+i)%numShards]
		var key string
		found := false
		sh.mu.RLock()
		if n := sh.index.Slots(); n > 0 && sh.keys[s.db] > 0 {
			sh.index.RangeFrom(rand.IntN(n), func(_ int, loc slab.Loc) bool {
				rec := parseRecord(s.arena.Block(loc))
				if rec.db == s.db && !rec.expiredAt(now) {
					key, found = string(rec.key), true
				}
				return !found
			})
		}
		sh.mu.RUnlock()
		if found {
			return key, true
		}
	}
	return "", false
}

// Flushes counts the calls of Flush and FlushAll. What is remembered about
// keys outside the store (swr's record of keys the origin said do not
// exist) compares it with the count it saw, so that a flush clears that
// too.
func (s *Store) Flushes() uint64 { return s.flushes.Load() }

// AllDatabases is the database of a Flushed change of FlushAll.
const AllDatabases = -1

// FlushAll removes every key of every database (FLUSHALL). The keys are
// gone for every reader, and their records unmapped, when it returns: the
// store's memory is outside Go's heap, so there is nothing left to free
// lazily, and ASYNC is SYNC. The frequency sketch forgets them too.
func (s *Store) FlushAll() { s.flush(AllDatabases) }

// Flush removes every key of the database (FLUSHDB): at once, as
// FlushAll, when the others are empty, else one record at a time. Either
// way it holds every shard's lock, so no reader sees it half done.
func (s *Store) Flush() { s.flush(int(s.db)) }

func (s *Store) flush(db int) {
	s.flushes.Add(1)
	s.compactMu.Lock()
	shards := s.lockAllShards((*sync.RWMutex).Lock)
	whole := true
	for _, sh := range shards {
		for d, n := range sh.keys {
			whole = whole && (n == 0 || db == AllDatabases || d == db)
		}
	}
	if whole {
		s.resetLocked(shards)
	} else {
		for _, sh := range shards {
			sh.wroteDBLocked(db)
			if sh.keys[db] > 0 {
				s.dbs[db].dropLocked(sh)
			}
		}
	}
	unlockShards(shards, (*sync.RWMutex).Unlock)
	s.compactMu.Unlock()
	if whole {
		s.evictor.clear()
		s.sketch.Clear()
	}
	s.changes.Add(1)
	if l := s.listener.Load(); l != nil {
		(*l)(Change{Kind: Flushed, DB: db})
	}
}

// SwapDB swaps databases a and b (SWAPDB): at one instant, every key of
// each is the other's. Holding every shard's lock, it relabels each record
// of both in place and moves its index slot (and heap object) to the
// shard of its new hash: O(keys of both), where Redis's swap of two
// tables is O(1), so a swap of millions of keys holds the store for as
// long as a walk of them takes. The frequency sketch's counts of those
// keys are lost with their hashes. The listener is told Swapped for
// each database.
func (s *Store) SwapDB(a, b int) {
	if a == b {
		return
	}
	type moving struct {
		loc     slab.Loc
		stamp   uint32
		h       uint64
		db      uint8
		handle  uint64
		obj     heapObject
		onHeap  bool
		expires bool
	}
	var moved []moving
	shards := s.lockAllShards((*sync.RWMutex).Lock)
	// Every slot of both leaves its shard first, then each is placed: a
	// record's new shard may be one not walked yet.
	for _, sh := range shards {
		sh.wroteDBLocked(a)
		sh.wroteDBLocked(b)
		if sh.keys[a] == 0 && sh.keys[b] == 0 {
			continue
		}
		var locs []slab.Loc
		sh.index.Range(func(_ int, loc slab.Loc) bool {
			if db := int(recordDB(s.arena.Block(loc))); db == a || db == b {
				locs = append(locs, loc)
			}
			return true
		})
		for _, loc := range locs {
			blk := s.arena.Block(loc)
			rec := parseRecord(blk)
			h := s.hashOf(&rec)
			pos, _ := sh.index.Find(tagOf(h), func(l slab.Loc) bool { return l == loc })
			m := moving{loc: loc, stamp: sh.index.Stamp(pos), onHeap: rec.onHeap(), expires: rec.stale != 0}
			sh.index.Delete(pos)
			sh.keys[rec.db]--
			if m.expires {
				sh.volatile--
			}
			if m.onHeap {
				m.handle = heapHandle(rec.value)
				m.obj = sh.heap[m.handle]
				delete(sh.heap, m.handle)
			}
			m.db = uint8(a)
			if int(rec.db) == a {
				m.db = uint8(b)
			}
			blk[1] = blk[1]&(1<<dbShift-1) | m.db<<dbShift
			rec.db = m.db
			m.h = s.hashOf(&rec)
			moved = append(moved, m)
		}
	}
	for _, m := range moved {
		sh := s.shardOf(m.h)
		if !sh.index.Insert(tagOf(m.h), m.loc, m.stamp) {
			// The index is at its largest and full: the key cannot stay.
			rec := parseRecord(s.arena.Block(m.loc))
			s.used.Add(-rec.cost())
			s.arena.Free(m.loc)
			s.evicted.Add(1)
			continue
		}
		sh.keys[m.db]++
		if m.expires {
			sh.volatile++
		}
		if m.onHeap {
			if sh.heap == nil {
				sh.heap = make(map[uint64]heapObject)
			}
			sh.heap[m.handle] = m.obj
		}
	}
	unlockShards(shards, (*sync.RWMutex).Unlock)
	s.changes.Add(1)
	if l := s.listener.Load(); l != nil {
		(*l)(Change{Kind: Swapped, DB: a, With: b})
		(*l)(Change{Kind: Swapped, DB: b, With: a})
	}
	s.swapMu.Lock()
	hooks := s.onSwap
	s.swapMu.Unlock()
	for _, fn := range hooks {
		fn(a, b)
	}
}

// resetLocked empties every shard and the arena. The caller holds
// compactMu and every shard's lock (shards).
func (s *Store) resetLocked(shards []*shard) {
	for _, sh := range shards {
		sh.wroteAllLocked()
		sh.index.Reset()
		sh.heap = nil
		sh.volatile = 0
		sh.keys = [MaxDatabases]int32{}
	}
	s.arena.Reset()
	s.used.Store(0)
}

// dropLocked removes the database's records from sh, telling no listener.
// The caller holds sh.mu for writing.
func (s *Store) dropLocked(sh *shard) {
	var gone []slab.Loc
	sh.index.Range(func(_ int, loc slab.Loc) bool {
		if recordDB(s.arena.Block(loc)) == s.db {
			gone = append(gone, loc)
		}
		return true
	})
	// A removal moves other slots (and may shrink the table): each is
	// found again.
	for _, loc := range gone {
		rec := parseRecord(s.arena.Block(loc))
		h := s.hashOf(&rec)
		pos, _ := sh.index.Find(tagOf(h), func(l slab.Loc) bool { return l == loc })
		s.removeLocked(sh, h, slot{pos: pos, loc: loc, rec: rec})
	}
}

// Stats is a snapshot of the store's counters.
type Stats struct {
	Hits    int64 // reads that found a live key
	Misses  int64 // reads that did not
	Evicted int64 // entries removed to keep the memory bound
	Expired int64 // entries removed because their deadline passed
	Cost    int64 // bytes charged against MaxMemory, Charge's included
	MaxCost int64 // the memory bound

	ArenaBytes     int64 // memory mapped for records (outside Go's heap)
	ArenaLiveBytes int64 // bytes of live records in it; the rest awaits compaction
	IndexBytes     int64 // memory of the shards' indexes (on Go's heap)
	SketchBytes    int64 // memory of the LFU policies' frequency sketch (on Go's heap)
	Compactions    int64 // arena segments compacted
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	st := Stats{
		Evicted:        s.evicted.Load(),
		Expired:        s.expired.Load(),
		Cost:           s.used.Load() + s.external.Load(),
		MaxCost:        s.MaxMemory(),
		ArenaBytes:     s.arena.Mapped(),
		ArenaLiveBytes: s.arena.Live(),
		Compactions:    s.compactions.Load(),
		SketchBytes:    int64(s.sketch.Bytes()),
	}
	for i := range s.shards {
		sh := &s.shards[i]
		st.Hits += sh.hits.Load()
		st.Misses += sh.misses.Load()
		sh.mu.RLock()
		st.IndexBytes += int64(sh.index.Bytes())
		sh.mu.RUnlock()
	}
	return st
}
