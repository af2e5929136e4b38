package engine

import "errors"

// ErrNoSuchKey is returned by Rename when the source key is not live.
var ErrNoSuchKey = errors.New("engine: no such key")

// Rename moves src's value to dst with everything else the entry holds,
// both deadlines and the fill metadata, as Redis's RENAME keeps the TTL,
// and reports whether it did. A live dst is replaced, unless nx is set:
// then nothing changes and Rename reports false. Renaming a live key to
// itself changes nothing and reports !nx, as RENAME and RENAMENX reply.
// Both keys count as written for the fills in progress on them (src is
// deleted, dst overwritten). The move is atomic: both keys' shards are
// locked for it.
func (s *Store) Rename(src, dst []byte, nx bool) (bool, error) {
	var moved bool
	err := s.transfer(src, dst, true, func(from, to *entry) bool {
		moved = !nx || to == nil
		return moved && from != to
	})
	return moved, err
}

// Copy writes a copy of src's value to dst with src's deadlines and fill
// metadata, as COPY does, and reports whether it did: not if src is not
// live, nor if dst is live and replace is false. It counts a hit or a miss
// on src, which COPY reads. The caller refuses src equal to dst.
func (s *Store) Copy(src, dst []byte, replace bool) (bool, error) {
	var copied bool
	err := s.transfer(src, dst, false, func(_, to *entry) bool {
		copied = to == nil || replace
		return copied
	})
	if errors.Is(err, ErrNoSuchKey) {
		return false, nil
	}
	return copied, err
}

// transfer runs Rename (move) or Copy: write, given src's live entry and
// dst's (nil if absent), says whether dst is to be written. It returns
// ErrNoSuchKey if src is not live.
func (s *Store) transfer(src, dst []byte, move bool, write func(from, to *entry) bool) error {
	var dead []*entry
	e, err := s.transferLocked(src, dst, move, write, &dead)
	s.unregister(dead)
	if e != nil {
		s.register(e)
	}
	return err
}

// transferLocked is transfer's critical section, under both keys' shard
// locks. It returns dst's new entry, if it wrote one.
func (s *Store) transferLocked(src, dst []byte, move bool, write func(from, to *entry) bool, dead *[]*entry) (*entry, error) {
	defer unlockShards(s.lockShards([][]byte{src, dst}, 1))
	now := s.now()
	srcShard, dstShard := s.shardFor(src), s.shardFor(dst)
	from := s.liveLocked(srcShard, src, now, dead)
	if !move {
		if from == nil {
			srcShard.misses.Add(1)
		} else {
			srcShard.hits.Add(1)
		}
	}
	if from == nil {
		return nil, ErrNoSuchKey
	}
	to := s.liveLocked(dstShard, dst, now, dead)
	if !write(from, to) {
		return nil, nil
	}
	cost := entryCost(len(dst), len(from.value))
	if cost > s.MaxMemory() {
		return nil, ErrTooLarge
	}
	value := from.value
	if move {
		srcShard.wroteLocked(src)
		srcShard.removeLocked(from)
		*dead = append(*dead, from)
	} else {
		// A copy of its own: Update may append to a value in place.
		value = append([]byte{}, value...)
	}
	dstShard.wroteLocked(dst)
	if to != nil {
		dstShard.removeLocked(to)
		*dead = append(*dead, to)
	}
	e := &entry{key: string(dst), id: s.nextID.Add(1), value: value, fill: from.fill}
	dstShard.m[e.key] = e
	dstShard.setDeadlinesLocked(e, from.freshUntil, from.staleUntil)
	dstShard.chargeLocked(e, cost, true)
	return e, nil
}
