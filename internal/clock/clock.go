// Package clock is the server's one clock: the time the store's
// deadlines, the Filler's and the fleet's are read from, and what the
// server times its commands by.
//
// Reading the system clock costs tens of nanoseconds on a virtual machine,
// and a GETFILL hit read it three times (the store, its access stamp, the
// Filler): a twentieth of a pipelined hit's time. A Clock is instead one
// reading kept in an atomic word. Whoever is about to run commands takes a
// new one (an event loop after each read from a socket, as redis-server
// takes its cached time once per command), and so does the Clock's own
// goroutine every Resolution while no one else does; so a reader is never
// more than about Resolution behind the system clock (restWhileKept just
// after the others stop), and a pipeline of commands costs one reading.
//
// A clock no one reads is not kept: after sleepAfter looks with no reader
// the goroutine sleeps. A reader then takes a reading itself, and wakes
// the goroutine only when readers come often (two within Resolution): an
// idle server's timers, reading the time ten times a second, leave it
// asleep, and the server wakes a few dozen times a second rather than a
// thousand (redis-server: ten, its hz).
package clock

import (
	"sync"
	"sync/atomic"
	"time"
)

// Resolution is how often a Clock's goroutine takes a reading while no one
// else does: the most a reader that no event loop precedes lags the system
// clock (give or take the scheduler's delay).
const Resolution = time.Millisecond

// restWhileKept is how often a Clock's goroutine looks while others keep
// the clock fresher than it would (busy event loops read it after every
// read from a socket). Its thousand wakings a second were, at pipeline 1,
// a sixth of a serving process's system calls that were not the sockets'
// (Go's netpoller and the switches around each timer); a hundred are a
// tenth of that. The price: in the moment after the others stop (the
// loops went idle, or the only one runs a long command), a reader lags by
// up to this much, until the goroutine sees it and ticks again.
const restWhileKept = 10 * time.Millisecond

// stepBack is how far the system clock must step back for a Clock to
// follow it. Two readings taken at once by two goroutines may be stored in
// either order: the later stays, so the clock never runs back by the few
// microseconds between them; a real step (an operator's, NTP's) is followed.
const stepBack = time.Second

// sleepAfter is how many of its goroutine's looks in a row must find the
// clock unread for it to sleep until a reader comes.
const sleepAfter = 3

// A Clock's state, as its goroutine and its readers see it.
const (
	unread   int32 = iota // no one read the clock since the goroutine last looked
	read                  // someone did
	sleeping              // the goroutine sleeps until a reader wakes it
)

// A Clock is the time as of its last reading. Make one with New and stop
// it with Stop; it is safe for concurrent use.
type Clock struct {
	nanos atomic.Int64 // the last reading, Unix nanoseconds
	state atomic.Int32 // unread, read or sleeping
	// asleepRead is the last reading a reader took while the goroutine
	// slept.
	asleepRead atomic.Int64
	wakes      atomic.Int64 // how often the Clock's goroutine woke
	wake       chan struct{}
	done       chan struct{}
	stop       sync.Once
}

// New returns a Clock holding a reading of the system clock, whose
// goroutine takes another every Resolution while it is read, until Stop.
func New() *Clock {
	c := &Clock{wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.Read()
	c.state.Store(read)
	go c.tick()
	return c
}

func (c *Clock) tick() {
	t := time.NewTimer(Resolution)
	defer t.Stop()
	var mine int64 // the goroutine's own last reading
	unreadLooks := 0
	for {
		select {
		case <-t.C:
		case <-c.done:
			return
		}
		c.wakes.Add(1)
		if c.state.Swap(unread) != unread {
			unreadLooks = 0
		} else if unreadLooks++; unreadLooks >= sleepAfter && c.state.CompareAndSwap(unread, sleeping) {
			select {
			case <-c.wake: // firstRead set read
			case <-c.done:
				return
			}
			unreadLooks = 0
		}
		wait := Resolution
		if last := c.nanos.Load(); last != mine && time.Now().UnixNano()-last < int64(Resolution) {
			wait = restWhileKept // someone else read it within the last Resolution
		} else {
			mine = c.Read()
		}
		t.Reset(wait)
	}
}

// Stop ends the Clock's goroutine; the Clock keeps its last reading and
// still takes those Read asks for.
func (c *Clock) Stop() { c.stop.Do(func() { close(c.done) }) }

// Now is the time of the last reading. It has no monotonic reading: what
// is measured with it is measured on the wall clock, as deadlines are.
func (c *Clock) Now() time.Time { return time.Unix(0, c.Nanos()) }

// Nanos is the last reading, in Unix nanoseconds.
func (c *Clock) Nanos() int64 {
	if c.state.Load() != read {
		c.firstRead()
	}
	return c.nanos.Load()
}

// firstRead marks the clock read since its goroutine last looked. While
// the goroutine sleeps the reading it stopped at may be old, so firstRead
// takes one, and wakes the goroutine if the last reader to take one did
// so within Resolution: readers come often enough to keep the clock for.
func (c *Clock) firstRead() {
	if c.state.Load() != sleeping {
		c.state.CompareAndSwap(unread, read)
		return
	}
	now := c.Read()
	if now-c.asleepRead.Swap(now) < int64(Resolution) && c.state.CompareAndSwap(sleeping, read) {
		c.wake <- struct{}{}
	}
}

// Read takes a reading of the system clock, which every reader sees from
// then on, and returns the clock's time: the reading, or a later one
// another goroutine stored meanwhile.
func (c *Clock) Read() int64 {
	now := time.Now().UnixNano()
	for {
		last := c.nanos.Load()
		if now <= last && now > last-int64(stepBack) {
			return last
		}
		if c.nanos.CompareAndSwap(last, now) {
			return now
		}
	}
}
