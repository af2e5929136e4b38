package loader

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Cooldown defaults, used when the matching Cooldown field is zero.
const (
	DefaultCooldownBase = time.Second
	DefaultCooldownMax  = 30 * time.Second
	// DefaultCooldownKeys bounds the number of keys a Cooldown remembers.
	DefaultCooldownKeys = 100_000
)

// cooldownJitter spreads the cooldowns of keys that failed together (say,
// when the origin went down) by ±20%, so they do not all retry in the same
// instant when it comes back.
const cooldownJitter = 0.2

// Cooldown remembers recent load failures per key, so that a failing origin
// is not called again for that key until a short, growing, jittered pause
// has passed. During the pause the key's callers get the remembered failure
// (or a stale value) at once instead of a new origin call.
//
// The first failure pauses the key for Base, each consecutive failure
// doubles the pause up to Max, and a success forgets the key. Failures are
// consecutive when the next one comes within Max after the previous pause
// ended; a key quiet for longer starts again at Base, which is also what
// lets the record be dropped and keeps memory bounded.
//
// The zero value is usable with the defaults above. Set the fields before
// first use. A Cooldown is safe for concurrent use.
type Cooldown struct {
	// Base is the first pause after a failure. If zero,
	// DefaultCooldownBase is used.
	Base time.Duration
	// Max caps the pause, jitter included, and is also how long a failure
	// is remembered after its pause ends. If zero, DefaultCooldownMax
	// (--max-cooldown) is used.
	Max time.Duration
	// MaxKeys caps the number of keys remembered. When full, records whose
	// memory has run out are dropped first, then arbitrary ones: such a key
	// may reach its origin early, which is better than unbounded growth in
	// a failure storm over many keys. If zero, DefaultCooldownKeys is used.
	MaxKeys int

	mu        sync.Mutex                // protects m and nextSweep
	m         map[string]*cooldownEntry // lazily initialized
	nextSweep time.Time                 // when Fail next drops forgotten records
}

// cooldownEntry is what a Cooldown remembers about one key.
type cooldownEntry struct {
	until    time.Time // end of the pause
	failures int       // consecutive failures so far, ≥ 1
	err      error     // the last failure, answered during the pause
}

func (c *Cooldown) base() time.Duration {
	if c.Base > 0 {
		return c.Base
	}
	return DefaultCooldownBase
}

func (c *Cooldown) maxPause() time.Duration {
	if c.Max > 0 {
		return c.Max
	}
	return DefaultCooldownMax
}

func (c *Cooldown) maxKeys() int {
	if c.MaxKeys > 0 {
		return c.MaxKeys
	}
	return DefaultCooldownKeys
}

// Check reports whether key is paused at now, and if so until when and with
// which failure. A key whose pause has ended reports ok false but is still
// remembered, so that its next failure pauses it for longer.
func (c *Cooldown) Check(key string, now time.Time) (until time.Time, lastErr error, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[key]
	if e == nil {
		return time.Time{}, nil, false
	}
	if now.Before(e.until) {
		return e.until, e.err, true
	}
	if !now.Before(e.until.Add(c.maxPause())) {
		delete(c.m, key)
	}
	return time.Time{}, nil, false
}

// Fail records a failed load of key at now and returns the end of the pause
// it starts.
func (c *Cooldown) Fail(key string, err error, now time.Time) (until time.Time) {
	base, limit := c.base(), c.maxPause()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.failLocked(key, err, now, limit)
	e.until = now.Add(pause(base, limit, e.failures))
	return e.until
}

// Hold records a failure of key that another replica saw, which paused the
// key fleet-wide until until: the key pauses here until then too (at most
// Max from now), or longer if it already was. It counts as a failure, so
// this replica's next own failure pauses the key for longer.
func (c *Cooldown) Hold(key string, err error, until, now time.Time) {
	limit := c.maxPause()
	if latest := now.Add(limit); until.After(latest) {
		until = latest
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.failLocked(key, err, now, limit); until.After(e.until) {
		e.until = until
	}
}

// failLocked counts a failure of key at now in its record, made anew when
// there is none or the last failure is forgotten (not consecutive with
// this one). c.mu must be held.
func (c *Cooldown) failLocked(key string, err error, now time.Time, limit time.Duration) *cooldownEntry {
	if c.m == nil {
		c.m = make(map[string]*cooldownEntry)
	}
	e := c.m[key]
	if e == nil || !now.Before(e.until.Add(limit)) {
		if len(c.m) >= c.maxKeys() || !now.Before(c.nextSweep) {
			c.sweep(now, limit)
		}
		e = &cooldownEntry{}
		c.m[key] = e
	}
	e.failures++
	e.err = err
	return e
}

// pause returns base doubled failures-1 times, jittered, and capped at limit.
func pause(base, limit time.Duration, failures int) time.Duration {
	d := base
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	d = time.Duration(float64(d) * (1 + cooldownJitter*(2*rand.Float64()-1)))
	return min(d, limit)
}

// sweep drops records forgotten at now and, if the map is still full,
// arbitrary ones down to 7/8 of the cap, so a full map costs one sweep per
// MaxKeys/8 new keys rather than one per key. c.mu must be held.
func (c *Cooldown) sweep(now time.Time, limit time.Duration) {
	for k, e := range c.m {
		if !now.Before(e.until.Add(limit)) {
			delete(c.m, k)
		}
	}
	if n := c.maxKeys(); len(c.m) >= n {
		target := n - n/8 - 1
		for k := range c.m { // map order is random: no key is favoured
			if len(c.m) <= target {
				break
			}
			delete(c.m, k)
		}
	}
	c.nextSweep = now.Add(limit)
}

// Succeed forgets key's failures: the origin answered, so the next failure
// starts again at Base.
func (c *Cooldown) Succeed(key string) {
	c.mu.Lock()
	delete(c.m, key)
	c.mu.Unlock()
}

// Len reports how many keys are remembered, paused or not, for metrics and
// tests.
func (c *Cooldown) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
