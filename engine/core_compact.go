package engine

import (
	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// Compaction wins back the space of freed records. The arena appends every
// record to a head segment; when a record is overwritten, deleted, expired
// or evicted its bytes only count as dead, and a segment is unmapped when
// nothing in it is live. Under churn most segments stay partly live, so a
// goroutine moves the live records out of the emptiest segments, which are
// then unmapped, whenever the dead bytes in shared segments pass
// compactStartFraction of them; it stops at compactStopFraction. The
// memory a store maps for records is therefore at most about 1/(1-1/6) of
// what its records need, plus a segment or two. Moving records is the price:
// under a churn of random writes at a 64 MiB bound, compaction moves about
// three records for every one written and takes a fifth of the CPU; starting
// at 1/8 took a quarter.
//
// While the process is within squeezeMargin of its aim (Store.squeezed),
// the compactor starts at compactStopFraction and stops at
// compactSqueezeFraction: the arena's dead records were 2 to 3 MiB of the
// typed churn's peaks at a 32 MiB bound, a price in moves paid only where
// the resident set is what binds.
const (
	compactStartFraction   = 6  // start when dead bytes > 1/6 of shared segments
	compactStopFraction    = 10 // stop when they are < 1/10
	compactSqueezeFraction = 20 // squeezed, stop when they are < 1/20
	compactMinSlack        = 2 * slab.SegmentSize
	// compactMaxLive: a segment more live than this is not worth moving.
	compactMaxLive = slab.SegmentSize * 15 / 16
)

// kickCompactor wakes the compactor if there is enough to win back.
func (s *Store) kickCompactor() {
	if start, _ := s.compactFractions(); s.slackOver(start) {
		select {
		case s.compactKick <- struct{}{}:
		default:
		}
	}
}

// compactFractions are the fractions of the shared segments' bytes that
// dead ones must pass for the compactor to start, and to go on.
func (s *Store) compactFractions() (start, stop int64) {
	if s.squeezed.Load() {
		return compactStopFraction, compactSqueezeFraction
	}
	return compactStartFraction, compactStopFraction
}

// slackOver reports whether the dead bytes in shared segments exceed
// 1/fraction of them (and compactMinSlack).
func (s *Store) slackOver(fraction int64) bool {
	slack := s.arena.Slack()
	return slack > compactMinSlack && slack*fraction > s.arena.Shared()
}

// compactor runs compactions when kicked, until the store closes.
func (s *Store) compactor() {
	defer s.bg.Done()
	for {
		select {
		case <-s.stop:
			return
		case <-s.compactKick:
			for {
				if _, stop := s.compactFractions(); !s.slackOver(stop) || !s.compactOne() {
					break
				}
				select {
				case <-s.stop:
					return
				default:
				}
			}
		}
	}
}

// compactOne moves the live records out of the emptiest segment and
// unmaps it. It reports false if no segment was worth it.
func (s *Store) compactOne() bool {
	s.compactMu.Lock()
	defer s.compactMu.Unlock()
	id := s.arena.Pick(compactMaxLive)
	if id == 0 {
		return false
	}
	s.arena.Walk(id, s.relocate)
	s.arena.Unpin(id)
	s.compactions.Add(1)
	return true
}

// relocate moves the record at loc, whose block is p, to the arena's head if
// it is still a key's record. The key's bytes never change, so reading them
// needs no lock; the move happens under the shard's, so no reader is in the
// record meanwhile.
func (s *Store) relocate(loc slab.Loc, p []byte) {
	h := s.hash(recordKey(p))
	sh := s.shardOf(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	pos, ok := sh.index.Find(tagOf(h), func(l slab.Loc) bool { return l == loc })
	if !ok {
		return // a dead record
	}
	moved, err := s.arena.Alloc(len(p), func(b []byte) { copy(b, p) })
	if err != nil {
		return // out of memory: leave it where it is
	}
	sh.index.Replace(pos, moved)
	s.arena.Free(loc)
}
