// Package fakeclock is a clock for tests, moved by hand: its Now goes where
// a package takes a clock (an Options.Now of the shape func() time.Time),
// so a test moves deadlines without sleeping.
package fakeclock

import (
	"slices"
	"sync"
	"time"
)

// Start is where a Clock made by New starts: a fixed instant far from the
// real time, so a part that reads the real clock instead shows at once.
var Start = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// Clock is a time that moves only when Advance moves it. It is safe for
// concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	timers []timer // AfterFunc's, not yet due
}

// timer is a function AfterFunc set to run at a time.
type timer struct {
	at time.Time
	f  func()
}

// New returns a Clock at Start.
func New() *Clock { return &Clock{now: Start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock d forward, and runs the functions AfterFunc set
// that are due by then, in the order of their times, before it returns.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []timer
	pending := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(c.now) {
			pending = append(pending, t)
		} else {
			due = append(due, t)
		}
	}
	c.timers = pending
	c.mu.Unlock()
	slices.SortStableFunc(due, func(a, b timer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		t.f()
	}
}

// AfterFunc runs f once Advance has moved the clock d forward from now,
// as time.AfterFunc does on the real clock, but in Advance's goroutine.
func (c *Clock) AfterFunc(d time.Duration, f func()) {
	c.mu.Lock()
	c.timers = append(c.timers, timer{c.now.Add(d), f})
	c.mu.Unlock()
}
