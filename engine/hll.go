package engine

import (
	"errors"
	"math"
	"sync"

	"github.com/stampedeless/stampedeless/engine/internal/hll"
)

// An HLL is a string holding Redis's HyperLogLog representation
// (engine/internal/hll): every other command sees a string, and its value
// moves to and from redis-server as it is. The PF commands edit it as
// APPEND and SETBIT edit a string, under the shard locks of their keys.

// The errors of the PF commands beyond ErrWrongType: a string that is not
// an HLL, an HLL whose registers are corrupt, and PFDEBUG of a missing
// key. Their texts are Redis's replies.
var (
	ErrNotHLL     = hll.ErrNotHLL
	ErrCorruptHLL = hll.ErrCorrupt
	ErrNoHLLKey   = errors.New("ERR The specified key does not exist")
)

// DefaultHLLSparseMaxBytes is Redis's hll-sparse-max-bytes default.
const DefaultHLLSparseMaxBytes = 3000

// IsHLL reports whether the string v has an HLL's header.
func IsHLL(v []byte) bool { return hll.Check(v) == nil }

// SetHLLSparseMaxBytes sets hll-sparse-max-bytes: the longest a sparse
// HLL grows (header included) before it is made dense. HLLs already past
// it stay as they are until they next change.
func (s *Store) SetHLLSparseMaxBytes(n int64) { s.hllSparseMax.Store(n) }

// HLLSparseMaxBytes returns what SetHLLSparseMaxBytes set.
func (s *Store) HLLSparseMaxBytes() int64 { return s.hllSparseMax.Load() }

func (s *Store) sparseMax() int {
	return int(min(s.hllSparseMax.Load(), math.MaxInt32))
}

// stringAt is what editStrings found at one key.
type stringAt struct {
	value []byte // the store's bytes: not to be modified or kept
	found bool
	other bool // found, but not a string
}

// check is ErrWrongType for a key of another type, else nil.
func (a stringAt) check() error {
	if a.other {
		return ErrWrongType
	}
	return nil
}

// editStrings calls fn with the strings at keys, under the write locks of
// all their shards, and stores what fn returns under keys[0] if fn says
// to write it (keeping the key's deadlines, as Update does). It returns
// what it found at each key, its value cleared (the store's bytes may be
// gone once the locks are released), for countReads.
func (s *Store) editStrings(keys [][]byte, fn func(at []stringAt) (next []byte, write bool, err error)) ([]stringAt, error) {
	if err := s.admit(0); err != nil {
		return nil, err
	}
	at := make([]stringAt, len(keys))
	shards := s.lockShards(keys, 1)
	err := s.editStringsLocked(keys, at, fn)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	s.grown(s.hash(keys[0])) // PFADD's key, PFMERGE's destination
	for i := range at {
		at[i].value = nil
	}
	return at, err
}

func (s *Store) editStringsLocked(keys [][]byte, at []stringAt, fn func([]stringAt) ([]byte, bool, error)) error {
	for i, k := range keys {
		h := s.hash(k)
		sl, found := s.liveKeyLocked(s.shardOf(h), h, k)
		at[i] = stringAt{found: found, other: found && !sl.rec.isString()}
		if found && !at[i].other {
			at[i].value = sl.rec.value
		}
	}
	next, write, err := fn(at)
	if err != nil || !write {
		return err
	}
	h := s.hash(keys[0])
	sh := s.shardOf(h)
	sl, found := s.liveKeyLocked(sh, h, keys[0])
	_, err = s.rewriteLocked(sh, h, sl, found, keys[0], next)
	return err
}

// countReads counts the first n keys' lookups as reads, as GET counts its
// key: a hit for a live key of any type (noted by the eviction policy), a
// miss for another. Redis's PFCOUNT and PFMERGE look their keys up as
// reads, one by one until one fails. With told, the misses were
// reported already (missesOf).
func (s *Store) countReads(keys [][]byte, at []stringAt, n int, told bool) {
	for i, k := range keys[:min(n, len(at))] {
		h := s.hash(k)
		switch {
		case at[i].found:
			s.shardOf(h).hits.Add(1)
			s.countAccess(h)
		case told:
			s.shardOf(h).misses.Add(1)
		default:
			s.missed(s.shardOf(h), k)
		}
	}
}

// missesOf reports the misses among the first n of keys, for PFMERGE,
// which reads them all before it creates its destination.
func (s *Store) missesOf(keys [][]byte, at []stringAt, n int) {
	for i, k := range keys[:min(n, len(at))] {
		if !at[i].found {
			s.notifyQuiet(Missed, k)
		}
	}
}

