package engine

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Len returns the number of live keys (DBSIZE). Keys past their deadline that
// the sweeper has not removed yet are not counted.
func (s *Store) Len() int {
	now := s.now()
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		if sh.volatile == 0 {
			n += len(sh.m)
		} else {
			for _, e := range sh.m {
				if !e.expiredAt(now) {
					n++
				}
			}
		}
		sh.mu.RUnlock()
	}
	return n
}

// Volatile returns the number of live keys that have a deadline.
func (s *Store) Volatile() int {
	now := s.now()
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		if sh.volatile > 0 {
			for _, e := range sh.m {
				if e.staleUntil != 0 && !e.expiredAt(now) {
					n++
				}
			}
		}
		sh.mu.RUnlock()
	}
	return n
}

// Keys returns every live key matching the glob pattern (KEYS).
func (s *Store) Keys(pattern []byte) []string {
	now := s.now()
	all := isMatchAll(pattern)
	var keys []string
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		for k, e := range sh.m {
			if !e.expiredAt(now) && (all || Match(pattern, k)) {
				keys = append(keys, k)
			}
		}
		sh.mu.RUnlock()
	}
	return keys
}

// Scan returns up to about count live keys matching pattern, starting at
// cursor, and the cursor to continue from; 0 means the scan is complete.
//
// The cursor is a position in the 64-bit hash space of keys, which shards
// partition in order: a call returns keys in hash order from the cursor on, so
// every key live for a whole scan is returned exactly once whatever is written
// meanwhile. Keys with equal hashes are never split across calls.
func (s *Store) Scan(cursor uint64, pattern []byte, count int) (uint64, []string) {
	if count <= 0 {
		count = 10
	}
	now := s.now()
	all := isMatchAll(pattern)
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
		for k, e := range sh.m {
			h := s.hashString(k)
			if h >= cursor {
				live := !e.expiredAt(now)
				cands = append(cands, hashed{h, k, live && (all || Match(pattern, k))})
			}
		}
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
		sh.mu.RLock()
		for k, e := range sh.m { // map iteration starts at a random element
			if !e.expiredAt(now) {
				sh.mu.RUnlock()
				return k, true
			}
		}
		sh.mu.RUnlock()
	}
	return "", false
}

// Flushes counts the calls of Flush. What is remembered about keys outside
// the store (swr's record of keys the origin said do not exist) compares it
// with the count it saw, so that a FLUSHALL clears that too.
func (s *Store) Flushes() uint64 { return s.flushes.Load() }

// Flush removes every key (FLUSHALL). The keys are gone for every reader when
// it returns; with async, ristretto's bookkeeping of them is released in the
// background, as FLUSHALL ASYNC frees memory lazily.
func (s *Store) Flush(async bool) {
	s.flushes.Add(1)
	var old []map[string]*entry
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.wroteAllLocked()
		if len(sh.m) > 0 {
			old = append(old, sh.m)
			for _, e := range sh.m {
				e.dead.Store(true)
			}
			sh.m = make(map[string]*entry)
			sh.volatile = 0
		}
		sh.mu.Unlock()
	}
	s.notify(Flushed, nil)
	release := func() {
		for _, m := range old {
			for _, e := range m {
				s.policy.Del(e.id)
			}
		}
	}
	if !async {
		release()
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		release()
	}()
}

// sweep removes expired entries in the background, sampling each shard the
// way Redis's active expiry does: keep going while a quarter of a sample was
// expired, but never hold one shard's lock for long.
func (s *Store) sweep(interval time.Duration) {
	defer s.bg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			for i := range s.shards {
				// Expiring keys is a write no atomic batch may see half
				// of (Section).
				s.section.RLock(uint64(i))
				s.sweepShard(&s.shards[i])
				s.section.RUnlock(uint64(i))
				s.recheckCosts(&s.shards[i])
			}
		}
	}
}

func (s *Store) sweepShard(sh *shard) {
	const sample, rounds = 20, 16
	for range rounds {
		var dead []*entry
		now := s.now()
		sh.mu.Lock()
		if sh.volatile == 0 {
			sh.mu.Unlock()
			return
		}
		// Persistent keys are skipped but still bound the walk, so a shard
		// of mostly persistent keys is not scanned end to end.
		sampled, visited := 0, 0
		for _, e := range sh.m {
			if visited++; visited > 10*sample {
				break
			}
			if e.staleUntil == 0 {
				continue
			}
			if e.expiredAt(now) {
				sh.removeLocked(e)
				s.notifyRemoved(Expired, e)
				dead = append(dead, e)
			}
			if sampled++; sampled >= sample {
				break
			}
		}
		sh.mu.Unlock()
		s.expired.Add(int64(len(dead)))
		s.unregister(dead)
		if len(dead)*4 < sample {
			return
		}
	}
}

// Stats is a snapshot of the store's counters.
type Stats struct {
	Hits     int64 // reads that found a live key
	Misses   int64 // reads that did not
	Evicted  int64 // entries removed by ristretto's eviction policy
	Rejected int64 // new entries ristretto's admission policy refused after the write was acknowledged
	Expired  int64 // entries removed because their deadline passed
	Cost     int64 // bytes charged against MaxMemory, Charge's included
	MaxCost  int64 // the memory bound
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	st := Stats{
		Evicted:  s.evicted.Load(),
		Rejected: s.rejected.Load(),
		Expired:  s.expired.Load(),
		MaxCost:  s.MaxMemory(),
	}
	st.Cost = s.policy.MaxCost() - s.policy.RemainingCost() + s.external.Load()
	for i := range s.shards {
		st.Hits += s.shards[i].hits.Load()
		st.Misses += s.shards[i].misses.Load()
	}
	return st
}
