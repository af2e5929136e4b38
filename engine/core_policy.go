package engine

import (
	"errors"
	"strings"
)

// EvictionPolicy is what the store does when its entries reach MaxMemory,
// named as Redis's maxmemory-policy (core_evict.go has how each is done).
type EvictionPolicy uint32

// The eviction policies, Redis's eight.
const (
	// AllKeysLFU evicts, among all keys, those least frequently used,
	// as the store's frequency sketch (TinyLFU) estimates it: the zero
	// value, and the default.
	AllKeysLFU EvictionPolicy = iota
	// NoEviction evicts nothing: writes are refused with ErrOOM while the
	// store holds more than MaxMemory.
	NoEviction
	// AllKeysLRU evicts, among all keys, those least recently used.
	AllKeysLRU
	// AllKeysRandom evicts keys at random.
	AllKeysRandom
	// VolatileLRU is AllKeysLRU among the keys with a deadline.
	VolatileLRU
	// VolatileLFU is AllKeysLFU among the keys with a deadline.
	VolatileLFU
	// VolatileRandom is AllKeysRandom among the keys with a deadline.
	VolatileRandom
	// VolatileTTL evicts, among the keys with a deadline, those nearest
	// to it.
	VolatileTTL
)

// policyNames is the one list of the policies' Redis names, by policy.
var policyNames = [...]string{
	AllKeysLFU:     "allkeys-lfu",
	NoEviction:     "noeviction",
	AllKeysLRU:     "allkeys-lru",
	AllKeysRandom:  "allkeys-random",
	VolatileLRU:    "volatile-lru",
	VolatileLFU:    "volatile-lfu",
	VolatileRandom: "volatile-random",
	VolatileTTL:    "volatile-ttl",
}

// String returns the policy's Redis name.
func (p EvictionPolicy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "unknown"
}

// ErrUnknownPolicy is returned by ParseEvictionPolicy for a name that is
// none of Redis's.
var ErrUnknownPolicy = errors.New("engine: unknown maxmemory-policy")

// ParseEvictionPolicy returns the policy of a Redis maxmemory-policy name,
// in any case.
func ParseEvictionPolicy(name string) (EvictionPolicy, error) {
	for p, n := range policyNames {
		if strings.EqualFold(name, n) {
			return EvictionPolicy(p), nil
		}
	}
	return 0, ErrUnknownPolicy
}

// PolicyNames returns the names ParseEvictionPolicy accepts, in the order
// of Redis's CONFIG SET error.
func PolicyNames() []string {
	return []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}
}

// LFU reports whether the policy keeps access counters in the stamps
// (Redis's MAXMEMORY_FLAG_LFU), which OBJECT FREQ reads; otherwise they
// hold the time of the last access, which OBJECT IDLETIME reads.
func (p EvictionPolicy) LFU() bool { return p == AllKeysLFU || p == VolatileLFU }

// LRU reports whether the policy ranks keys by their last access.
func (p EvictionPolicy) LRU() bool { return p == AllKeysLRU || p == VolatileLRU }

// volatile reports whether the policy evicts only keys with a deadline.
func (p EvictionPolicy) volatile() bool { return p >= VolatileLRU }

// random reports whether the policy evicts a sampled key as it is.
func (p EvictionPolicy) random() bool { return p == AllKeysRandom || p == VolatileRandom }
