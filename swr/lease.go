package swr

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
)

// Defaults of FILL.LEASE.
const (
	// DefaultLeaseTimeout is how long a FILL.LEASE caller waits for another
	// caller's fill when it gives no TIMEOUT.
	DefaultLeaseTimeout = 5 * time.Second
	// DefaultLeaseTerm is how long a lease lasts when FILL.LEASE gives no
	// LEASE: its holder must FILL.SET or FILL.ABORT within it.
	DefaultLeaseTerm = 10 * time.Second
)

// AppLoader is the loader label (metrics, INFO) and the failing loader
// (-LOADERR app: ...) of the fills an application does under a lease.
const AppLoader = "app"

// ErrLeaseLost is what FillLease and AbortLease return (matching) for a
// token that is no longer valid: see LeaseLostError.
var ErrLeaseLost = errors.New("swr: the lease is no longer valid")

// LeaseLostError is a FILL.SET or FILL.ABORT whose token is no longer
// valid; nothing was stored. It matches ErrLeaseLost.
type LeaseLostError struct {
	// Reason says why, in a few words, for -LEASELOST.
	Reason string
}

func (e *LeaseLostError) Error() string { return "lease lost: " + e.Reason }

// Is makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// The reasons of a LeaseLostError.
var (
	errLeaseUnknown = &LeaseLostError{Reason: "no lease with this token (it expired, was superseded, or was settled)"}
	errLeaseFenced  = &LeaseLostError{Reason: "the key was written during the lease"}
	errLeaseFleet   = &LeaseLostError{Reason: "the fleet no longer holds the lease (it expired there, or the key was written on another replica)"}
)

// LeaseRequest is one FILL.LEASE.
type LeaseRequest struct {
	Key   string
	TTL   time.Duration // a value set under the lease is fresh for this long
	Grace time.Duration // then servable-stale for this long
	// Timeout bounds how long this caller waits for another's fill;
	// negative means DefaultLeaseTimeout, zero does not wait.
	Timeout time.Duration
	// Term is how long the holder has to set or abort; zero or negative
	// means DefaultLeaseTerm.
	Term time.Duration
	// InSection says the caller holds the store's atomic section (a
	// FILL.LEASE inside EXEC): nothing waits, as with Timeout zero, and
	// with a fleet no lease is asked for, since asking is I/O; a stale
	// value is still answered.
	InSection bool
}

// LeaseAnswer is what a FILL.LEASE replies: the value (Found) or none, and
// the token when this caller holds the lease and must fill the key.
type LeaseAnswer struct {
	Answer
	Token string
}

// leaseTable holds the keys the application is filling: at most one round
// per key.
type leaseTable struct {
	mu     sync.Mutex
	rounds map[string]*round
}

// roundState is where a round is.
type roundState uint8

const (
	// roundClaiming: the fleet is being asked, by the caller that made the
	// round or by its follower goroutine.
	roundClaiming roundState = iota
	// roundOffered: a token is ready; the first caller to look takes it.
	roundOffered
	// roundLeased: a caller holds the token.
	roundLeased
	// roundSettling: its holder is storing or sharing its result.
	roundSettling
	// roundEnded: done is closed.
	roundEnded
)

// round is one attempt to fill a key by the application: at most one token
// is handed out per round, and a new round starts only once the last one
// ended. Callers that want the key meanwhile wait for done.
type round struct {
	key  string
	done chan struct{} // closed when the round ends
	// offer is closed when a token is ready for a waiting caller (the
	// fleet gave this replica the lease while callers waited).
	offer chan struct{}

	// Guarded by leaseTable.mu.
	state   roundState
	req     LeaseRequest // the holder's: ttl, grace and term of its fill
	refresh bool         // the key is stale: its readers were answered at once
	token   string
	granted time.Time // when the holder got the token, on the Filler's clock
	fleet   FleetLease
	fence   *engine.Fence
	timer   *time.Timer // ends the lease at its term
	waiters int

	// Set before done is closed.
	ans Answer
	err error
	// retry: the round ended without an answer (its lease expired, or the
	// key was written under it); waiters look again.
	retry bool
}

