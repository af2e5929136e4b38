package loader

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/internal/expiring"
)

// Cooldown defaults, used when the matching Cooldown field is zero.
const (
	DefaultCooldownBase = time.Second
	DefaultCooldownMax  = 30 * time.Second
	// DefaultCooldownKeys bounds the number of keys a Cooldown remembers.
	DefaultCooldownKeys = expiring.DefaultMaxKeys
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
	// memory has run out are dropped first, then arbitrary ones (as
	// expiring.Map does): such a key may reach its origin early, which is
	// better than unbounded growth in a failure storm over many keys. If
	// zero, DefaultCooldownKeys is used.
	MaxKeys int

	mu sync.Mutex
	// m holds each key's record until it is forgotten, Max after its
	// pause ends; its bound and sweep interval are set on first use.
	m expiring.Map[*cooldownEntry]
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

// Check reports whether key is paused at now, and if so until when and with
// which failure. A key whose pause has ended reports ok false but is still
// remembered, so that its next failure pauses it for longer.
func (c *Cooldown) Check(key string, now time.Time) (until time.Time, lastErr error, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m.Get(key, now); ok && now.Before(e.until) {
		return e.until, e.err, true
	}
	return time.Time{}, nil, false
}

// Fail records a failed load of key at now and returns the end of the pause
// it starts.
func (c *Cooldown) Fail(key string, err error, now time.Time) (until time.Time) {
	base, limit := c.base(), c.maxPause()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.failLocked(key, err, now)
	e.until = now.Add(pause(base, limit, e.failures))
	c.m.Put(key, e, e.until.Add(limit), now)
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
	e := c.failLocked(key, err, now)
	if until.After(e.until) {
		e.until = until
	}
	c.m.Put(key, e, e.until.Add(limit), now)
}

// failLocked counts a failure of key at now in its record, made anew when
// there is none or the last failure is forgotten (not consecutive with
// this one); the caller sets the pause and puts the record back, which
// sets when it is forgotten. c.mu must be held.
func (c *Cooldown) failLocked(key string, err error, now time.Time) *cooldownEntry {
	if c.m.SweepEvery == 0 { // the first failure: the fields are set by now
		c.m.MaxKeys, c.m.SweepEvery = c.MaxKeys, c.maxPause()
	}
	e, ok := c.m.Get(key, now)
	if !ok {
		e = &cooldownEntry{}
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

// Succeed forgets key's failures: the origin answered, so the next failure
// starts again at Base. It returns how many consecutive failures it forgot
// (0: the key had none), which a caller logs as the end of a cooldown.
func (c *Cooldown) Succeed(key string) (failures int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m.Get(key, time.Time{}); ok {
		failures = e.failures
	}
	c.m.Delete(key)
	return failures
}

// Len reports how many keys are remembered, paused or not; tests read it
// to see the memory bounded.
func (c *Cooldown) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m.Len()
}