// PFAdd adds elems to the HLL at key, creating it if missing, and reports
// whether it changed (PFADD's 1), which is when it is written.
func (s *Store) PFAdd(key []byte, elems [][]byte) (changed bool, err error) {
	_, err = s.editStrings([][]byte{key}, func(at []stringAt) ([]byte, bool, error) {
		if err := at[0].check(); err != nil {
			return nil, false, err
		}
		var next []byte
		next, changed, err = hll.Add(at[0].value, elems, s.sparseMax())
		return next, changed, err
	})
	return changed, err
}

// PFCount is the estimated cardinality of the union of the HLLs at keys
// (missing keys are empty ones). Of one key, the cached cardinality is
// used if valid, else computed and cached: as in Redis that rewrites the
// value, a write readers and watchers are told of.
func (s *Store) PFCount(keys [][]byte) (card int64, err error) {
	looked := len(keys)
	var at []stringAt
	if len(keys) == 1 {
		at, err = s.editStrings(keys, func(at []stringAt) ([]byte, bool, error) {
			if err := at[0].check(); err != nil || !at[0].found {
				return nil, false, err
			}
			n, next, err := hll.Count(at[0].value)
			card = int64(n)
			return next, next != nil, err
		})
	} else {
		at, err = s.editStrings(keys, func(at []stringAt) ([]byte, bool, error) {
			var m hll.Max
			var err error
			if _, looked, err = mergeAll(&m, at); err != nil {
				return nil, false, err
			}
			card = int64(m.Count())
			return nil, false, nil
		})
	}
	s.countReads(keys, at, looked, false)
	return card, err
}

// PFMerge merges the HLLs at keys (dst and srcs; missing ones are empty)
// into dst, creating it if missing. dst is dense if any of them is.
func (s *Store) PFMerge(dst []byte, srcs [][]byte) error {
	keys := append([][]byte{dst}, srcs...)
	looked, told := len(keys), false
	at, err := s.editStrings(keys, func(at []stringAt) ([]byte, bool, error) {
		var m hll.Max
		dense, n, err := mergeAll(&m, at)
		if looked = n; err != nil {
			return nil, false, err
		}
		s.missesOf(keys, at, n)
		told = true
		next, err := m.Store(at[0].value, dense, s.sparseMax())
		return next, err == nil, err
	})
	s.countReads(keys, at, looked, told)
	return err
}

// mergeAll merges the HLLs found at into m, checking each in order as
// Redis does, and reports whether any is dense, and how many it looked at:
// all of them, or up to the one that failed.
func mergeAll(m *hll.Max, at []stringAt) (dense bool, looked int, err error) {
	for i, a := range at {
		if err := a.check(); err != nil {
			return false, i + 1, err
		}
		if !a.found {
			continue
		}
		d, err := m.Merge(a.value)
		if err != nil {
			return false, i + 1, err
		}
		dense = dense || d
	}
	return dense, len(at), nil
}

// HLLDebug is what PFDEBUG found of an HLL: its encoding before the call,
// and, if asked to be dense, whether it was converted, and its registers.
type HLLDebug struct {
	Sparse    bool
	Converted bool
	Registers []uint8
	// Opcodes are a sparse HLL's, decoded.
	Opcodes []hll.Opcode
}

// PFDebug looks at the HLL at key for PFDEBUG: its encoding and, if
// sparse, its opcodes; with toDense (GETREG, TODENSE) a sparse HLL is made
// dense first, and the registers returned. A missing key is ErrNoHLLKey.
func (s *Store) PFDebug(key []byte, toDense bool) (d HLLDebug, err error) {
	_, err = s.editStrings([][]byte{key}, func(at []stringAt) ([]byte, bool, error) {
		if !at[0].found {
			return nil, false, ErrNoHLLKey
		}
		if err := at[0].check(); err != nil {
			return nil, false, err
		}
		v := at[0].value
		if err := hll.Check(v); err != nil {
			return nil, false, err
		}
		d.Sparse = hll.IsSparse(v)
		if !toDense {
			if d.Sparse {
				d.Opcodes = hll.Decode(v)
			}
			return nil, false, nil
		}
		next, converted, err := hll.ToDense(v)
		if err != nil {
			return nil, false, err
		}
		d.Converted = converted
		d.Registers = hll.DenseRegisters(next)
		return next, converted, nil
	})
	return d, err
}

// PFSelfTest runs the HLL code's checks of itself (PFSELFTEST).
func (s *Store) PFSelfTest() error { return hll.SelfTest() }