// withDefaults fills in the request's defaults.
func (req LeaseRequest) withDefaults() LeaseRequest {
	if req.Timeout < 0 {
		req.Timeout = DefaultLeaseTimeout
	}
	if req.Term <= 0 {
		req.Term = DefaultLeaseTerm
	}
	if req.InSection {
		req.Timeout = 0
	}
	return req
}

// LeasePending is a FILL.LEASE that must wait: for another caller's fill,
// or in --redis mode for the fleet. Wait waits for it.
type LeasePending struct {
	f     *Filler
	req   LeaseRequest
	r     *round
	claim bool             // this caller made r and asks the fleet for it
	stale *engine.Envelope // the stale entry a refreshing caller answers with
}

// Lease answers one FILL.LEASE, waiting if it must.
func (f *Filler) Lease(ctx context.Context, req LeaseRequest) (LeaseAnswer, error) {
	ans, pending, err := f.StartLease(req)
	if pending == nil {
		return ans, err
	}
	return pending.Wait(ctx)
}

// StartLease is Lease without waiting: it answers at once what needs no
// wait (a fresh or stale value, a cooling failure, a remembered "no such
// key", a token when no one else fills the key), or returns the Pending
// wait. It never blocks, so an event loop can call it.
func (f *Filler) StartLease(req LeaseRequest) (LeaseAnswer, *LeasePending, error) {
	req = req.withDefaults()
	return f.leaseLook(req, false)
}

// leaseLook is one look at the key for a FILL.LEASE caller, as the
// decision table says, with the application as the key's loader. waited
// says the caller has waited already (its answer is "loaded").
func (f *Filler) leaseLook(req LeaseRequest, waited bool) (LeaseAnswer, *LeasePending, error) {
	now, env, action, lastErr := f.lookup(req.Key, AppLoader)
	if err := f.holdsOther(req.Key, action); err != nil {
		return LeaseAnswer{}, nil, err
	}
	value := LeaseAnswer{Answer: Answer{Value: env.Value, Found: true}}
	switch action {
	case Serve:
		f.answered(AppLoader, pick(waited, AnswerLoaded, AnswerFresh), req.Key)
		return value, nil, nil
	case ServeStale:
		f.answered(AppLoader, AnswerStaleIfError, req.Key)
		return value, nil, nil
	case Fail:
		f.answered(AppLoader, AnswerCooldown, req.Key)
		return LeaseAnswer{}, nil, lastErr
	case ServeAndRefresh:
		f.answered(AppLoader, AnswerStale, req.Key)
		r, token, claim := f.joinRound(req, true)
		if claim {
			return LeaseAnswer{}, &LeasePending{f: f, req: req, r: r, claim: true, stale: &env}, nil
		}
		value.Token = token
		return value, nil, nil
	}
	if f.isNegative(req.Key, now) {
		f.answered(AppLoader, AnswerNegative, req.Key)
		return LeaseAnswer{}, nil, nil
	}
	r, token, claim := f.joinRound(req, false)
	switch {
	case token != "":
		return LeaseAnswer{Token: token}, nil, nil
	case !claim && req.Timeout == 0:
		// TIMEOUT 0 does not wait for another caller's fill.
		f.answered(AppLoader, AnswerTimeout, req.Key)
		return LeaseAnswer{}, nil, &TimeoutError{After: 0}
	}
	return LeaseAnswer{}, &LeasePending{f: f, req: req, r: r, claim: claim}, nil
}

// pick is a when cond holds, else b.
func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// joinRound finds the key's round or makes one. It returns the token when
// the caller holds the lease now, or claim when the caller made the round
// and must ask the fleet for it (--redis); else the round to wait for.
func (f *Filler) joinRound(req LeaseRequest, refresh bool) (r *round, token string, claim bool) {
	t := &f.leases
	t.mu.Lock()
	defer t.mu.Unlock()
	r = t.rounds[req.Key]
	switch {
	case r == nil:
		r = &round{key: req.Key, done: make(chan struct{}), offer: make(chan struct{}), req: req, refresh: refresh,
			fence: f.opts.Store.Fence([]byte(req.Key))}
		if t.rounds == nil {
			t.rounds = make(map[string]*round)
		}
		t.rounds[req.Key] = r
		if f.opts.Fleet != nil {
			return r, "", true
		}
		return r, f.grantLocked(r, req, nil), false
	case r.state == roundOffered:
		return r, f.grantLocked(r, req, r.fleet), false
	}
	return r, "", false
}

