package engine

import (
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

const (
	// feedWaitEvery: the feeder waits for ristretto to drain its buffer
	// after this many sends. The buffer holds 32768 items and only the
	// feeder (and Wait) sends to it, so it is never full: ristretto then
	// drops neither a new key's Set nor, silently, an update of a cost.
	feedWaitEvery = 16 << 10
	// feedBacklog is how many changes may wait for the goroutine sending
	// others before a writer waits for it too. Writers thus feel
	// ristretto's pace, and the index cannot outgrow the bound by more than
	// this many keys, nor (farOver) by more than the store's overSlack.
	feedBacklog = 4096
	// feedBatch is how many changes wait, while the store is within its
	// bound, before a writer sends them. Sending a change wakes ristretto's
	// goroutine unless it is already at work: at one change a write
	// (LPUSH -P 1) the wakes were a fifth of the write's time. Within the
	// bound ristretto has nothing to choose (it evicts only past its
	// MaxCost, which the store's own count passes first), so its books
	// may lag until the batch fills, the store passes its bound (the
	// writer that makes it pass sends them all) or the sweeper comes by
	// (flush).
	feedBatch = 256
)

// policyOp is a change ristretto must learn: the cost of the keys with hash
// h, or -1 to forget it.
type policyOp struct {
	h    uint64
	cost int64
}

// feeder sends ristretto the changes of the index in the order they were
// made. Changes are queued under the shard's lock (so, per hash, in the
// index's order) and sent by one goroutine at a time.
type feeder struct {
	policy *ristretto.Cache[uint64, struct{}]
	closed *atomic.Bool
	// over reports whether the store holds more than ristretto may keep.
	// ristretto evicts only to admit a hash it does not hold: a new cost of
	// a hash it holds (a collection or string grown in place, a key
	// overwritten with a bigger value) only changes its books. While over,
	// a cost is therefore sent as the hash's removal and a new Set, which
	// ristretto admits as it admits a new key, evicting to make room for
	// it (or refusing it): the store's cost never stays over the bound by
	// more than the costs sent since ristretto last drained.
	over func() bool
	// farOver reports whether the store holds more than ristretto may
	// keep by more than a write should wait out: a writer then waits for
	// ristretto to apply what was sent, and so evict, so that the store's
	// cost passes the bound by at most that slack, whatever the size of
	// the values waiting (feedBacklog changes of 4 KB values are 16 MiB).
	farOver func() bool
	// loading, if set, is called by every feed first: it waits for the
	// feeds of loaded keys when the store is over its bound (see Loader).
	loading func()

	mu      sync.Mutex // guards ops
	ops     []policyOp
	pending atomic.Int64 // len(ops)

	// Guarded by sendMu:
	sendMu sync.Mutex // held while sending
	spare  []policyOp
	sent   int // sends since ristretto last drained
	// setSince holds the hashes Set since ristretto last drained, and risky
	// those deleted meanwhile. ristretto's Del removes a hash from its store
	// at once and from its policy later; if a Set of the hash sent before
	// the Del is applied in between, it puts the hash back in the store,
	// and a Set after the Del then finds it there and is sent as an update,
	// which the queued delete undoes: the key would be in the index and not
	// in ristretto, never evicted. A Set of a risky hash therefore waits for
	// ristretto to drain first.
	setSince map[uint64]struct{}
	risky    map[uint64]struct{}
	// lastOf is send's scratch: the index of each hash's last change.
	lastOf map[uint64]int
	// regrow holds the hashes whose new cost was sent, while over, as a
	// plain update because they were Set since ristretto last drained,
	// with that cost: after the next drain they are removed and Set anew
	// if the store is still over.
	regrow map[uint64]int64
	// sentSinceClear: something was sent since ristretto was last
	// cleared (Store.Flush).
	sentSinceClear bool
}

// queue records a change. The caller holds the lock of h's shard.
func (f *feeder) queue(h uint64, cost int64) {
	f.mu.Lock()
	f.ops = append(f.ops, policyOp{h, cost})
	f.pending.Add(1)
	f.mu.Unlock()
}

// feed sends the queued changes once feedBatch of them wait or the store
// is over its bound (see feedBatch). If another goroutine is sending, it
// returns at once unless the backlog is long or the store far over its
// bound: the sender looks again for changes after it is done. Far over,
// it waits once for ristretto to apply what was sent. Over the bound while
// loaded keys are still being told to ristretto, it first waits for that
// (loading).
func (f *feeder) feed() {
	if f.pending.Load() < feedBatch && !f.isOver() {
		return
	}
	f.flush()
}

// flush is feed whatever waits: the sweeper's, so that no change waits
// longer than its interval.
func (f *feeder) flush() {
	if f.loading != nil {
		f.loading()
	}
	for f.pending.Load() > 0 {
		if !f.sendMu.TryLock() {
			if f.pending.Load() < feedBacklog && !f.isFarOver() {
				return
			}
			f.sendMu.Lock()
		}
		f.sendQueued()
		f.sendMu.Unlock()
	}
	if f.isFarOver() {
		f.sendMu.Lock()
		f.sendQueued()
		f.drain()
		f.sendMu.Unlock()
	}
}

func (f *feeder) isOver() bool { return f.over != nil && f.over() }

func (f *feeder) isFarOver() bool { return f.farOver != nil && f.farOver() }

// sync sends the queued changes, after any sender already at work, and
// waits until ristretto has applied them.
func (f *feeder) sync() {
	f.sendMu.Lock()
	defer f.sendMu.Unlock()
	f.sendQueued()
	f.drain()
}

// sendQueued takes the queued changes and sends them. The caller holds
// sendMu.
func (f *feeder) sendQueued() {
	f.mu.Lock()
	ops := f.ops
	f.ops = f.spare[:0]
	f.pending.Store(0)
	f.mu.Unlock()
	f.send(ops)
	if cap(ops) <= 4*feedBacklog {
		f.spare = ops[:0]
	} else {
		f.spare = nil
	}
}

func (f *feeder) send(ops []policyOp) {
	if f.setSince == nil {
		f.setSince, f.risky, f.regrow = map[uint64]struct{}{}, map[uint64]struct{}{}, map[uint64]int64{}
	}
	// Only the last change of a hash in ops is sent: it decides what
	// becomes of the hash, and two Sets of a hash ristretto has not yet
	// applied are two new items to it, the second of which it rejects; if
	// a Del of the hash is sent in between, its store no longer holds the
	// hash when the rejection comes, and onReject would remove the key
	// written after. (A hot list's pushes are also one change each.)
	if len(ops) > 1 {
		if f.lastOf == nil {
			f.lastOf = make(map[uint64]int, len(ops))
		}
		clear(f.lastOf)
		for i, op := range ops {
			f.lastOf[op.h] = i
		}
	}
	for i, op := range ops {
		if len(ops) > 1 && f.lastOf[op.h] != i {
			continue
		}
		if f.sent >= feedWaitEvery {
			f.drain()
		}
		f.sent++
		f.sentSinceClear = true
		// The last op sent for a hash decides what becomes of it.
		delete(f.regrow, op.h)
		if op.cost < 0 {
			f.policy.Del(op.h)
			if _, ok := f.setSince[op.h]; ok {
				f.risky[op.h] = struct{}{}
			}
			continue
		}
		if f.over != nil && f.over() {
			// Not for a hash Set since ristretto last drained: its removal
			// would have to wait for a drain (risky, above), and another
			// hash's new Set evicts as well.
			if _, recent := f.setSince[op.h]; recent {
				f.regrow[op.h] = op.cost
			} else {
				f.policy.Del(op.h)
			}
		}
		if _, ok := f.risky[op.h]; ok {
			f.drain()
		}
		for !f.policy.Set(op.h, struct{}{}, op.cost) {
			// A closed ristretto refuses every Set and Wait returns at
			// once: a late write (a fill finishing after shutdown) must
			// not spin.
			if f.closed.Load() {
				return
			}
			f.drain()
		}
		f.setSince[op.h] = struct{}{}
	}
}

// drain waits until ristretto has applied everything sent. The caller
// holds sendMu.
func (f *feeder) drain() {
	f.policy.Wait()
	f.sent = 0
	clear(f.setSince)
	clear(f.risky)
	if len(f.regrow) == 0 {
		return
	}
	for h, cost := range f.regrow {
		delete(f.regrow, h)
		if !f.over() {
			continue
		}
		if f.sent >= feedWaitEvery {
			f.policy.Wait()
			f.sent = 0
		}
		// Nothing of h is in ristretto's buffer: its removal and new Set
		// are applied in order.
		f.policy.Del(h)
		for !f.policy.Set(h, struct{}{}, cost) {
			if f.closed.Load() {
				return
			}
			f.policy.Wait()
		}
		f.sent += 2
	}
	// What drain promises holds for these too.
	f.policy.Wait()
	f.sent = 0
}

// drop forgets the queued changes: Flush clears ristretto instead. The
// caller holds sendMu and the lock of every shard.
func (f *feeder) drop() {
	f.mu.Lock()
	f.ops = f.ops[:0]
	f.pending.Store(0)
	f.mu.Unlock()
	clear(f.regrow)
}

// Until the entries cost half of what ristretto may keep (pastHalf),
// ristretto is told nothing of them: within its bound it has nothing to
// choose, and telling it of a new key costs three lookups or inserts in
// its maps of every key and an allocation, on two goroutines: a third of
// a SET of a new key. A store that reaches half its bound tells it of
// every key at once (tellAll), in the background as a load's keys are
// told (Loader.Done): a write that takes the store past its bound
// meanwhile waits for that to end (feeder.loading), so ristretto evicts
// knowing every key; from then on every change is queued as it is made,
// whatever the store's size. The half leaves room for as many bytes
// again as the store holds while ristretto learns of them.

// queueCostLocked queues the cost of the keys with hash h for ristretto,
// once it is told of every key. The caller holds the lock of h's shard.
func (s *Store) queueCostLocked(sh *shard, h uint64) {
	if s.told.Load() {
		s.feeder.queue(h, s.hashCostLocked(sh, h))
	}
}

// feed sends ristretto what writes queued (feeder.feed) once it is told of
// every key, and until then starts telling it if the store is past half
// its bound. Every write calls it after releasing its shard's lock.
func (s *Store) feed() {
	if s.told.Load() {
		s.feeder.feed()
		return
	}
	s.tellIfPastHalf()
}

// pastHalf reports whether the entries cost half of what ristretto may
// keep (policyMaxCost; never under noeviction or without a bound).
func (s *Store) pastHalf() bool {
	return s.used.Load() >= s.policyMaxCost()/2
}

// tellIfPastHalf starts telling ristretto of every key if it is not told
// and the store is past half its bound.
func (s *Store) tellIfPastHalf() {
	if !s.told.Load() && s.pastHalf() {
		s.tellAll()
	}
}

// tellAll starts telling ristretto of every key, once: from when it
// starts, every change is queued too, and each shard's keys are sent as
// a load's are (feedHashes), so whichever of the two ristretto hears
// last, it holds what the index holds. It returns at once; Sync waits
// for it.
func (s *Store) tellAll() {
	if !s.told.CompareAndSwap(false, true) {
		return
	}
	s.feedInBackground(func() {
		var hashes []uint64
		for i := range s.shards {
			sh := &s.shards[i]
			hashes = hashes[:0]
			sh.mu.RLock()
			sh.index.Range(func(_ int, loc slab.Loc) bool {
				hashes = append(hashes, s.hash(recordKey(s.arena.Block(loc))))
				return true
			})
			sh.mu.RUnlock()
			s.feedHashes(hashes)
		}
	})
}
