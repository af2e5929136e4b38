package swr

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/cluster"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
)

// Defaults for Options fields left zero.
const (
	DefaultNegativeTTL            = 5 * time.Second
	DefaultMaxBackgroundRefreshes = 64
	DefaultTTLJitter              = 0.1
)

// Errors of Get; resp/ turns them into -NOLOADER, -TIMEOUT and -LOADERR.
var (
	// ErrNoLoader: no loader is registered for the key.
	ErrNoLoader = errors.New("swr: no loader registered for the key")
	// ErrTimeout: the caller's TIMEOUT passed before the load ended and no
	// stale value was servable; the load goes on.
	ErrTimeout = errors.New("swr: gave up waiting for the load")
)

// TimeoutError is Get's error when the caller stopped waiting; it matches
// ErrTimeout. After is how long it waited: its TIMEOUT, or the loader's
// timeout when it gave none.
type TimeoutError struct{ After time.Duration }

func (e *TimeoutError) Error() string { return fmt.Sprintf("%v after %v", ErrTimeout, e.After) }

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TimeoutError) Is(target error) bool { return target == ErrTimeout }

// Options configures a Filler. Store and Loaders are required.
type Options struct {
	Store   *engine.Store
	Loaders *loader.Registry
	// NegativeTTL is how long an origin's "no such key" (404, 410) is
	// remembered. If zero, DefaultNegativeTTL.
	NegativeTTL time.Duration
	// Cooldown paces loads of a key after failures; its zero value uses
	// loader's defaults (1s doubling to 30s).
	Cooldown *loader.Cooldown
	// MaxBackgroundRefreshes bounds stale-while-revalidate refreshes in
	// flight. If zero, DefaultMaxBackgroundRefreshes.
	MaxBackgroundRefreshes int
	// TTLJitter spreads fresh deadlines by up to this fraction of the TTL,
	// so keys filled together do not expire together. If zero,
	// DefaultTTLJitter; negative disables it.
	TTLJitter float64
	// Metrics receives the read-through metrics. If nil, a private set.
	Metrics *metrics.Fill
	// Fleet, if not nil, coordinates fills with other replicas (--redis).
	Fleet Fleet
}

// Request is one GETFILL.
type Request struct {
	Key   string
	TTL   time.Duration // fresh for this long
	Grace time.Duration // then servable-stale for this long
	// Timeout bounds how long this caller waits; negative means the
	// loader's own timeout, zero answers at once (fail fast).
	Timeout time.Duration
	// InSection says the caller holds the store's atomic section
	// exclusively (a transaction's EXEC): the read never waits, as with
	// Timeout zero, and does not enter the section again.
	InSection bool
}

// Answer is what a GETFILL replies.
type Answer struct {
	Value []byte
	Found bool // false: the origin says the key does not exist (nil reply)
}

// Filler answers read-through reads: from the store when it can, else from
// the key's one flight to the origin. It is safe for concurrent use.
type Filler struct {
	opts      Options
	group     loader.Group
	cooldown  *loader.Cooldown
	refreshes *loader.Budget

	mu       sync.Mutex
	negative map[string]negativeEntry // keys the origin said do not exist
}

// New returns a Filler.
func New(opts Options) *Filler {
	if opts.NegativeTTL <= 0 {
		opts.NegativeTTL = DefaultNegativeTTL
	}
	if opts.MaxBackgroundRefreshes <= 0 {
		opts.MaxBackgroundRefreshes = DefaultMaxBackgroundRefreshes
	}
	if opts.TTLJitter == 0 {
		opts.TTLJitter = DefaultTTLJitter
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.New().Fill
	}
	cd := opts.Cooldown
	if cd == nil {
		cd = &loader.Cooldown{}
	}
	f := &Filler{
		opts:      opts,
		cooldown:  cd,
		refreshes: loader.NewBudget(opts.MaxBackgroundRefreshes),
		negative:  make(map[string]negativeEntry),
	}
	f.group.Observer = flightObserver{f}
	return f
}

// Get answers one read-through read as the policy table says, waiting for
// a load if the answer needs one.
func (f *Filler) Get(ctx context.Context, req Request) (Answer, error) {
	ans, pending, err := f.Start(req)
	if pending == nil {
		return ans, err
	}
	return pending.Wait(ctx)
}

// Pending is a read that needs the origin's answer (the Load action): Wait
// waits for it. It is what Start returns when it cannot answer at once.
type Pending struct {
	f    *Filler
	ld   *loader.Loader
	req  Request
	name string // the loader's, for metrics
}