// grantLocked hands r's lease to the caller of req, under fleet (nil: this
// replica alone), and starts its term. f.leases.mu must be held.
func (f *Filler) grantLocked(r *round, req LeaseRequest, fleet FleetLease) string {
	r.state, r.req, r.fleet = roundLeased, req, fleet
	r.token = newToken()
	r.granted = f.now()
	token := r.token
	if r.timer != nil {
		r.timer.Stop()
	}
	r.timer = time.AfterFunc(req.Term, func() { f.expireLease(r, token) })
	f.leased(LeaseGranted)
	return token
}

// offer makes a lease the fleet gave r (fleet nil: the fleet is not
// reachable, this replica fills alone) the first waiting caller's, or gives
// it up when no one wants it.
func (f *Filler) offer(r *round, fleet FleetLease) {
	f.leases.mu.Lock()
	if r.waiters == 0 && !r.refresh {
		f.endLocked(r, Answer{}, nil, true)
		f.leases.mu.Unlock()
		if fleet != nil {
			fleet.Release()
		}
		r.fence.Release()
		return
	}
	r.state, r.fleet = roundOffered, fleet
	close(r.offer)
	// An offer no caller takes ends like a lease no holder settles.
	r.timer = time.AfterFunc(r.req.Term, func() { f.endRoundIf(r, roundOffered, Answer{}, nil, true) })
	f.leases.mu.Unlock()
}

// endLocked ends r with its answer, or for the waiters to look again
// (retry). f.leases.mu must be held; the caller releases r.fleet and
// r.fence as the outcome needs.
func (f *Filler) endLocked(r *round, ans Answer, err error, retry bool) {
	if r.state == roundEnded {
		return
	}
	if f.leases.rounds[r.key] == r {
		delete(f.leases.rounds, r.key)
	}
	if r.timer != nil {
		r.timer.Stop()
	}
	r.state, r.ans, r.err, r.retry = roundEnded, ans, err, retry
	close(r.done)
}

// expireLease ends r's lease at its term if the holder of token neither set
// nor aborted it (it crashed, or gave up): waiters look again, and the next
// one gets a new token. The radar counts it as a failed origin call, as it
// counts a FILL.SET as a call and a FILL.ABORT as a failed one.
func (f *Filler) expireLease(r *round, token string) {
	f.leases.mu.Lock()
	live := r.token == token && r.state == roundLeased
	term := r.req.Term
	f.leases.mu.Unlock()
	if live && f.endRoundIf(r, roundLeased, Answer{}, nil, true) {
		f.leased(LeaseExpired)
		// The holder went to its origin and never answered: a failed call.
		f.opts.Radar.Called(r.key, AppLoader, term, true)
	}
}

// endRoundIf ends r if it is still in state, then gives up its fleet lease
// and its fence, since the round stores nothing. It reports whether it
// ended r.
func (f *Filler) endRoundIf(r *round, state roundState, ans Answer, err error, retry bool) bool {
	f.leases.mu.Lock()
	if r.state != state {
		f.leases.mu.Unlock()
		return false
	}
	fleet := r.fleet
	f.endLocked(r, ans, err, retry)
	f.leases.mu.Unlock()
	if fleet != nil {
		fleet.Release()
	}
	r.fence.Release()
	return true
}

// Wait waits for the lease or the value, at most the request's TIMEOUT.
func (p *LeasePending) Wait(ctx context.Context) (LeaseAnswer, error) {
	f, req := p.f, p.req
	ctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	for {
		if p.claim && req.InSection {
			f.endRoundIf(p.r, roundClaiming, Answer{}, nil, true)
			if p.stale != nil {
				return LeaseAnswer{Answer: Answer{Value: p.stale.Value, Found: true}}, nil
			}
			f.answered(AppLoader, AnswerTimeout, req.Key)
			return LeaseAnswer{}, &TimeoutError{After: 0}
		}
		if p.claim {
			token := f.claimRound(p.r)
			if p.stale != nil {
				// A stale read is answered at once, whoever refreshes: with
				// the fleet's fresher entry if it had one.
				ans := LeaseAnswer{Answer: Answer{Value: p.stale.Value, Found: true}, Token: token}
				if env, found := f.opts.Store.Peek([]byte(req.Key)); token == "" && Servable(env, found, f.now().UnixNano()) {
					ans.Value = env.Value
				}
				return ans, nil
			}
			if token != "" {
				return LeaseAnswer{Token: token}, nil
			}
		}
		ans, again, err := f.waitRound(ctx, p.r, req)
		if !again {
			return ans, err
		}
		var next *LeasePending
		if ans, next, err = f.leaseLook(req, true); next == nil {
			return ans, err
		}
		p = next
	}
}

