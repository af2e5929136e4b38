package loader

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// ErrCallerTimeout is returned by Group.Do to a caller whose ctx ended
// before its flight did. The flight goes on: its result still reaches the
// callers that stayed, and whatever fn stores is stored.
var ErrCallerTimeout = errors.New("loader: caller stopped waiting for the load")

// ErrPanic is matched (errors.Is) by the error every caller of a flight gets
// when the flight's fn panicked; see PanicError.
var ErrPanic = errors.New("loader: load panicked")

// errGoexit is the result of a flight whose fn called runtime.Goexit: the
// flight still ends and wakes its callers, like a panic.
var errGoexit = fmt.Errorf("%w: runtime.Goexit in the load", ErrPanic)

// PanicError is the error of a flight whose fn panicked. It is handed to
// every caller rather than re-panicked, so a bug in one load fails that
// key's callers instead of the whole cache, and the key stays loadable.
type PanicError struct {
	// Value is what fn panicked with.
	Value any
	// Stack is the panicking goroutine's stack, for the log: it is kept out
	// of Error, whose text may end up in a one-line client reply.
	Stack []byte
}

// Error is one line: the stack is in Stack.
func (e *PanicError) Error() string { return "panic: " + oneLine(fmt.Sprint(e.Value)) }

// Is makes errors.Is(err, ErrPanic) true.
func (e *PanicError) Is(target error) bool { return target == ErrPanic }

// Unwrap returns the panic value if it was an error, so its own sentinels
// can still be matched.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// LoadFunc is the work of one flight. Its ctx is never cancelled and has no
// deadline, since no caller owns the flight: fn must bound itself, as
// Loader.Fetch does with the loader's timeout. Values in ctx are the
// starting caller's.
type LoadFunc func(ctx context.Context) (Result, error)

// Observer receives the coalescing measurements that operators need and few
// systems show: how many callers each flight served and how long each of
// them waited. It is how metrics/ is fed without loader depending on it.
// Methods are called synchronously and must be quick and must not call
// back into the Group.
type Observer interface {
	// FlightDone is called once per flight, after its callers were woken,
	// with the number of Do calls that joined it (the one that started it
	// included; 0 for a flight started by Go that nobody asked for), how
	// long fn ran, and fn's error.
	FlightDone(key string, callers int, d time.Duration, err error)
	// Joined is called when a Do call joins a flight someone else started,
	// as it starts waiting, so a dashboard sees callers pile up while the
	// load runs, not only once it ends.
	Joined(key string)
	// Waited is called once per Do call as it returns, with how long the
	// caller waited, whether it joined a flight started by someone else,
	// and the error it got (ErrCallerTimeout when it left early).
	Waited(key string, d time.Duration, joined bool, err error)
}

// Group runs at most one flight per key at a time and hands its result to
// every caller that asked for the key while it ran. Different keys never
// wait for each other.
//
// Unlike groupcache's singleflight, a flight belongs to no caller: it runs
// in its own goroutine under a context no caller can cancel, each caller
// waits for it only as long as its own ctx allows, and a panic in fn becomes
// an error for every caller instead of leaving the key wedged.
//
// A Group deduplicates only calls that overlap: a caller that arrives just
// after a flight ended starts a new one. A fn that fills a cache must
// therefore look in the cache again before calling the origin:
//
//  1. caller A misses the cache and starts a flight;
//  2. the flight stores the value and ends;
//  3. caller B, who missed the cache before step 2, calls Do and starts a
//     second flight, which finds the value stored in step 2.
//
// The zero value is ready to use. A Group is safe for concurrent use.
type Group struct {
	// Observer, if not nil, receives per-flight and per-caller
	// measurements. Set it before first use.
	Observer Observer

	mu sync.Mutex         // protects m and the counters in each flight
	m  map[string]*flight // lazily initialized
}

// flight is one running load of a key.
type flight struct {
	done chan struct{} // closed once res and err are final
	res  Result
	err  error

	callers int // Do calls that joined; guarded by Group.mu
	waiting int // of those, the ones still waiting; guarded by Group.mu
	// background: started by Go, a refresh of a value the cache still
	// holds; set by Go under Group.mu, before any Join can see the flight.
	background bool
}

// Do returns the result of key's flight, starting one with fn if none is
// running, and reports whether it joined a flight someone else started.
//
// Do waits until the flight ends or ctx does, whichever comes first; when
// ctx ends first it returns an error matching both ErrCallerTimeout and
// ctx.Err(), and the flight continues. A ctx that has already ended still
// starts a flight when none is running, which is the fail-fast policy: ask
// for the load, answer at once.
//
// The Value in the Result is shared by every caller of the flight and must
// not be modified.
func (g *Group) Do(ctx context.Context, key string, fn LoadFunc) (res Result, err error, joined bool) {
	c := g.Join(ctx, key, fn)
	res, err = c.Wait(ctx)
	return res, err, c.Joined()
}

