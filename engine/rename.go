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
	err := s.transfer(src, s, dst, true, func(found, same bool) bool {
		moved = !nx || !found
		return moved && !same
	})
	return moved, err
}

// Copy writes a copy of src's value to dst in database to (COPY's DB;
// this one when nil) with src's deadlines and fill metadata, as COPY does,
// and reports whether it did: not if src is not live, nor if dst is live
// and replace is false. It counts a hit or a miss on src, which COPY
// reads. The caller refuses src equal to dst in one database.
func (s *Store) Copy(src []byte, to *Store, dst []byte, replace bool) (bool, error) {
	var copied bool
	err := s.transfer(src, to, dst, false, func(found, _ bool) bool {
		copied = !found || replace
		return copied
	})
	if errors.Is(err, ErrNoSuchKey) {
		return false, nil
	}
	return copied, err
}

// Move moves key to database to with everything it holds, as MOVE does,
// and reports whether it did: not if key is not live here, nor if it is
// live there. The caller refuses to move a key to its own database.
func (s *Store) Move(key []byte, to *Store) (bool, error) {
	var moved bool
	err := s.transfer(key, to, key, true, func(found, _ bool) bool {
		moved = !found
		return moved
	})
	if errors.Is(err, ErrNoSuchKey) {
		return false, nil
	}
	return moved, err
}

// transfer runs Rename and Move (move) or Copy: write, told whether dst is
// live in database to and whether it is src itself, says whether dst is
// to be written. It returns ErrNoSuchKey if src is not live. Both keys'
// shards are locked for it.
func (s *Store) transfer(src []byte, to *Store, dst []byte, move bool, write func(found, same bool) bool) error {
	if to == nil {
		to = s
	}
	hs, hd := s.hash(src), to.hash(dst)
	defer unlockShards(s.lockShardsOf([]uint64{hs, hd}, (*sync.RWMutex).Lock), (*sync.RWMutex).Unlock)
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
	old, oldFound := to.liveKeyLocked(dstShard, hd, dst)
	if !write(oldFound, oldFound && old.loc == from.loc) {
		return nil
	}
	r := from.rec.renewed(from.rec.fresh, from.rec.stale)
	r.key = dst
	check := s.admit
	if move {
		// RENAME and MOVE are refused no memory in Redis: they add nothing.
		check = s.fits
	}
	if err := check(r.cost()); err != nil {
		return err
	}
	if move {
		srcShard.wroteLocked(s.db, src)
	}
	dstShard.wroteLocked(to.db, dst)
	// The new record is written from the source's, which stays in place
	// until it is stored.
	r.value = s.copyValueLocked(srcShard, &from.rec, dstShard, move)
	if err := to.storeLocked(dstShard, hd, old, oldFound, r); err != nil {
		dstShard.dropNewLocked(&r)
		return err
	}
	if oldFound {
		// Redis deletes the destination and adds it anew.
		to.notifyQuiet(Created, dst)
	}
	// WATCH and client-side caching see both keys change, as Redis
	// signals both for RENAME.
	to.notify(Written, dst)
	if move {
		// Storing may have moved the source's slot; find it again.
		if from, found = s.findLocked(srcShard, hs, src); found {
			s.deleteLocked(srcShard, hs, from)
		}
	}
	return nil
}
