// Package expiring holds Map, a bounded map whose entries expire: the
// per-key memory of the failure cooldown (loader) and of the origin's
// recent "no such key" answers (swr). Each is a record that is cheap to
// lose, so when the map is full it forgets entries rather than grow.
package expiring

import "time"

// DefaultMaxKeys is the bound of a Map whose MaxKeys is zero.
const DefaultMaxKeys = 100_000

// Map maps string keys to values that expire at a deadline of their own,
// and holds at most MaxKeys of them. Time is passed in (now), so its owner
// decides which clock rules it.
//
// When a new key arrives in a full map, expired entries are dropped first,
// then, if the map is still full, arbitrary ones down to 7/8 of MaxKeys:
// a full map costs one pass over it per MaxKeys/8 new keys, not one per
// key. Expired entries are also dropped in one pass at most once per
// SweepEvery, so a map that never fills does not keep them forever.
//
// The zero value is usable, with DefaultMaxKeys; set the fields before
// first use. A Map is not safe for concurrent use: its owner locks around
// it, which lets the owner read, change and store a value in one step.
type Map[V any] struct {
	// MaxKeys bounds the number of entries. If zero, DefaultMaxKeys.
	MaxKeys int
	// SweepEvery is the least time between two passes that drop expired
	// entries when a new key arrives; zero means only when full.
	SweepEvery time.Duration
	// OnDrop, if not nil, is called with each entry that leaves the map,
	// however it leaves (expiry, room, Delete, Clear, a Put replacing it),
	// so that a value holding a resource can free it.
	OnDrop func(key string, v V)

	m         map[string]item[V] // lazily made
	nextSweep time.Time
}

type item[V any] struct {
	v     V
	until time.Time
}

func (m *Map[V]) maxKeys() int {
	if m.MaxKeys > 0 {
		return m.MaxKeys
	}
	return DefaultMaxKeys
}

// Get returns key's value if it has one that has not expired at now. An
// expired entry is dropped.
func (m *Map[V]) Get(key string, now time.Time) (v V, ok bool) {
	it, ok := m.m[key]
	if !ok {
		return v, false
	}
	if !now.Before(it.until) {
		m.drop(key, it.v)
		return v, false
	}
	return it.v, true
}

// drop removes key, whose value is v, telling OnDrop.
func (m *Map[V]) drop(key string, v V) {
	delete(m.m, key)
	if m.OnDrop != nil {
		m.OnDrop(key, v)
	}
}

// Put gives key the value v until the deadline until, replacing any value
// it had. A new key may first make room, as the Map doc says.
func (m *Map[V]) Put(key string, v V, until, now time.Time) {
	if m.m == nil {
		m.m = make(map[string]item[V])
	}
	if old, ok := m.m[key]; !ok {
		if len(m.m) >= m.maxKeys() || (m.SweepEvery > 0 && !now.Before(m.nextSweep)) {
			m.sweep(now)
		}
	} else if m.OnDrop != nil {
		m.OnDrop(key, old.v)
	}
	m.m[key] = item[V]{v: v, until: until}
}

// sweep drops the entries expired at now and, if the map is still full,
// arbitrary ones until a new key leaves it at 7/8 of MaxKeys.
func (m *Map[V]) sweep(now time.Time) {
	for k, it := range m.m {
		if !now.Before(it.until) {
			m.drop(k, it.v)
		}
	}
	if n := m.maxKeys(); len(m.m) >= n {
		target := n - n/8 - 1
		for k, it := range m.m { // map order is random: no key is favoured
			if len(m.m) <= target {
				break
			}
			m.drop(k, it.v)
		}
	}
	m.nextSweep = now.Add(m.SweepEvery)
}

// Delete forgets key.
func (m *Map[V]) Delete(key string) {
	if it, ok := m.m[key]; ok {
		m.drop(key, it.v)
	}
}

// Clear forgets every key.
func (m *Map[V]) Clear() {
	for k, it := range m.m {
		m.drop(k, it.v)
	}
}

// Len reports how many entries are held, expired ones not yet dropped
// included.
func (m *Map[V]) Len() int { return len(m.m) }

// Each calls fn with each entry that has not expired at now, its value and
// its deadline, in no order, until fn returns false. fn must not change m.
func (m *Map[V]) Each(now time.Time, fn func(key string, v V, until time.Time) bool) {
	for k, it := range m.m {
		if now.Before(it.until) && !fn(k, it.v, it.until) {
			return
		}
	}
}