// Start is Get without waiting: it answers at once what needs no load (a
// fresh or stale entry, a cooling failure, a remembered "no such key", no
// loader), or returns the Pending load to wait for. It is for callers that
// must not block, such as an event loop, which hand the wait to a goroutine.
func (f *Filler) Start(req Request) (Answer, *Pending, error) {
	if req.InSection {
		req.Timeout = 0
	}
	ld, ok := f.opts.Loaders.Lookup(req.Key)
	if !ok {
		return Answer{}, nil, ErrNoLoader
	}
	now := time.Now()
	env, found, pastGrace := f.opts.Store.LookupExpired([]byte(req.Key))
	m, name := f.opts.Metrics, ld.Prefix()
	if pastGrace {
		m.PastGrace.WithLabelValues(name).Inc()
	}
	// A fresh entry is served whatever the cooldown says, so the hot path
	// skips the cooldown's lock.
	action := Decide(env, found, now.UnixNano(), false)
	var lastErr error
	if action != Serve {
		var cooling bool
		_, lastErr, cooling = f.cooldown.Check(req.Key, now)
		action = Decide(env, found, now.UnixNano(), cooling)
	}
	switch action {
	case Serve:
		m.Answer(name, "fresh")
		return Answer{Value: env.Value, Found: true}, nil, nil
	case ServeStale:
		m.Answer(name, "stale_if_error")
		return Answer{Value: env.Value, Found: true}, nil, nil
	case ServeAndRefresh:
		m.Answer(name, "stale")
		f.refresh(ld, req, env)
		return Answer{Value: env.Value, Found: true}, nil, nil
	case Fail:
		m.Answer(name, "cooldown")
		return Answer{}, nil, lastErr
	}
	if f.isNegative(req.Key, now) {
		m.Answer(name, "negative")
		return Answer{}, nil, nil
	}
	return Answer{}, &Pending{f: f, ld: ld, req: req, name: name}, nil
}