// Call is one caller's place in a flight, from Join: Do in two steps, so a
// caller of many keys (MGETFILL) can join every key's flight before it
// waits for any.
type Call struct {
	g      *Group
	f      *flight
	key    string
	joined bool
	start  time.Time
}

// Join joins key's flight, starting one with fn if none is running, without
// waiting for it; Wait must follow, exactly once. ctx gives a flight it
// starts its values.
func (g *Group) Join(ctx context.Context, key string, fn LoadFunc) *Call {
	start := time.Now()
	g.mu.Lock()
	f, joined := g.m[key]
	if !joined {
		f = g.start(ctx, key, fn)
	}
	// Counted under the same lock that start holds, so the flight cannot
	// end and report its callers before this one is counted.
	f.callers++
	f.waiting++
	g.mu.Unlock()
	if obs := g.Observer; obs != nil && joined {
		obs.Joined(key)
	}
	return &Call{g: g, f: f, key: key, joined: joined, start: start}
}

// Joined reports whether the call joined a flight someone else started.
func (c *Call) Joined() bool { return c.joined }

// Background reports whether the call joined a flight started by Go: a
// background refresh, begun while the cache held a servable copy of the
// key. A caller that missed that copy before it joined may find it now and
// Leave instead of waiting for the refresh.
func (c *Call) Background() bool { return c.f.background }

// Leave ends the call without waiting for its flight (instead of Wait):
// the caller was answered otherwise. The flight goes on.
func (c *Call) Leave() {
	c.g.mu.Lock()
	c.f.waiting--
	c.g.mu.Unlock()
	if obs := c.g.Observer; obs != nil {
		obs.Waited(c.key, time.Since(c.start), c.joined, nil)
	}
}

// Wait is Do's wait: the flight's result, or ErrCallerTimeout once ctx ends
// first.
func (c *Call) Wait(ctx context.Context) (Result, error) {
	res, err := c.g.wait(ctx, c.f)
	if obs := c.g.Observer; obs != nil {
		obs.Waited(c.key, time.Since(c.start), c.joined, err)
	}
	return res, err
}

// wait returns f's result, or ErrCallerTimeout once ctx ends. A result that
// is already there is preferred to a ctx that has already ended.
func (g *Group) wait(ctx context.Context, f *flight) (Result, error) {
	select {
	case <-f.done:
		return f.res, f.err
	default:
	}
	select {
	case <-f.done:
		return f.res, f.err
	case <-ctx.Done():
		select {
		case <-f.done:
			return f.res, f.err
		default:
		}
		g.mu.Lock()
		f.waiting--
		g.mu.Unlock()
		return Result{}, fmt.Errorf("%w: %w", ErrCallerTimeout, ctx.Err())
	}
}

// Go starts a flight for key with fn unless one is running, and reports
// whether it started one. Nobody waits for it; callers who come later join
// it with Do. It suits a background refresh: at most one per key.
func (g *Group) Go(ctx context.Context, key string, fn LoadFunc) (started bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.m[key]; ok {
		return false
	}
	g.start(ctx, key, fn).background = true
	return true
}

// start registers a flight for key and runs fn for it in a new goroutine.
// g.mu must be held.
func (g *Group) start(ctx context.Context, key string, fn LoadFunc) *flight {
	if g.m == nil {
		g.m = make(map[string]*flight)
	}
	f := &flight{done: make(chan struct{})}
	g.m[key] = f
	go g.run(context.WithoutCancel(ctx), key, f, fn)
	return f
}

// run is a flight's goroutine.
func (g *Group) run(ctx context.Context, key string, f *flight, fn LoadFunc) {
	begin := time.Now()
	returned := false
	defer func() {
		if !returned {
			if r := recover(); r != nil {
				f.res, f.err = Result{}, &PanicError{Value: r, Stack: debug.Stack()}
			} else {
				f.res, f.err = Result{}, errGoexit
			}
		}
		// The flight leaves the map before its callers are woken: a caller
		// who gets a failure and asks again must start a new flight, not
		// join the one that just failed.
		g.mu.Lock()
		if g.m[key] == f { // not so after Forget
			delete(g.m, key)
		}
		callers := f.callers
		g.mu.Unlock()
		close(f.done)
		if obs := g.Observer; obs != nil {
			obs.FlightDone(key, callers, time.Since(begin), f.err)
		}
	}()
	f.res, f.err = fn(ctx)
	returned = true
}

// Forget detaches key's running flight, if any, so that the next Do starts
// a new one; the callers already waiting still get the old flight's result.
// Use it when the key changed under the flight (a write or delete) and
// newcomers should not be handed a value loaded before the change.
func (g *Group) Forget(key string) {
	g.mu.Lock()
	delete(g.m, key)
	g.mu.Unlock()
}

// InFlight reports whether a flight for key is running.
func (g *Group) InFlight(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.m[key]
	return ok
}

// Waiters reports how many Do calls are waiting for key's running flight;
// callers that gave up are not counted. Tests wait on it instead of sleeping.
func (g *Group) Waiters(key string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if f := g.m[key]; f != nil {
		return f.waiting
	}
	return 0
}
