package engine

import (
	"errors"
	"strings"
)

// EvictionPolicy is what the store does when its entries reach MaxMemory,
// named as Redis's maxmemory-policy.
type EvictionPolicy uint32

// The eviction policies the store supports.
const (
	// AllKeysLFU evicts, among all keys, those ristretto's TinyLFU policy
	// finds least frequently used, and may refuse a new key worth less
	// than what it would evict.
	AllKeysLFU EvictionPolicy = iota
	// NoEviction evicts nothing: writes are refused with ErrOOM while the
	// store holds more than MaxMemory.
	NoEviction
)

// ErrUnsupportedPolicy is returned by ParseEvictionPolicy for Redis policies
// the store does not implement.
var ErrUnsupportedPolicy = errors.New("engine: unsupported maxmemory-policy")

// String returns the policy's Redis name.
func (p EvictionPolicy) String() string {
	if p == NoEviction {
		return "noeviction"
	}
	return "allkeys-lfu"
}

// ParseEvictionPolicy returns the policy of a Redis maxmemory-policy name,
// in any case. Redis's other policies (the volatile-* ones, allkeys-lru,
// allkeys-random) are ErrUnsupportedPolicy; other names are an error too.
func ParseEvictionPolicy(name string) (EvictionPolicy, error) {
	switch strings.ToLower(name) {
	case "allkeys-lfu":
		return AllKeysLFU, nil
	case "noeviction":
		return NoEviction, nil
	case "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-random":
		return 0, ErrUnsupportedPolicy
	}
	return 0, errors.New("engine: unknown maxmemory-policy " + name)
}