// Wait waits for the load, joining the key's flight or starting it, for
// at most the request's timeout (or the loader's), and answers.
func (p *Pending) Wait(ctx context.Context) (Answer, error) {
	f, ld, req, name := p.f, p.ld, p.req, p.name
	m := f.opts.Metrics
	timeout := req.Timeout
	if timeout < 0 {
		timeout = ld.Timeout()
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err, joined := f.group.Do(wctx, req.Key, func(context.Context) (loader.Result, error) {
		return f.load(ld, req, false, loader.Validators{})
	})
	switch {
	case errors.Is(err, loader.ErrCallerTimeout):
		// The flight goes on; serve what is servable now, if anything.
		var env engine.Envelope
		var found bool
		p.inSection(func() { env, found = f.opts.Store.Lookup([]byte(req.Key)) })
		if Servable(env, found, time.Now().UnixNano()) {
			m.Answer(name, "timeout_stale")
			return Answer{Value: env.Value, Found: true}, nil
		}
		m.Answer(name, "timeout")
		return Answer{}, &TimeoutError{After: timeout}
	case err != nil:
		m.Answer(name, "error")
		return Answer{}, err
	case !res.Found:
		m.Answer(name, "negative")
	default:
		m.Answer(name, "loaded")
		if !joined && f.opts.Fleet != nil {
			// The fleet may have answered with a stale entry: its refresh
			// starts now, as for a stale read.
			var env engine.Envelope
			var found bool
			p.inSection(func() { env, found = f.opts.Store.Peek([]byte(req.Key)) })
			if found && Decide(env, found, time.Now().UnixNano(), false) == ServeAndRefresh {
				f.refresh(ld, req, env)
			}
		}
	}
	return Answer{Value: res.Value, Found: res.Found}, nil
}

// inSection runs read, a read of the store after the wait, inside the
// store's atomic section as every command's store access is, unless the
// caller holds it already.
func (p *Pending) inSection(read func()) {
	if p.req.InSection {
		read()
		return
	}
	p.f.opts.Store.Section().Shared(rand.Uint64(), read)
}

// flightObserver feeds the coalescing measurements of the Filler's flights
// into its metrics, by loader.
type flightObserver struct{ f *Filler }

func (o flightObserver) loaderName(key string) string {
	if ld, ok := o.f.opts.Loaders.Lookup(key); ok {
		return ld.Prefix()
	}
	return ""
}

// FlightDone records how many callers one load served.
func (o flightObserver) FlightDone(key string, callers int, _ time.Duration, _ error) {
	if callers > 0 {
		o.f.opts.Metrics.WaitersPerFlight.WithLabelValues(o.loaderName(key)).Observe(float64(callers))
	}
}

// Joined counts a caller that joined a load someone else started, as it
// starts waiting.
func (o flightObserver) Joined(key string) {
	o.f.opts.Metrics.Coalesced.WithLabelValues(o.loaderName(key)).Inc()
}

// Waited records how long a caller waited.
func (o flightObserver) Waited(key string, d time.Duration, _ bool, _ error) {
	o.f.opts.Metrics.WaitSeconds.WithLabelValues(o.loaderName(key)).Observe(d.Seconds())
}

// refresh starts the key's one background refresh if the refresh budget has
// room; a refresh that does not fit is tried again on a later stale read.
func (f *Filler) refresh(ld *loader.Loader, req Request, env engine.Envelope) {
	if f.group.InFlight(req.Key) {
		return
	}
	if !f.refreshes.TryAcquire() {
		f.opts.Metrics.Refreshes.WithLabelValues(ld.Prefix(), "dropped").Inc()
		return
	}
	var v loader.Validators
	if env.Fill != nil {
		v = loader.Validators{ETag: env.Fill.ETag, LastModified: env.Fill.LastModified}
	}
	started := f.group.Go(context.Background(), req.Key, func(context.Context) (loader.Result, error) {
		defer f.refreshes.Release()
		return f.load(ld, req, true, v)
	})
	if !started {
		f.refreshes.Release()
		return
	}
	f.opts.Metrics.Refreshes.WithLabelValues(ld.Prefix(), "started").Inc()
}

// load is the work of a flight: look in the store again (an earlier flight
// may have filled the key since this caller missed), ask the fleet (if
// any) whether it has the key or who loads it, call the origin, and store
// the answer unless a write of the key happened meanwhile. A refresh passes
// the stale entry's validators.
func (f *Filler) load(ld *loader.Loader, req Request, refresh bool, v loader.Validators) (loader.Result, error) {
	key := []byte(req.Key)
	fence := f.opts.Store.Fence(key)
	if !refresh {
		// The caller decided to load before it joined; a flight that ended
		// in between may have answered already: with a value, a "no such
		// key", or a failure whose cooldown holds.
		now := time.Now()
		if env, found := f.opts.Store.Peek(key); found && Decide(env, found, now.UnixNano(), false) == Serve {
			fence.Release()
			return loader.Result{Value: env.Value, Found: true}, nil
		}
		if f.isNegative(req.Key, now) {
			fence.Release()
			return loader.Result{}, nil
		}
		if _, lastErr, cooling := f.cooldown.Check(req.Key, now); cooling {
			fence.Release()
			return loader.Result{}, lastErr
		}
	}
	var lease *cluster.Lease
	if fleet := f.opts.Fleet; fleet != nil {
		claim, err := fleet.Claim(context.Background(), req.Key, refresh, ld.Timeout())
		var failure *cluster.Failure
		switch {
		case err == nil && claim.Found:
			return f.adopt(req.Key, claim.Entry, fence), nil
		case err == nil:
			lease = claim.Lease
		case errors.As(err, &failure):
			// Another replica's load failed: share its failure and its
			// cooldown rather than call the origin again.
			fence.Release()
			oe := &loader.OriginError{Loader: failure.Loader, Reason: failure.Reason}
			f.cooldown.Hold(req.Key, oe, failure.Until, time.Now())
			return loader.Result{}, oe
		case errors.Is(err, cluster.ErrFleetBusy):
			fence.Release()
			return loader.Result{}, &loader.OriginError{Loader: ld.Prefix(), Reason: "fleet fill budget busy (--fleet-max-concurrent-fills)", Err: err}
		}
		// Otherwise Redis is down or the holder sent nothing in time: load
		// here, as a single process would.
	}
	res, err := f.fetch(ld, req, v)
	now := time.Now()
	if err != nil {
		fence.Release()
		until := f.cooldown.Fail(req.Key, err, now)
		if lease != nil {
			failure := cluster.Failure{Loader: ld.Prefix(), Reason: err.Error(), Until: until}
			var oe *loader.OriginError
			if errors.As(err, &oe) {
				failure.Reason = oe.Reason
			}
			f.opts.Fleet.Fail(context.Background(), lease, failure)
		}
		return res, err
	}
	f.cooldown.Succeed(req.Key)
	if !res.Found {
		// The origin says the key is gone: a stale copy must not outlive
		// that answer (unless a client wrote the key meanwhile).
		f.opts.Store.DeleteFenced(fence)
		f.rememberMissing(req.Key, now)
		if lease != nil {
			until := now.Add(f.opts.NegativeTTL).UnixNano()
			f.opts.Fleet.Publish(context.Background(), lease, cluster.Entry{Value: []byte{}, Missing: true,
				Loader: ld.Prefix(), FreshUntil: until, StaleUntil: until})
		}
		return res, nil
	}
	value := res.Value
	if res.NotModified {
		env, found := f.opts.Store.Peek(key)
		if !found {
			fence.Release()
			if lease != nil {
				f.opts.Fleet.Release(lease)
			}
			return res, nil
		}
		value = env.Value
		res.Value = value
	}
	fresh := now.Add(f.jitter(req.TTL))
	entry := cluster.Entry{Value: value, FreshUntil: fresh.UnixNano(), StaleUntil: fresh.Add(req.Grace).UnixNano(),
		Loader: ld.Prefix(), ETag: res.ETag, LastModified: res.LastModified}
	if lease != nil {
		// Published before it is stored here, so followers on other
		// replicas wake as early as possible.
		f.opts.Fleet.Publish(context.Background(), lease, entry)
	}
	_, serr := f.opts.Store.Set(key, value, entry.SetOptions(fence))
	if serr != nil {
		return res, fmt.Errorf("storing the loaded value: %w", serr)
	}
	return res, nil
}

// fetch calls the origin, with the metrics of an origin call.
func (f *Filler) fetch(ld *loader.Loader, req Request, v loader.Validators) (loader.Result, error) {
	m, name := f.opts.Metrics, ld.Prefix()
	inFlight := m.InFlight.WithLabelValues(name)
	inFlight.Inc()
	start := time.Now()
	res, err := ld.Fetch(context.Background(), req.Key, v)
	inFlight.Dec()
	m.ObserveLoad(name, loadResult(res, err), time.Since(start))
	return res, err
}

// adopt stores an entry the fleet already has, under the flight's fence,
// and returns it as the flight's result.
func (f *Filler) adopt(key string, e cluster.Entry, fence *engine.Fence) loader.Result {
	if e.Missing {
		f.opts.Store.DeleteFenced(fence)
		f.rememberMissing(key, time.Now())
		return loader.Result{}
	}
	f.cooldown.Succeed(key)
	if _, err := f.opts.Store.Set([]byte(key), e.Value, e.SetOptions(fence)); err != nil {
		fence.Release() // too large here: answered, not kept
	}
	return loader.Result{Value: e.Value, Found: true, ETag: e.ETag, LastModified: e.LastModified}
}

// loadResult is the result label of an origin call.
func loadResult(res loader.Result, err error) string {
	switch {
	case err != nil:
		return "error"
	case res.NotModified:
		return "not_modified"
	case !res.Found:
		return "not_found"
	}
	return "ok"
}

// jitter shortens ttl by a random fraction up to TTLJitter.
func (f *Filler) jitter(ttl time.Duration) time.Duration {
	if f.opts.TTLJitter <= 0 || ttl <= 0 {
		return ttl
	}
	return ttl - time.Duration(rand.Float64()*f.opts.TTLJitter*float64(ttl))
}

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

// KeyInfo describes a key's read-through state, for FILL.INFO.
type KeyInfo struct {
	// State is fresh, stale, missing, loading (missing, a load is running),
	// cooldown (missing, loads paused after a failure) or negative
	// (missing, the origin said so recently).
	State string
	// FreshIn and StaleIn are the time left to the fresh and stale
	// deadlines; zero when past or when there is no entry, and -1 when the
	// entry has no such deadline.
	FreshIn, StaleIn time.Duration
	// Loader is the prefix of the key's loader, if one is registered.
	Loader   string
	InFlight bool
}

// Info returns key's read-through state without touching hit counters.
func (f *Filler) Info(key string) KeyInfo {
	now := time.Now()
	env, found := f.opts.Store.Peek([]byte(key))
	_, _, cooling := f.cooldown.Check(key, now)
	in := KeyInfo{InFlight: f.group.InFlight(key)}
	if ld, ok := f.opts.Loaders.Lookup(key); ok {
		in.Loader = ld.Prefix()
	}
	left := func(deadline int64) time.Duration {
		switch {
		case !found:
			return 0
		case deadline == 0:
			return -1
		}
		return max(time.Duration(deadline-now.UnixNano()), 0)
	}
	in.FreshIn, in.StaleIn = left(env.FreshUntil), left(env.StaleUntil)
	switch Decide(env, found, now.UnixNano(), false) {
	case Serve:
		in.State = "fresh"
	case ServeAndRefresh:
		in.State = "stale"
	default:
		switch {
		case in.InFlight:
			in.State = "loading"
		case cooling:
			in.State = "cooldown"
		case f.isNegative(key, now):
			in.State = "negative"
		default:
			in.State = "missing"
		}
	}
	return in
}

// Waiters reports how many callers wait for key's flight, for tests and
// FILL.INFO-style introspection.
func (f *Filler) Waiters(key string) int { return f.group.Waiters(key) }
