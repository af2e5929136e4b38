package swr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/lograte"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/radar"
)

// Defaults for Options fields left zero.
const (
	DefaultNegativeTTL            = 5 * time.Second
	DefaultMaxBackgroundRefreshes = 64
	DefaultTTLJitter              = 0.1
)

// Errors of Start and Get; commands/readthrough turns them into -NOLOADER,
// -TIMEOUT and -LOADERR.
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

// CooldownError is the answer to a read of a key that cools down after a
// failed load: Err, the failure, answered again without an origin call for
// Left more.
type CooldownError struct {
	Err  error
	Left time.Duration
}

func (e *CooldownError) Error() string {
	return fmt.Sprintf("cooling down for %v after: %v", e.Left, e.Err)
}

// Unwrap returns the failure, so errors.As finds its *loader.OriginError.
func (e *CooldownError) Unwrap() error { return e.Err }

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
	// EarlyRefresh is the beta of early refresh (XFetch): a fresh read
	// starts the key's refresh early with a probability that grows as the
	// fresh deadline nears, scaled by the key's last load time times beta.
	// Zero turns it off (--early-refresh); Request.Early overrides it.
	EarlyRefresh float64
	// Rand returns a uniform random number in [0, 1) for early refresh. If
	// nil, math/rand/v2's Float64.
	Rand func() float64
	// MaxTagsPerKey bounds the origin's tags a key keeps (--max-tags-per-key);
	// if zero, DefaultMaxTagsPerKey.
	MaxTagsPerKey int
	// MaxTagEntries bounds the (key, tag) pairs of the tag index
	// (--max-tag-entries); if zero, DefaultMaxTagEntries. The index's
	// memory is charged to the store's bound (engine.Store.Charge).
	MaxTagEntries int
	// Purges, if not nil, shares PURGE.TAG with the fleet (--redis): New
	// has it deliver the other replicas' purges.
	Purges PurgeFleet
	// Logger receives the log lines of origin failures, recoveries and slow
	// fills, rate-limited per loader. If nil, slog.Default().
	Logger *slog.Logger
	// SlowFill is how long an origin call may take before it is logged as
	// slow (--slow-fill). If zero, DefaultSlowFill; negative: never.
	SlowFill time.Duration
	// Radar, if not nil, is told of every read, origin call, coalesced
	// waiter, stale answer and failure, by key (FILL.TOP).
	Radar *radar.Tracker
	// Now returns the current time, for every deadline the Filler sets or
	// reads. If nil, time.Now. Give it the clock the Store runs on
	// (engine.Options.Now), so that both agree on what is fresh.
	Now func() time.Time
	// AfterFunc calls f after d on the clock of Now, for the log lines that
	// report the failures held back at the end of their interval. If nil,
	// time.AfterFunc. Tests give a fake clock's.
	AfterFunc func(d time.Duration, f func())
}

// Request is one GETFILL.
type Request struct {
	Key   string
	TTL   time.Duration // fresh for this long
	Grace time.Duration // then servable-stale for this long
	// Timeout bounds how long this caller waits; negative means the
	// loader's own timeout, zero answers at once (fail fast).
	Timeout time.Duration
	// Early is the beta of early refresh for this read (GETFILL's EARLY);
	// zero means Options.EarlyRefresh, negative turns it off.
	Early float64
	// InSection says the caller holds the store's atomic section
	// exclusively (a transaction's EXEC): the read never waits, as with
	// Timeout zero, and does not enter the section again (Caller).
	InSection bool
}

// Answer is what a GETFILL replies.
type Answer struct {
	Value []byte
	Found bool // false: the origin says the key does not exist (nil reply)
}

// Filler answers read-through reads: from the store when it can, else from
// the key's one flight to the origin. It is safe for concurrent use.
//
// A Filler is one database's (Options.Store's): DB returns another's. Each
// database is a read-through cache of its own, as each is a keyspace of
// its own: its own flights, leases, remembered misses and cooldowns. The
// loaders, the background refresh budget, the tag index's bound, the logs,
// metrics and radar are the server's; the fleet (Options.Fleet, Purges)
// is every database's, which each names in its calls.
type Filler struct {
	opts      Options
	group     loader.Group
	cooldown  *loader.Cooldown
	refreshes *loader.Budget // the server's
	negative  *negativeCache // keys the origin said do not exist
	leases    leaseTable     // keys the application fills (FILL.LEASE)
	tags      dbTags         // the keys of each origin tag (PURGE.TAG)
	flights   flightFences   // the running flights' fences
	logs      *fillLogs      // the server's
	dbs       *fillerDBs     // every database's Filler
}

