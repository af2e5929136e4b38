package engine

import "errors"

// ErrBusyKey is Restore's error for a live key it was not asked to replace
// (Redis's BUSYKEY).
var ErrBusyKey = errors.New("engine: target key name already exists")

// Restore writes it as RESTORE does, as one change under its key's shard
// lock: nobody sees the key missing, half filled or without its deadline,
// and a failure leaves it as it was. Without replace a live key is
// ErrBusyKey. A collection is built whole before the lock is taken, and
// one whose members repeat is ErrDuplicateMember (a corrupt payload), one
// without members ErrEmptyCollection. A deadline already past stores
// nothing and, with replace, deletes the key, as Redis does. idle and freq
// set the access stamp as setAccessLocked does (negative: not given).
func (s *Store) Restore(it LoadItem, replace bool, idle, freq int64) error {
	var c collection
	if it.Type != TypeString {
		var err error
		if c, err = s.buildCollection(&it); err != nil {
			return err
		}
	}
	cost := int64(0) // a collection's is known once it is held
	if it.Type == TypeString {
		cost = entryCost(len(it.Key), len(it.Value))
	}
	if err := s.admit(cost); err != nil {
		return err
	}
	h := s.hash(it.Key)
	sh := s.shardOf(h)
	err := s.restoreLocked(sh, h, &it, c, replace, idle, freq)
	s.grown(h)
	return err
}

func (s *Store) restoreLocked(sh *shard, h uint64, it *LoadItem, c collection, replace bool, idle, freq int64) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sl, found := s.liveKeyLocked(sh, h, it.Key)
	switch {
	case found && !replace:
		return ErrBusyKey
	case it.StaleUntil != 0 && it.StaleUntil <= s.now():
		if found {
			sh.wroteLocked(s.db, it.Key)
			s.deleteLocked(sh, h, sl)
		}
		return nil
	}
	r := s.itemRecordLocked(sh, it, c)
	if err := s.admitLocked(r.cost()); err != nil {
		sh.dropNewLocked(&r)
		return err
	}
	sh.wroteLocked(s.db, it.Key)
	if found {
		// Redis deletes the key it replaces and adds the new one: the
		// key is created even so (storeLocked tells only a new one).
		s.notifyQuiet(Created, it.Key)
	}
	if err := s.storeLocked(sh, h, sl, found, r); err != nil {
		sh.dropNewLocked(&r)
		return err
	}
	s.notify(Written, it.Key)
	if idle >= 0 || freq >= 0 {
		if sl, ok := s.findLocked(sh, h, it.Key); ok {
			s.setAccessLocked(sh, sl.pos, idle, freq)
		}
	}
	return nil
}
