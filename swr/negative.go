package swr

import "time"

// maxNegative bounds the keys remembered as missing at the origin.
const maxNegative = 100_000

// negativeEntry remembers an origin's "no such key" until a deadline, or
// until the store is flushed: a FLUSHALL forgets it like every cached thing.
type negativeEntry struct {
	until   time.Time
	flushes uint64 // the store's Flushes when it was recorded
}

// rememberMissing records that the origin said key does not exist. When the
// record is full, expired entries are dropped, then, if need be, arbitrary
// ones: forgetting one only costs one more origin call.
func (f *Filler) rememberMissing(key string, now time.Time) {
	flushes := f.opts.Store.Flushes()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.negative) >= maxNegative {
		for k, ne := range f.negative {
			if !now.Before(ne.until) || ne.flushes != flushes || len(f.negative) >= maxNegative {
				delete(f.negative, k)
			}
		}
	}
	f.negative[key] = negativeEntry{until: now.Add(f.opts.NegativeTTL), flushes: flushes}
}

// isNegative reports whether the origin recently said key does not exist.
func (f *Filler) isNegative(key string, now time.Time) bool {
	flushes := f.opts.Store.Flushes()
	f.mu.Lock()
	defer f.mu.Unlock()
	ne, ok := f.negative[key]
	if ok && (!now.Before(ne.until) || ne.flushes != flushes) {
		delete(f.negative, key)
		return false
	}
	return ok
}
