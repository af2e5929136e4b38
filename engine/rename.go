package engine

import (
	"errors"
	"sync"
)

// ErrNoSuchKey is returned by Rename when the source key is not live.
var ErrNoSuchKey = errors.New("engine: no such key")

// Rename moves src's value to dst with everything else the entry holds,
// both deadlines and the fill metadata, as Redis's RENAME keeps the TTL,
// and reports whether it did. A live dst is replaced, unless nx is set:
// then nothing changes and Rename reports false. Renaming a live key to
// itself changes nothing and reports !nx, as RENAME and RENAMENX reply.
// Both keys count as written for the fills in progress on them and for the
// change listener (src is deleted, dst overwritten). The move is atomic:
// both keys' shards are locked for it.
func (s *Store) Rename(src, dst []byte, nx bool) (bool, error) {
	var moved bool
	err := s.transfer(src, dst, true, func(to, same bool) bool {
		moved = !nx || !to
		return moved && !same
	})
	return moved, err
}

// Copy writes a copy of src's value to dst with src's deadlines and fill
// metadata, as COPY does, and reports whether it did: not if src is not
// live, nor if dst is live and replace is false. It counts a hit or a miss
// on src, which COPY reads. The caller refuses src equal to dst.
func (s *Store) Copy(src, dst []byte, replace bool) (bool, error) {
	var copied bool
	err := s.transfer(src, dst, false, func(to, _ bool) bool {
		copied = !to || replace
		return copied
	})
	if errors.Is(err, ErrNoSuchKey) {
		return false, nil
	}
	return copied, err
}

// transfer runs Rename (move) or Copy: write, told whether dst is live and
// whether it is src itself, says whether dst is to be written. It returns
// ErrNoSuchKey if src is not live.
func (s *Store) transfer(src, dst []byte, move bool, write func(to, same bool) bool) error {
	err := s.transferLocked(src, dst, move, write)
	return err
}

// transferLocked is transfer's critical section, under both keys' shard
// locks.
func (s *Store) transferLocked(src, dst []byte, move bool, write func(to, same bool) bool) error {
	defer unlockShards(s.lockShards([][]byte{src, dst}, 1), (*sync.RWMutex).Unlock)
	hs, hd := s.hash(src), s.hash(dst)
	srcShard, dstShard := s.shardOf(hs), s.shardOf(hd)
	from, found := s.liveKeyLocked(srcShard, hs, src)
	if !move {
		if found {
			srcShard.hits.Add(1)
		} else {
			s.missed(srcShard, src)
		}
	}
	if !found {
		return ErrNoSuchKey
	}
	to, toFound := s.liveKeyLocked(dstShard, hd, dst)
	if !write(toFound, toFound && to.loc == from.loc) {
		return nil
	}
	r := from.rec.renewed(from.rec.fresh, from.rec.stale)
	r.key = dst
	check := s.admit
	if move {
		// RENAME is refused no memory in Redis: it adds nothing.
		check = s.fits
	}
	if err := check(r.cost()); err != nil {
		return err
	}
	if move {
		srcShard.wroteLocked(src)
	}
	dstShard.wroteLocked(dst)
	// The new record is written from the source's, which stays in place
	// until it is stored.
	r.value = s.copyValueLocked(srcShard, &from.rec, dstShard, move)
	if err := s.storeLocked(dstShard, hd, to, toFound, r); err != nil {
		dstShard.dropNewLocked(&r)
		return err
	}
	if toFound {
		// Redis deletes the destination and adds it anew.
		s.notifyQuiet(Created, dst)
	}
	// WATCH and client-side caching see both keys change, as Redis
	// signals both for RENAME.
	s.notify(Written, dst)
	if move {
		// Storing may have moved the source's slot; find it again.
		if from, found = s.findLocked(srcShard, hs, src); found {
			s.deleteLocked(srcShard, hs, from)
		}
	}
	return nil
}
