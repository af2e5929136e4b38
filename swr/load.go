package swr

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
)

// load is the work of a flight, in steps that each may settle it: look
// again (an earlier flight may have answered since this caller missed), ask
// the fleet (if any) whether it has the key or who loads it, else call the
// origin. Whatever settled it, the lease (if this replica holds one) ends
// in share and the store's fence in keep, each in that one place. A refresh
// passes the entry's validators, and in freshAfter the time past which the
// fleet's entry must stay fresh to be taken instead (0: not a refresh).
//
// slot, if not nil, is the key's place in an MGETFILL's batch (batch.go):
// its origin call goes in the batch's request, and every other way the
// flight settles withdraws it, so the batch does not wait for it.
func (f *Filler) load(ld *loader.Loader, req Request, freshAfter int64, v loader.Validators, slot *batchSlot) (loader.Result, error) {
	defer slot.withdraw() // a no-op once it was fetched or withdrawn
	fence := f.opts.Store.Fence([]byte(req.Key))
	f.flights.began(req.Key, fence)
	defer f.flights.ended(req.Key, fence)
	var o *outcome
	if freshAfter == 0 {
		o = f.answeredMeanwhile(req.Key)
	}
	var lease FleetLease
	if o == nil {
		lease, o = f.claim(ld, req, freshAfter, slot)
	}
	if o == nil {
		res, took, err := f.fetch(ld, req, v, slot)
		o = f.originOutcome(ld, req, res, took, err)
	}
	if lease != nil {
		// Shared before it is kept here, so followers on other replicas
		// wake as early as possible.
		f.share(lease, o)
	}
	return f.keep(req.Key, fence, o)
}

// outcome is how a flight ended: its result and error, the entry to keep
// here and share with the fleet (nil: none, the fence is released), and the
// failure to share (nil: none).
type outcome struct {
	res     loader.Result
	err     error
	entry   *FleetEntry
	failure *FleetFailure
	// fromFleet: the entry came from the fleet, which keeps it even when
	// this replica cannot.
	fromFleet bool
}

// answeredMeanwhile returns the answer a flight that ended since the
// caller decided to load already gave, if any: a value, a "no such key",
// or a failure whose cooldown holds.
func (f *Filler) answeredMeanwhile(key string) *outcome {
	now := f.now()
	if env, found := f.opts.Store.Peek([]byte(key)); found && Decide(env, found, now.UnixNano(), false) == Serve {
		return &outcome{res: loader.Result{Value: env.Value, Found: true}}
	}
	if f.isNegative(key, now) {
		return &outcome{}
	}
	if until, lastErr, cooling := f.cooldown.Check(key, now); cooling {
		return &outcome{err: &CooldownError{Err: lastErr, Left: until.Sub(now)}}
	}
	return nil
}

// claim asks the fleet, if there is one, who loads req's key. It returns
// the lease to load under, or the flight's outcome when the fleet settled
// it: with its entry, its failure, or a full fill budget. Both nil: this
// replica loads alone.
//
// A key of a batch (slot) does not follow another replica's lease inside
// its batch: the batch's last request would wait for it. It leaves the
// batch first, then follows.
func (f *Filler) claim(ld *loader.Loader, req Request, freshAfter int64, slot *batchSlot) (FleetLease, *outcome) {
	if f.opts.Fleet == nil {
		return nil, nil
	}
	opts := ClaimOptions{FreshAfter: freshAfter, LoadTimeout: ld.Timeout(), NoFollow: slot != nil}
	c, err := f.opts.Fleet.Claim(context.Background(), f.db(), req.Key, opts)
	if opts.NoFollow && errors.Is(err, ErrFleetHeld) {
		slot.withdraw()
		opts.NoFollow = false
		c, err = f.opts.Fleet.Claim(context.Background(), f.db(), req.Key, opts)
	}
	var failure *FleetFailure
	switch {
	case err == nil && c.Found:
		return nil, f.fleetEntryOutcome(req.Key, c.Entry)
	case err == nil:
		return c.Lease, nil
	case errors.As(err, &failure):
		// Another replica's load failed: share its failure and its
		// cooldown rather than call the origin again.
		oe := &loader.OriginError{Loader: failure.Loader, Reason: failure.Reason}
		f.cooldown.Hold(req.Key, oe, failure.Until, f.now())
		return nil, &outcome{err: oe}
	case errors.Is(err, ErrFleetBusy):
		return nil, &outcome{err: &loader.OriginError{Loader: ld.Prefix(),
			Reason: "fleet fill budget busy (--fleet-max-concurrent-fills)", Err: err}}
	}
	// Otherwise Redis is down or the holder sent nothing in time: load
	// here, as a single process would.
	return nil, nil
}

// fleetEntryOutcome settles a flight with an entry the fleet already has.
func (f *Filler) fleetEntryOutcome(key string, e FleetEntry) *outcome {
	o := &outcome{entry: &e, fromFleet: true}
	switch {
	case e.Type != engine.TypeString:
		// A client's hash or set, written on another replica: kept here
		// as it is, and read-through answers -WRONGTYPE, as it would had
		// this replica had it.
		o.err = engine.ErrWrongType
	case !e.Missing:
		f.cooldown.Succeed(key)
		o.res = loader.Result{Value: e.Value, Found: true, ETag: e.ETag, LastModified: e.LastModified}
	}
	return o
}