// waitRound waits for r as one of its callers: for its answer, its offered
// token (taken for req), or ctx. again says the round ended without an
// answer and the caller must look again.
func (f *Filler) waitRound(ctx context.Context, r *round, req LeaseRequest) (ans LeaseAnswer, again bool, err error) {
	t := &f.leases
	t.mu.Lock()
	r.waiters++
	t.mu.Unlock()
	f.opts.Metrics.Coalesced.WithLabelValues(AppLoader).Inc()
	f.opts.Radar.Joined(req.Key)
	start := time.Now() // a latency, not a deadline
	defer func() { f.opts.Metrics.WaitSeconds.WithLabelValues(AppLoader).Observe(time.Since(start).Seconds()) }()
	offer := r.offer
	for {
		select {
		case <-r.done:
			t.mu.Lock()
			r.waiters--
			t.mu.Unlock()
			switch {
			case r.retry:
				return LeaseAnswer{}, true, nil
			case r.err != nil:
				f.answered(AppLoader, AnswerError, req.Key)
				return LeaseAnswer{}, false, r.err
			case !r.ans.Found:
				f.answered(AppLoader, AnswerNegative, req.Key)
			default:
				f.answered(AppLoader, AnswerLoaded, req.Key)
			}
			return LeaseAnswer{Answer: r.ans}, false, nil
		case <-offer:
			offer = nil // closed for good: take it now or never
			t.mu.Lock()
			if r.state == roundOffered {
				r.waiters--
				token := f.grantLocked(r, req, r.fleet)
				t.mu.Unlock()
				return LeaseAnswer{Token: token}, false, nil
			}
			t.mu.Unlock()
		case <-ctx.Done():
			t.mu.Lock()
			r.waiters--
			last := r.waiters == 0 && !r.refresh
			t.mu.Unlock()
			if last {
				// No one is left to take an offered lease.
				f.endRoundIf(r, roundOffered, Answer{}, nil, true)
			}
			return f.leaseTimedOut(req)
		}
	}
}

// leaseTimedOut answers a caller whose TIMEOUT passed: the stored value if
// one is servable now, else the timeout.
func (f *Filler) leaseTimedOut(req LeaseRequest) (LeaseAnswer, bool, error) {
	if env, found := f.opts.Store.Lookup([]byte(req.Key)); Servable(env, found, f.now().UnixNano()) {
		f.answered(AppLoader, AnswerTimeoutStale, req.Key)
		return LeaseAnswer{Answer: Answer{Value: env.Value, Found: true}}, false, nil
	}
	f.answered(AppLoader, AnswerTimeout, req.Key)
	return LeaseAnswer{}, false, &TimeoutError{After: req.Timeout}
}

// claimRound asks the fleet for r's key on behalf of the caller that made
// r, without following another replica's lease, and returns the token when
// that caller holds the lease. The fleet's entry, failure or full budget
// end the round; another replica's lease is followed by a goroutine while
// this replica's callers wait.
func (f *Filler) claimRound(r *round) (token string) {
	opts := ClaimOptions{NoFollow: true, LoadTimeout: r.req.Term, NoTakeOver: true}
	if r.refresh {
		opts.FreshAfter = f.now().UnixNano()
	}
	c, err := f.opts.Fleet.Claim(context.Background(), f.db(), r.key, opts)
	switch {
	case errors.Is(err, ErrFleetHeld):
		go f.followRound(r, opts)
		return ""
	case err == nil && c.Lease != nil:
		f.leases.mu.Lock()
		defer f.leases.mu.Unlock()
		return f.grantLocked(r, r.req, c.Lease)
	}
	if f.settleFromFleet(r, c, err) {
		return ""
	}
	// Redis does not answer: this replica fills alone.
	f.leases.mu.Lock()
	defer f.leases.mu.Unlock()
	return f.grantLocked(r, r.req, nil)
}