// fillerDBs holds the Filler of each database, made on first use.
type fillerDBs struct {
	mu  sync.Mutex // held to make one
	all []atomic.Pointer[Filler]
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
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	cd := opts.Cooldown
	if cd == nil {
		cd = &loader.Cooldown{}
	}
	f := &Filler{
		opts:      opts,
		cooldown:  cd,
		refreshes: loader.NewBudget(opts.MaxBackgroundRefreshes),
		negative:  newNegativeCache(opts.NegativeTTL),
		tags:      dbTags{ix: newTagIndex(opts.Store.DB(0), opts.Metrics, opts.MaxTagsPerKey, opts.MaxTagEntries), db: opts.Store.Index()},
		logs:      newFillLogs(opts.Logger, opts.SlowFill),
		dbs:       &fillerDBs{all: make([]atomic.Pointer[Filler], opts.Store.Databases())},
	}
	f.dbs.all[opts.Store.Index()].Store(f)
	opts.Store.OnSwap(f.tags.ix.swap)
	// The limits run on the Filler's clock, so tests move them by hand.
	for _, lim := range []*lograte.Limiter{&f.logs.failures, &f.logs.recovers, &f.logs.slows} {
		lim.Now, lim.AfterFunc = opts.Now, opts.AfterFunc
	}
	f.group.Observer = flightObserver{f}
	if opts.Purges != nil {
		opts.Purges.WatchPurges(f.heardPurge)
	}
	return f
}

// db is the Filler's database, which it names to the fleet.
func (f *Filler) db() int { return f.opts.Store.Index() }

// DB returns the Filler of database n of the store (engine.Store.DB), made
// on first use, or nil if the store has no database n.
func (f *Filler) DB(n int) *Filler {
	if n < 0 || n >= len(f.dbs.all) {
		return nil
	}
	if g := f.dbs.all[n].Load(); g != nil {
		return g
	}
	f.dbs.mu.Lock()
	defer f.dbs.mu.Unlock()
	if g := f.dbs.all[n].Load(); g != nil {
		return g
	}
	opts := f.opts
	opts.Store = f.opts.Store.DB(n)
	g := &Filler{
		opts:      opts,
		cooldown:  &loader.Cooldown{Base: f.cooldown.Base, Max: f.cooldown.Max, MaxKeys: f.cooldown.MaxKeys},
		refreshes: f.refreshes,
		negative:  newNegativeCache(opts.NegativeTTL),
		tags:      dbTags{ix: f.tags.ix, db: n},
		logs:      f.logs,
		dbs:       f.dbs,
	}
	g.group.Observer = flightObserver{g}
	f.dbs.all[n].Store(g)
	return g
}

// Get answers one read-through read as Decide says, waiting for
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
// fresh or stale entry, with or without a loader; a cooling failure, a
// remembered "no such key", no loader for a miss), or returns the Pending load to wait for. It is for callers that
// must not block, such as an event loop, which hand the wait to a goroutine.
func (f *Filler) Start(req Request) (Answer, *Pending, error) {
	if req.InSection {
		req.Timeout = 0
	}
	ld, ok := f.opts.Loaders.Lookup(req.Key)
	if !ok {
		return f.withoutLoader(req.Key)
	}
	name := ld.Prefix()
	now, env, action, lastErr := f.lookup(req.Key, name)
	if err := f.holdsOther(req.Key, action); err != nil {
		return Answer{}, nil, err
	}
	switch action {
	case Serve:
		f.answered(name, AnswerFresh, "")
		if beta := f.beta(req); beta > 0 && env.Fill != nil &&
			EarlyRefresh(env.FreshUntil, env.Fill.LoadTime, now.UnixNano(), beta, f.opts.Rand()) {
			f.refresh(ld, req, env, env.FreshUntil)
		}
		return Answer{Value: env.Value, Found: true}, nil, nil
	case ServeStale:
		f.answered(name, AnswerStaleIfError, req.Key)
		return Answer{Value: env.Value, Found: true}, nil, nil
	case ServeAndRefresh:
		f.answered(name, AnswerStale, req.Key)
		f.refresh(ld, req, env, 0)
		return Answer{Value: env.Value, Found: true}, nil, nil
	case Fail:
		f.answered(name, AnswerCooldown, req.Key)
		return Answer{}, nil, lastErr
	}
	if f.isNegative(req.Key, now) {
		f.answered(name, AnswerNegative, req.Key)
		return Answer{}, nil, nil
	}
	return Answer{}, &Pending{f: f, ld: ld, req: req, name: name}, nil
}

