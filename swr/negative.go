package swr

import (
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/expiring"
)

// maxNegative bounds the keys remembered as missing at the origin.
const maxNegative = 100_000

// negativeCache remembers the origin's recent "no such key" answers, each
// for NegativeTTL, until the store is flushed (a FLUSHALL forgets them
// like every cached thing), or until a client writes or deletes the key:
// each answer holds a fence on its key, broken by any such write, so a
// read after DEL asks the origin again. Forgetting one early only costs
// one more origin call, so the memory is bounded (expiring.Map).
type negativeCache struct {
	mu      sync.Mutex
	keys    expiring.Map[*engine.Fence]
	flushes uint64 // the store's Flushes when keys was last emptied
}

func newNegativeCache(ttl time.Duration) *negativeCache {
	return &negativeCache{keys: expiring.Map[*engine.Fence]{MaxKeys: maxNegative, SweepEvery: ttl,
		OnDrop: func(_ string, f *engine.Fence) { f.Release() }}}
}

// current empties the record if flushes, the store's Flushes, says it was
// flushed since, and reports whether flushes is the latest count the
// record knows: an older one was read before a flush that emptied it.
// c.mu must be held.
func (c *negativeCache) current(flushes uint64) bool {
	if flushes > c.flushes {
		c.keys.Clear()
		c.flushes = flushes
	}
	return flushes == c.flushes
}

// rememberMissing records that the origin said key does not exist.
func (f *Filler) rememberMissing(key string, now time.Time) {
	f.remember(key, now.Add(f.opts.NegativeTTL), now)
}

// remember records key as missing at the origin until until.
func (f *Filler) remember(key string, until, now time.Time) {
	c, flushes := f.negative, f.opts.Store.Flushes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current(flushes) {
		c.keys.Put(key, f.opts.Store.Fence([]byte(key)), until, now)
	}
}

// isNegative reports whether the origin recently said key does not exist.
func (f *Filler) isNegative(key string, now time.Time) bool {
	c, flushes := f.negative, f.opts.Store.Flushes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.current(flushes) {
		return false
	}
	fence, ok := c.keys.Get(key, now)
	if ok && fence.Written() {
		c.keys.Delete(key)
		return false
	}
	return ok
}