// followRound waits for the replica that holds r's key's lease, on r's
// behalf, while r has callers: for its result, or for the lease, which it
// offers to them.
func (f *Filler) followRound(r *round, opts ClaimOptions) {
	opts.NoFollow = false
	for {
		c, err := f.opts.Fleet.Claim(context.Background(), f.db(), r.key, opts)
		switch {
		case errors.Is(err, ErrFleetHeld):
			// The holder took all of --lease-wait: keep waiting while this
			// replica's callers do.
			f.leases.mu.Lock()
			waited := r.waiters > 0
			f.leases.mu.Unlock()
			if waited {
				continue
			}
			f.endRoundIf(r, roundClaiming, Answer{}, nil, true)
		case err == nil && c.Lease != nil:
			f.offer(r, c.Lease)
		case !f.settleFromFleet(r, c, err):
			f.offer(r, nil)
		}
		return
	}
}

// settleFromFleet ends r with what the fleet answered: its entry (kept
// here), its failure (whose cooldown is held here too) or a full fill
// budget. It reports false for any other error: Redis does not answer.
func (f *Filler) settleFromFleet(r *round, c FleetClaim, err error) bool {
	var failure *FleetFailure
	switch {
	case err == nil && c.Found:
		o := f.fleetEntryOutcome(r.key, c.Entry)
		res, kerr := f.keep(r.key, r.fence, o)
		f.leases.mu.Lock()
		f.endLocked(r, Answer{Value: res.Value, Found: res.Found}, kerr, false)
		f.leases.mu.Unlock()
	case errors.As(err, &failure):
		oe := &loader.OriginError{Loader: failure.Loader, Reason: failure.Reason}
		f.cooldown.Hold(r.key, oe, failure.Until, f.now())
		f.endRoundIf(r, roundClaiming, Answer{}, oe, false)
	case errors.Is(err, ErrFleetBusy):
		f.endRoundIf(r, roundClaiming, Answer{}, &loader.OriginError{Loader: AppLoader,
			Reason: "fleet fill budget busy (--fleet-max-concurrent-fills)", Err: err}, false)
	default:
		return false
	}
	return true
}

// FillLease stores the value its holder filled key with under token, with
// the lease's ttl and grace, shares it with the fleet and wakes the
// key's waiters. found false stores the origin's "no such key" instead:
// remembered for NegativeTTL, answered as nil. A token that is no longer
// valid, or a key written during the lease, stores nothing and returns a
// *LeaseLostError.
//
// Outside the section (c's zero value) the fleet hears of the fill first,
// and a fleet lease lost meanwhile stores nothing. Inside it (FILL.SET in
// EXEC or a script) the fill is stored here at once and published once c
// has left the section; if the fleet's lease was lost by then, this
// replica drops its copy, and the other replica's fill is the key's.
func (f *Filler) FillLease(c Caller, key, token string, value []byte, found bool) error {
	r, fleet, err := f.settling(key, token)
	if err != nil {
		return err
	}
	now := f.now()
	f.opts.Radar.Called(key, AppLoader, now.Sub(r.granted), false)
	var entry FleetEntry
	if found {
		fresh := now.Add(f.jitter(r.req.TTL))
		entry = FleetEntry{Value: value, FreshUntil: fresh.UnixNano(), StaleUntil: fresh.Add(r.req.Grace).UnixNano(),
			Loader: AppLoader, LoadTime: now.Sub(r.granted)}
	} else {
		until := now.Add(f.opts.NegativeTTL).UnixNano()
		entry = FleetEntry{Value: []byte{}, Missing: true, Loader: AppLoader, FreshUntil: until, StaleUntil: until}
	}
	switch {
	case fleet == nil:
	case c.InSection:
		defer c.afterSection(func() {
			if errors.Is(fleet.Publish(context.Background(), entry), ErrFleetLeaseLost) {
				f.within(outside, func() { f.opts.Store.Invalidate([]byte(key)) })
				f.leased(LeaseLost)
			}
		})
	case errors.Is(fleet.Publish(context.Background(), entry), ErrFleetLeaseLost):
		f.endRoundIf(r, roundSettling, Answer{}, nil, true)
		f.leased(LeaseLost)
		return errLeaseFleet
	}
	f.cooldown.Succeed(key)
	var written bool
	if found {
		var res engine.SetResult
		opts := entry.SetOptions(r.fence)
		opts.Loaded = true
		f.within(c, func() { res, err = f.opts.Store.Set([]byte(key), value, opts) })
		if err != nil {
			// Too large for the store: the waiters still get the value, as
			// a GETFILL flight's callers would not.
			f.endRoundIf(r, roundSettling, Answer{Value: value, Found: true}, nil, false)
			return err
		}
		written = res.Written
	} else {
		f.within(c, func() { f.opts.Store.DeleteFenced(r.fence) })
		if written = !r.fence.Written(); written {
			f.rememberMissing(key, now)
		}
	}
	f.leases.mu.Lock()
	if written {
		f.endLocked(r, Answer{Value: value, Found: found}, nil, false)
	} else {
		f.endLocked(r, Answer{}, nil, true) // the client's write is the answer now
	}
	f.leases.mu.Unlock()
	if !written {
		f.leased(LeaseLost)
		return errLeaseFenced
	}
	f.leased(LeaseSet)
	return nil
}

