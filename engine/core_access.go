package engine

import (
	"errors"
	"time"
)

// Each key has an access stamp, 32 bits beside its index slot
// (slab.Index's stamps: 4 bytes a slot, about 6 a key), which eviction
// (core_evict.go), OBJECT IDLETIME and OBJECT FREQ read, kept as Redis keeps its
// objects' lru field, by the eviction policy in force when the key is
// accessed:
//
//   - with an LFU policy, the second of the last access (its low 24 bits:
//     194 days, where Redis keeps 16 bits of minutes) and Redis's
//     logarithmic access counter (8 bits): it starts at lfuInitVal,
//     grows by one on an access with probability 1/((counter-lfuInitVal)*
//     lfu-log-factor+1), and loses one for each lfu-decay-time minutes
//     without one;
//   - otherwise, the second of the last access.
//
// A read that reports itself to the eviction policy (GET, not OBJECT,
// TOUCH yes) and a write's lookup of its key (liveKeyLocked) are accesses;
// a new key starts as a fresh one. As in Redis, a stamp written under one
// policy reads as nonsense under the other for a while after CONFIG SET
// maxmemory-policy switches them. With an LFU policy every access, and
// every read of a missing key, is also counted in the store's frequency
// sketch (countAccess), which remembers keys the store no longer holds.
//
// A read writes the stamp only when it changes (its second or minute
// passed, or the counter grew), so the readers of a hot key do not all
// write its cache line. The clock is the sweeper's (clock), not a call of
// time.Now per read.
const (
	lfuInitVal    = 5 // Redis's LFU_INIT_VAL
	lfuCounterMax = 255
	lfuSecondMask = 1<<24 - 1
)

// tickClock sets the access clock; the sweeper calls it.
func (s *Store) tickClock() { s.clock.Store(uint32(time.Now().Unix())) }

// freshStamp is the stamp of a key just created.
func (s *Store) freshStamp() uint32 {
	now := s.clockSeconds()
	if s.EvictionPolicy().LFU() {
		return lfuStamp(now, lfuInitVal)
	}
	return now
}

// Redis's errors for OBJECT IDLETIME under an LFU policy, and OBJECT FREQ
// under another: the stamps hold one or the other.
var (
	// ErrLFUSelected is OBJECT IDLETIME's error with an LFU policy.
	ErrLFUSelected = errors.New("An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
	// ErrLFUNotSelected is OBJECT FREQ's error without it.
	ErrLFUNotSelected = errors.New("An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
)

// IdleTime is how long ago key was last accessed, in whole seconds, as
// OBJECT IDLETIME answers; found is false if key is missing. With an LFU
// policy it is ErrLFUSelected, as in Redis.
func (s *Store) IdleTime(key []byte) (seconds int64, found bool, err error) {
	if s.EvictionPolicy().LFU() {
		return 0, s.has(key), ErrLFUSelected
	}
	stamp, found := s.stampOf(key)
	if !found {
		return 0, false, nil
	}
	// A stamp ahead of the clock (the clock read earlier) is no idle time.
	return max(int64(s.clockSeconds())-int64(stamp), 0), true, nil
}

// AccessFrequency is the key's logarithmic access counter, as OBJECT FREQ
// answers; found is false if key is missing. Without an LFU policy it is
// ErrLFUNotSelected, as in Redis.
func (s *Store) AccessFrequency(key []byte) (freq int64, found bool, err error) {
	if !s.EvictionPolicy().LFU() {
		return 0, s.has(key), ErrLFUNotSelected
	}
	stamp, found := s.stampOf(key)
	if !found {
		return 0, false, nil
	}
	return int64(s.lfuCounter(stamp, s.clockSeconds())), true, nil
}

// stampOf is the stamp of key, if it is live, without an access.
func (s *Store) stampOf(key []byte) (stamp uint32, found bool) {
	h := s.hash(key)
	sh := s.shardOf(h)
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	sl, ok := s.unexpiredLocked(sh, h, key)
	if !ok {
		return 0, false
	}
	return sh.index.Stamp(sl.pos), true
}

// unexpiredLocked finds key in sh if it is live, leaving a key past its
// deadline where it is; the caller holds sh.mu.
func (s *Store) unexpiredLocked(sh *shard, h uint64, key []byte) (slot, bool) {
	sl, ok := s.findLocked(sh, h, key)
	return sl, ok && (sl.rec.stale == 0 || !sl.rec.expiredAt(s.now()))
}

// has reports whether key is live, without an access.
func (s *Store) has(key []byte) bool {
	_, found := s.stampOf(key)
	return found
}

// setAccessLocked sets the access stamp of the key in the slot at pos as
// RESTORE's IDLETIME and FREQ do (Redis's objectSetLRUOrLFU): with an LFU
// policy, freq (0 to 255) becomes the counter, as of this minute; with
// another policy, the last access becomes idle seconds ago, no earlier
// than the clock's zero. A negative value is one not given, and the one
// the policy does not keep is ignored. The caller holds sh.mu for writing.
func (s *Store) setAccessLocked(sh *shard, pos int, idle, freq int64) {
	now := s.clockSeconds()
	switch lfu := s.EvictionPolicy().LFU(); {
	case lfu && freq >= 0:
		sh.index.SetStamp(pos, lfuStamp(now, uint32(min(freq, lfuCounterMax))))
	case !lfu && idle >= 0:
		sh.index.SetStamp(pos, uint32(max(int64(now)-idle, 0)))
	}
}
