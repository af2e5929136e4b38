package engine

import (
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// sweep removes expired entries in the background, sampling each shard the
// way Redis's active expiry does: keep going while a quarter of a sample was
// expired, but never hold one shard's lock for long. It also sizes the
// frequency sketch to the key count.
func (s *Store) sweep(interval time.Duration) {
	defer s.bg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if s.sweptClock {
				s.tickClock()
			}
			// One reading for the whole sweep: a lone reading of a
			// sleeping clock leaves it asleep (internal/clock), and a key
			// that expires during the sweep's few microseconds goes at
			// the next.
			now := s.now()
			for i := range s.shards {
				// Expiring keys is a write no atomic batch may see half
				// of (Section). Frozen is read inside the section, so a
				// freeze made holding it exclusively stops the sweep at
				// once (SetFrozen).
				s.section.Shared(uint64(i), func() {
					if !s.frozen.Load() && !s.noActiveExpire.Load() {
						s.sweepShard(&s.shards[i], now)
					}
				})
			}
			s.sizeSketch()
			if s.overBound(0) {
				// Eviction is a write no atomic batch may see half of.
				// After a freeze, everything the bound asks for goes,
				// however recently used.
				who := forSweep
				if s.thawed.Swap(false) {
					who = forBound
				}
				s.section.Shared(0, func() { _ = s.makeRoom(who, 0) })
			}
			s.kickCompactor()
		}
	}
}

func (s *Store) sweepShard(sh *shard, now int64) {
	const sample, rounds = 20, 16
	for range rounds {
		sh.mu.Lock()
		if sh.volatile == 0 {
			sh.mu.Unlock()
			return
		}
		// Persistent keys are skipped but still bound the walk, so a shard
		// of mostly persistent keys is not scanned end to end. The walk
		// resumes where the last one stopped.
		var dead []slab.Loc
		sampled, visited := 0, 0
		sh.index.RangeFrom(sh.sweepAt, func(pos int, loc slab.Loc) bool {
			sh.sweepAt = pos + 1
			if visited++; visited > 10*sample {
				return false
			}
			rec := parseRecord(s.arena.Block(loc))
			if rec.stale == 0 {
				return true
			}
			if rec.expiredAt(now) {
				dead = append(dead, loc)
			}
			sampled++
			return sampled < sample
		})
		for _, loc := range dead {
			rec := parseRecord(s.arena.Block(loc))
			h := s.hashOf(&rec)
			pos, _ := sh.index.Find(tagOf(h), func(l slab.Loc) bool { return l == loc })
			s.expireLocked(sh, h, slot{pos: pos, loc: loc, rec: rec})
		}
		sh.mu.Unlock()
		if len(dead)*4 < sample {
			return
		}
	}
}
