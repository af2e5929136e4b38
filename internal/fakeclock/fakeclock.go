// Package fakeclock is a clock for tests, moved by hand: its Now goes where
// a package takes a clock (an Options.Now of the shape func() time.Time),
// so a test moves deadlines without sleeping.
package fakeclock

import (
	"sync"
	"time"
)

// Start is where a Clock made by New starts: a fixed instant far from the
// real time, so a part that reads the real clock instead shows at once.
var Start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// Clock is a time that moves only when Advance moves it. It is safe for
// concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock at Start.
func New() *Clock { return &Clock{now: Start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
