package engine

import (
	"runtime"
	"slices"
)

// LoadItem is one string key for Loader.Strings, with what Set would be
// given for it.
type LoadItem struct {
	Key, Value []byte
	// FreshUntil and StaleUntil are unix nanoseconds, 0 for none; a zero
	// FreshUntil is StaleUntil, as in SetOptions.
	FreshUntil, StaleUntil int64
	Fill                   *FillMeta
}

// Loader writes the keys of a snapshot into the store at the start, far
// faster than a Set per key: each batch takes a shard's lock once for all
// of its keys in that shard, the indexes are sized for the keys to come,
// and the eviction policy learns of the keys after the load, in the
// background (Done). A Loader is not safe for concurrent use.
//
// Telling ristretto of a key costs more than everything else a load does
// per key (three lookups or inserts in its maps of every key, on two
// goroutines: 1M keys loaded in 0.6-1.3 s were told to it in 1.6-4.8 s
// more on a busy 2-core machine), so a load that waited for it would take
// two to four times as long. Until it has learnt of a key, ristretto cannot evict it; the
// load tells it of every key at once (Strings) if they pass the memory
// bound, so the bound holds as it does for Set.
type Loader struct {
	s      *Store
	hashes []uint64 // of the batch's keys
	order  []int32  // the batch's items by shard
	unfed  []uint64 // hashes whose cost changed, not yet sent to ristretto
}

// NewLoader returns a Loader for about keys keys (a snapshot's count,
// which the file may overstate: at most what the memory bound holds at
// EntryOverhead each is believed).
func (s *Store) NewLoader(keys int) *Loader {
	keys = int(min(int64(keys), s.bound()/EntryOverhead))
	if keys > 0 {
		// Keys fall into shards unevenly: a little room above the mean.
		per := keys/numShards + keys/numShards/8 + 16
		for i := range s.shards {
			sh := &s.shards[i]
			sh.mu.Lock()
			sh.index.Reserve(sh.index.Len() + per)
			sh.mu.Unlock()
		}
	}
	return &Loader{s: s}
}

// Strings writes items as Set with no condition writes them, in order (a
// key that repeats keeps its last value). It copies their bytes. An error
// (ErrTooLarge, ErrOOM) stops the batch where it happened.
func (l *Loader) Strings(items []LoadItem) error {
	s := l.s
	var starts [numShards + 1]int32 // where each shard's items begin in order
	l.hashes = l.hashes[:0]
	for i := range items {
		h := s.hash(items[i].Key)
		l.hashes = append(l.hashes, h)
		starts[h>>(64-shardBits)+1]++
	}
	for i := 1; i <= numShards; i++ {
		starts[i] += starts[i-1]
	}
	next := starts
	l.order = slices.Grow(l.order[:0], len(items))[:len(items)]
	for i, h := range l.hashes {
		n := h >> (64 - shardBits)
		l.order[next[n]] = int32(i)
		next[n]++
	}
	for n := range numShards {
		if starts[n] == starts[n+1] {
			continue
		}
		sh := &s.shards[n]
		sh.mu.Lock()
		err := l.writeLocked(sh, items, l.order[starts[n]:starts[n+1]])
		sh.mu.Unlock()
		if err != nil {
			return err
		}
	}
	if s.overBound() {
		s.feedHashes(l.unfed)
		l.unfed = l.unfed[:0]
	}
	return nil
}

// writeLocked writes the items at idx, all of shard sh, whose lock the
// caller holds for writing. Their changes are kept for ristretto in
// l.unfed, not queued (the sweeper sends the queue every 100 ms).
func (l *Loader) writeLocked(sh *shard, items []LoadItem, idx []int32) error {
	s := l.s
	for _, i := range idx {
		it, h := &items[i], l.hashes[i]
		fresh := it.FreshUntil
		if fresh == 0 {
			fresh = it.StaleUntil
		}
		r := makeNewRecord(it.Key, it.Value, fresh, it.StaleUntil, it.Fill)
		if err := s.admit(r.cost()); err != nil {
			return err
		}
		sl, found := s.liveKeyLocked(sh, h, r.key)
		sh.wroteLocked(r.key)
		changed, err := s.placeLocked(sh, h, sl, found, r)
		if err != nil {
			return err
		}
		if changed {
			l.unfed = append(l.unfed, h)
		}
		s.notify(Written, r.key)
	}
	return nil
}

// loadFeedChunk is how many loaded keys are told to ristretto at a time,
// holding the feeder's lock: a writer that must send meanwhile waits for
// one chunk at most.
const loadFeedChunk = 4096

// Done starts telling ristretto of the loaded keys, on a goroutine of the
// store's, and returns at once: the keys are served meanwhile, and Sync
// waits for it.
func (l *Loader) Done() {
	s, hashes := l.s, l.unfed
	l.unfed = nil
	if len(hashes) == 0 {
		return
	}
	s.loadFeeds.Add(1)
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.loadFeeds.Done()
		s.feedHashes(hashes)
	}()
}

// feedHashes tells ristretto the cost of the keys of each hash, as the
// index holds them when it is sent. Each cost is read under its shard's
// lock while no other change is being sent, so that whether a write of the
// same key (queued as writes are) is sent before or after it, ristretto
// is left with the index's last word (see feeder).
func (s *Store) feedHashes(hashes []uint64) {
	chunk := make([]policyOp, 0, min(len(hashes), loadFeedChunk))
	for len(hashes) > 0 && !s.closed.Load() {
		n := min(len(hashes), loadFeedChunk)
		s.feeder.sendMu.Lock()
		chunk = chunk[:0]
		for _, h := range hashes[:n] {
			sh := s.shardOf(h)
			sh.mu.RLock()
			chunk = append(chunk, policyOp{h, s.hashCostLocked(sh, h)})
			sh.mu.RUnlock()
		}
		s.feeder.send(chunk)
		s.feeder.sendMu.Unlock()
		hashes = hashes[n:]
		// In the background, after a load, the server is serving: let
		// the replies that became ready meanwhile go first.
		runtime.Gosched()
	}
}