// originOutcome settles a flight with the origin's answer, which took took:
// a failure starts the key's cooldown; a "no such key" becomes a negative
// entry; a value (for a 304, the one stored here) becomes an entry with its
// deadlines and its load time.
func (f *Filler) originOutcome(ld *loader.Loader, req Request, res loader.Result, took time.Duration, err error) *outcome {
	now := f.now()
	f.logs.took(ld, req.Key, took)
	f.opts.Radar.Called(req.Key, ld.Prefix(), took, err != nil)
	if err != nil {
		failure := &FleetFailure{Loader: ld.Prefix(), Reason: err.Error(), Until: f.cooldown.Fail(req.Key, err, now)}
		f.logs.failed(ld, req.Key, err, failure.Until.Sub(now))
		var oe *loader.OriginError
		if errors.As(err, &oe) {
			failure.Reason = oe.Reason
		}
		return &outcome{res: res, err: err, failure: failure}
	}
	if failures := f.cooldown.Succeed(req.Key); failures > 0 {
		f.logs.recovered(ld, req.Key, failures)
	}
	if !res.Found {
		until := now.Add(f.opts.NegativeTTL).UnixNano()
		return &outcome{res: res, entry: &FleetEntry{Value: []byte{}, Missing: true, Loader: ld.Prefix(),
			FreshUntil: until, StaleUntil: until}}
	}
	if res.NotModified {
		env, found := f.opts.Store.Peek([]byte(req.Key))
		if !found {
			// The copy it revalidated is gone: nothing to keep or share.
			return &outcome{res: res}
		}
		res.Value = env.Value
		if len(res.Tags) == 0 {
			res.Tags = f.tags.of(req.Key, env) // a 304 without tags keeps the copy's
		}
	}
	fresh := now.Add(f.jitter(req.TTL))
	return &outcome{res: res, entry: &FleetEntry{Value: res.Value, FreshUntil: fresh.UnixNano(),
		StaleUntil: fresh.Add(req.Grace).UnixNano(), Loader: ld.Prefix(), ETag: res.ETag, LastModified: res.LastModified,
		LoadTime: took, Tags: f.tags.bound(ld.Prefix(), res.Tags)}}
}

// share ends lease with the flight's outcome: it publishes the entry,
// shares the failure, or gives the lease up. It is the one place a Filler
// ends a lease.
//
// An error of Publish or Fail changes nothing here: the flight's callers
// get its outcome and this replica keeps it either way, while the fleet
// goes without it (followers elsewhere load after --lease-wait, or take
// the newer result that replaced this lease). The Fleet counts and logs
// those errors itself (cluster: lost leases, rejected publications, Redis
// errors and Redis going down), so they are not reported twice.
func (f *Filler) share(lease FleetLease, o *outcome) {
	ctx := context.Background()
	switch {
	case o.entry != nil:
		_ = lease.Publish(ctx, *o.entry)
	case o.failure != nil:
		_ = lease.Fail(ctx, *o.failure)
	default:
		lease.Release()
	}
}

// keep applies the flight's outcome to the store under fence, the one
// place a flight's fence ends, and returns the flight's answer. It runs
// on no command's behalf (a flight, a follower, a claim after the
// caller's handler), so it enters the section around its write.
func (f *Filler) keep(key string, fence *engine.Fence, o *outcome) (loader.Result, error) {
	switch e := o.entry; {
	case e == nil:
		fence.Release()
	case e.Missing:
		// The origin says the key is gone: a stale copy must not outlive
		// that answer (unless a client wrote the key meanwhile).
		f.within(outside, func() { f.opts.Store.DeleteFenced(fence) })
		f.rememberMissing(key, f.now())
	default:
		opts := e.SetOptions(fence)
		opts.Loaded = true
		var set engine.SetResult
		var err error
		f.within(outside, func() { set, err = f.opts.Store.Set([]byte(key), e.Value, opts) })
		if err != nil {
			fence.Release()
			if !o.fromFleet {
				return o.res, fmt.Errorf("storing the loaded value: %w", err)
			}
			// Too large for this replica: answered, not kept.
			break
		}
		if set.Written {
			f.tags.record(key, opts.Fill, e.Tags)
		}
	}
	return o.res, o.err
}

// fetch calls the origin, with the metrics of an origin call, and returns
// how long it took: in slot's batch request if it has a batch to go in,
// else alone.
func (f *Filler) fetch(ld *loader.Loader, req Request, v loader.Validators, slot *batchSlot) (loader.Result, time.Duration, error) {
	if slot.enqueue(req.Key, v) {
		return slot.wait()
	}
	var res loader.Result
	var err error
	took := f.originCall(ld, 1, func() { res, err = ld.Fetch(context.Background(), req.Key, v) })
	f.opts.Metrics.ObserveLoad(ld.Prefix(), loadResult(res, err), took)
	return res, took, err
}

// originCall makes one origin request of ld's for keys keys, with call,
// counted in flight while it runs and, for a batch loader, as a batch
// request; it returns how long the request took. The caller observes each
// key's load.
func (f *Filler) originCall(ld *loader.Loader, keys int, call func()) time.Duration {
	m, name := f.opts.Metrics, ld.Prefix()
	inFlight := m.InFlight.WithLabelValues(name)
	inFlight.Inc()
	start := time.Now() // a latency, not a deadline: wall time, whatever Options.Now says
	call()
	took := time.Since(start)
	inFlight.Dec()
	if ld.Batch() > 0 {
		m.BatchRequests.WithLabelValues(name).Inc()
		m.BatchKeys.WithLabelValues(name).Observe(float64(keys))
	}
	return took
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