// AbortLease ends key's lease under token without a value: the waiters get
// -LOADERR app: reason, and the key cools down as after a failed load
// (fleet-wide with --redis). A token that is no longer valid returns a
// *LeaseLostError. c says where the caller runs: inside the section the
// fleet hears of the failure once c has left it.
func (f *Filler) AbortLease(c Caller, key, token, reason string) error {
	r, fleet, err := f.settling(key, token)
	if err != nil {
		return err
	}
	reason = oneLine(reason)
	if reason == "" {
		reason = "aborted by the application"
	}
	now := f.now()
	f.opts.Radar.Called(key, AppLoader, now.Sub(r.granted), true)
	oe := &loader.OriginError{Loader: AppLoader, Reason: reason}
	until := f.cooldown.Fail(key, oe, now)
	if fleet != nil {
		// Its error changes nothing here, as for a GETFILL flight (share).
		c.afterSection(func() {
			_ = fleet.Fail(context.Background(), FleetFailure{Loader: AppLoader, Reason: reason, Until: until})
		})
	}
	f.endRoundIf(r, roundSettling, Answer{}, oe, false)
	f.leased(LeaseAborted)
	return nil
}

// settling checks that token holds key's lease and marks the round as
// being settled, so that its term can no longer end it. The round's fleet
// lease, if any, passes to the caller, which ends it.
func (f *Filler) settling(key, token string) (*round, FleetLease, error) {
	f.leases.mu.Lock()
	defer f.leases.mu.Unlock()
	r := f.leases.rounds[key]
	if r == nil || r.state != roundLeased || r.token != token {
		f.leased(LeaseLost)
		return nil, nil, errLeaseUnknown
	}
	r.state = roundSettling
	r.timer.Stop()
	fleet := r.fleet
	r.fleet = nil
	return r, fleet, nil
}

// leaseActive reports whether the application is filling key.
func (f *Filler) leaseActive(key string) bool {
	f.leases.mu.Lock()
	defer f.leases.mu.Unlock()
	return f.leases.rounds[key] != nil
}

// LeaseWaiters reports how many FILL.LEASE callers wait for key. Tests read
// it to know callers are waiting before the holder settles.
func (f *Filler) LeaseWaiters(key string) int {
	f.leases.mu.Lock()
	defer f.leases.mu.Unlock()
	if r := f.leases.rounds[key]; r != nil {
		return r.waiters
	}
	return 0
}

// leased counts a lease event.
func (f *Filler) leased(r LeaseResult) {
	f.opts.Metrics.Leases.WithLabelValues(AppLoader, string(r)).Inc()
}

// newToken is a lease token: 128 random bits in hex, which no caller can
// guess.
func newToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// oneLine makes s fit a RESP error line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