// ServeFresh answers a read-through read of key whose entry is fresh
// (Decide's Serve) as Start would, but hands the value to write under the
// store's read lock, with no copy (write must not keep it), and reports
// whether it did. It answers nothing else: a key with no loader, or not
// fresh, is declined uncounted (engine.Store.ViewEntry), for Start to
// answer. req is the read's Request but for its Key, which is key (req.Key
// is ignored); a read that refreshes early is served here and starts its
// refresh as Start's does. So a GETFILL hit costs neither a copy of its
// value nor of its key.
func (f *Filler) ServeFresh(req Request, key []byte, write func(value []byte)) bool {
	ld, ok := f.opts.Loaders.LookupBytes(key)
	if !ok {
		return false
	}
	now := f.now().UnixNano()
	beta := f.beta(req)
	refresh := false
	served := f.opts.Store.ViewEntry(key, func(e engine.EntryView) bool {
		if e.FreshUntil != 0 && now >= e.FreshUntil || e.StaleUntil != 0 && now >= e.StaleUntil {
			return false // Decide's Serve only: see Start
		}
		refresh = beta > 0 && EarlyRefresh(e.FreshUntil, e.LoadTime(), now, beta, f.opts.Rand())
		write(e.Value)
		return true
	})
	if !served {
		return false
	}
	f.answered(ld.Prefix(), AnswerFresh, "") // no key: a hit counts a read only
	if refresh {
		f.refreshEarly(ld, req, key)
	}
	return true
}

// refreshEarly starts the early refresh ServeFresh chose, off the store's
// lock, with the entry's validators read again (Peek, uncounted).
func (f *Filler) refreshEarly(ld *loader.Loader, req Request, key []byte) {
	env, found := f.opts.Store.Peek(key)
	if !found {
		return
	}
	req.Key = string(key)
	f.refresh(ld, req, env, env.FreshUntil)
}

// withoutLoader answers a read of key, which no loader covers: a present
// key's value (fresh or within its grace, which no refresh can renew), as
// only a miss needs a loader; else ErrNoLoader, or ErrWrongType for a key
// of another type. Unregistering a loader so leaves its cached keys
// readable until they expire.
func (f *Filler) withoutLoader(key string) (Answer, *Pending, error) {
	env, found, _ := f.opts.Store.LookupExpired([]byte(key))
	switch Decide(env, found, f.now().UnixNano(), false) {
	case Serve, ServeAndRefresh, ServeStale:
		return Answer{Value: env.Value, Found: true}, nil, nil
	}
	if err := f.holdsOther(key, Load); err != nil {
		return Answer{}, nil, err
	}
	return Answer{}, nil, ErrNoLoader
}

// holdsOther returns engine.ErrWrongType if key, which the read found
// nothing servable in (action Load or Fail), holds another type than a
// string: read-through reads and fills strings only, and must not replace
// a hash or a set with a load.
func (f *Filler) holdsOther(key string, action Action) error {
	if action != Load && action != Fail {
		return nil
	}
	if t, found := f.opts.Store.TypeOf([]byte(key)); found && t != engine.TypeString {
		return engine.ErrWrongType
	}
	return nil
}

// lookup reads key for a read-through read of loader name's and decides
// what to do (Decide). lastErr is the failure of a key cooling down, as a
// *CooldownError.
func (f *Filler) lookup(key, name string) (now time.Time, env engine.Envelope, action Action, lastErr error) {
	now = f.now()
	env, found, pastGrace := f.opts.Store.LookupExpired([]byte(key))
	if pastGrace {
		f.opts.Metrics.PastGrace.WithLabelValues(name).Inc()
	}
	// A fresh entry is served whatever the cooldown says, so the hot path
	// skips the cooldown's lock.
	action = Decide(env, found, now.UnixNano(), false)
	if action != Serve {
		until, err, cooling := f.cooldown.Check(key, now)
		if cooling {
			lastErr = &CooldownError{Err: err, Left: until.Sub(now)}
		}
		action = Decide(env, found, now.UnixNano(), cooling)
	}
	return now, env, action, lastErr
}

// Wait waits for the load, joining the key's flight or starting it, for
// at most the request's timeout (or the loader's), and answers.
func (p *Pending) Wait(ctx context.Context) (Answer, error) {
	timeout := p.timeout()
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	call, ans, served := p.join(wctx, nil)
	if served {
		return ans, nil
	}
	res, err := call.Wait(wctx)
	return p.settle(res, err, call.Joined(), timeout)
}

// join joins the key's flight, or starts it with slot (nil: none). A
// flight it joins may be a refresh that began after this caller found no
// servable entry (Start), once another flight stored one:
//
//  1. this caller finds no copy here (another replica filled the key) and
//     returns a Pending;
//  2. another caller's flight takes the fleet's stale entry, keeps it here
//     and ends; that caller starts the key's refresh, which follows the
//     lease of the replica refreshing the key;
//  3. this caller joins the refresh, and would wait for the origin.
//
// So a caller that joins a refresh looks at the store again, and is
// answered with what it finds servable there (served, the call left), as
// a caller that came after step 2 is. A refresh starts only while the
// store holds a servable entry, and that entry goes only when the refresh
// stores the newer one, a client writes the key, its grace ends, it is
// evicted, or a newer value announced by the fleet replaces it. For the
// last two the fleet's entry, if servable, is the answer.
func (p *Pending) join(ctx context.Context, slot *batchSlot) (call *loader.Call, ans Answer, served bool) {
	f := p.f
	f.flights.detachOvertaken(&f.group, p.req.Key)
	call = f.group.Join(ctx, p.req.Key, p.loadFunc(slot))
	if !call.Background() {
		return call, Answer{}, false
	}
	var env engine.Envelope
	var action Action
	p.inSection(func() { _, env, action, _ = f.lookup(p.req.Key, p.name) })
	// Not for a caller that holds the section (no Redis I/O under it) or
	// that asked not to wait (TIMEOUT 0).
	if action == Load && f.opts.Fleet != nil && !p.req.InSection && ctx.Err() == nil {
		env, action = p.fleetEntry(ctx)
	}
	kind := AnswerStale
	switch action {
	case Serve:
		kind = AnswerFresh
	case ServeStale:
		kind = AnswerStaleIfError
	case ServeAndRefresh:
	default:
		return call, Answer{}, false
	}
	call.Leave()
	f.answered(p.name, kind, p.req.Key)
	return nil, Answer{Value: env.Value, Found: true}, true
}

// fleetEntry is the fleet's entry for the caller's key as an envelope, and
// what Decide says of it (Load: none, or none servable, or none before
// ctx, the caller's wait, ended).
func (p *Pending) fleetEntry(ctx context.Context) (engine.Envelope, Action) {
	// Asked with the Fleet's own timeout, not the caller's context: a
	// caller who leaves meanwhile must not count as the fleet not
	// answering (cluster marks Redis down on such an error). But the
	// caller waits no longer than its own wait: with Redis stalled, a
	// GETFILL with TIMEOUT 50 was answered after the Fleet's 250 ms. The
	// goroutine ends when the Fleet answers or its timeout passes.
	type answer struct {
		e     FleetEntry
		found bool
		err   error
	}
	ch := make(chan answer, 1)
	go func() {
		e, found, err := p.f.opts.Fleet.Entry(context.Background(), p.f.db(), p.req.Key)
		ch <- answer{e, found, err}
	}()
	var a answer
	select {
	case a = <-ch:
	case <-ctx.Done():
		return engine.Envelope{}, Load
	}
	e := a.e
	if a.err != nil || !a.found || e.Missing || e.Type != engine.TypeString {
		return engine.Envelope{}, Load
	}
	env := engine.Envelope{Value: e.Value, FreshUntil: e.FreshUntil, StaleUntil: e.StaleUntil}
	return env, Decide(env, true, p.f.now().UnixNano(), false)
}

// timeout is how long the caller waits: its TIMEOUT, or the loader's.
func (p *Pending) timeout() time.Duration {
	if p.req.Timeout < 0 {
		return p.ld.Timeout()
	}
	return p.req.Timeout
}

// loadFunc is the work of the key's flight, if this caller starts it; slot
// is the key's place in a batch, or nil.
func (p *Pending) loadFunc(slot *batchSlot) loader.LoadFunc {
	return func(context.Context) (loader.Result, error) {
		return p.f.load(p.ld, p.req, 0, loader.Validators{}, slot)
	}
}

// settle answers the caller with its flight's result (joined: a flight
// someone else started), or after it waited timeout in vain.
func (p *Pending) settle(res loader.Result, err error, joined bool, timeout time.Duration) (Answer, error) {
	f, ld, req, name := p.f, p.ld, p.req, p.name
	switch {
	case errors.Is(err, loader.ErrCallerTimeout):
		// The flight goes on; serve what is servable now, if anything.
		var env engine.Envelope
		var found bool
		p.inSection(func() { env, found = f.opts.Store.Lookup([]byte(req.Key)) })
		if Servable(env, found, f.now().UnixNano()) {
			f.answered(name, AnswerTimeoutStale, req.Key)
			return Answer{Value: env.Value, Found: true}, nil
		}
		f.answered(name, AnswerTimeout, req.Key)
		return Answer{}, &TimeoutError{After: timeout}
	case err != nil:
		f.answered(name, AnswerError, req.Key)
		return Answer{}, err
	case !res.Found:
		f.answered(name, AnswerNegative, req.Key)
	default:
		f.answered(name, AnswerLoaded, req.Key)
		if !joined && f.opts.Fleet != nil {
			// The fleet may have answered with a stale entry: its refresh
			// starts now, as for a stale read.
			var env engine.Envelope
			var found bool
			p.inSection(func() { env, found = f.opts.Store.Peek([]byte(req.Key)) })
			if found && Decide(env, found, f.now().UnixNano(), false) == ServeAndRefresh {
				f.refresh(ld, req, env, 0)
			}
		}
	}
	return Answer{Value: res.Value, Found: res.Found}, nil
}

// inSection runs read, a read of the store after the wait, inside the
// store's atomic section as every command's store access is.
func (p *Pending) inSection(read func()) {
	p.f.within(Caller{InSection: p.req.InSection}, read)
}

// refresh starts the key's one background refresh if the refresh budget has
// room; a refresh that does not fit is tried again on a later read. early,
// if not zero, is the fresh deadline of the entry an early refresh
// replaces: the fleet's entry will do only if it is fresher.
func (f *Filler) refresh(ld *loader.Loader, req Request, env engine.Envelope, early int64) {
	if f.group.InFlight(req.Key) {
		return
	}
	if !f.refreshes.TryAcquire() {
		f.refreshed(ld.Prefix(), RefreshDropped)
		return
	}
	after := early
	if after == 0 {
		after = f.now().UnixNano()
	}
	var v loader.Validators
	if env.Fill != nil {
		v = loader.Validators{ETag: env.Fill.ETag, LastModified: env.Fill.LastModified}
	}
	started := f.group.Go(context.Background(), req.Key, func(context.Context) (loader.Result, error) {
		defer f.refreshes.Release()
		return f.load(ld, req, after, v, nil)
	})
	if !started {
		f.refreshes.Release()
		return
	}
	f.refreshed(ld.Prefix(), pick(early != 0, RefreshEarly, RefreshStarted))
}

// beta is the early refresh beta of req: its own, or the Filler's.
func (f *Filler) beta(req Request) float64 {
	if req.Early != 0 {
		return req.Early
	}
	return f.opts.EarlyRefresh
}

// answered counts an answer of loader name's to a read of key, by kind:
// in the metrics, and in the radar (a read; and a stale answer by its key,
// a cooldown's by its loader). key may be empty for a fresh answer.
func (f *Filler) answered(name string, kind AnswerKind, key string) {
	f.opts.Metrics.Answer(name, string(kind))
	r := f.opts.Radar
	r.Read()
	switch kind {
	case AnswerStale, AnswerStaleIfError, AnswerTimeoutStale:
		r.Stale(key)
	case AnswerCooldown:
		r.Cooldown(name)
	}
}

// refreshed counts a refresh of loader name's, by result.
func (f *Filler) refreshed(name string, r RefreshResult) {
	f.opts.Metrics.Refreshes.WithLabelValues(name, string(r)).Inc()
}

// now is the time on the Filler's clock.
func (f *Filler) now() time.Time { return f.opts.Now() }
