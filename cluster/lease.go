package cluster

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/swr"
)

// Lease is the right to call the origin for one key, fleet-wide (an
// swr.FleetLease). Its holder must end it with exactly one of Publish, Fail
// or Release.
type Lease struct {
	c     *dbTier
	key   string
	token string // random; the scripts compare it before acting
	ttl   time.Duration
	slot  bool // holds a --fleet-max-concurrent-fills slot named token
}

// A Client is the Fleet a Filler coordinates through, and its leases are
// the Fleet's.
var (
	_ swr.Fleet      = (*Client)(nil)
	_ swr.FleetLease = (*Lease)(nil)
)

// Key is the cache key the lease is for.
func (l *Lease) Key() string { return l.key }

// Claim decides who loads key of database db (swr.Fleet; claim).
func (c *Client) Claim(ctx context.Context, db int, key string, opts swr.ClaimOptions) (swr.FleetClaim, error) {
	return c.in(db).claim(ctx, key, opts)
}

// claim decides who loads key: the shared tier's entry if it has one (with
// opts.FreshAfter, only one fresh then), the fleet's failure (a
// *swr.FleetFailure) while the key cools down after another replica's
// failed load, or a lease for this replica. While another replica holds the
// lease, Claim follows it: it waits for the holder's result, woken by its
// publication, with a backoff poll as a fallback that also retries the
// lease, so a holder that died is replaced once its lease expires. A lease
// followed for --lease-wait without a result is taken over before it
// expires (takeOver): one follower fleet-wide loads, the others follow it,
// each giving the new holder a whole --lease-wait again; under
// opts.NoTakeOver (an application's lease) it returns ErrLeaseHeld then
// instead, and the caller follows on. Under opts.NoFollow
// it returns ErrLeaseHeld at once instead of following, and with an error
// matching ErrUnavailable as soon as Redis does not answer: the caller then
// loads alone.
//
// opts.LoadTimeout is how long the load may take; the lease outlives it by
// a margin.
func (t *dbTier) claim(ctx context.Context, key string, opts swr.ClaimOptions) (swr.FleetClaim, error) {
	if !t.up.Load() {
		return swr.FleetClaim{}, ErrUnavailable
	}
	// Following before the first look means a publication between that
	// look and the wait below still wakes it.
	wake := t.follow(key)
	defer t.unfollow(key, wake)
	deadline := time.Now().Add(t.opts.LeaseWait)
	lease := &Lease{c: t, key: key, ttl: t.leaseTTL(opts.LoadTimeout)}
	contended, backoff := false, pollMin
	holder := "" // the token of the lease followed until deadline
	for first := true; ; first = false {
		lease.token = randomHex(16)
		res, err := t.claimOnce(ctx, lease, opts.FreshAfter, "")
		if err != nil {
			return swr.FleetClaim{}, err
		}
		if first {
			if res.Found {
				t.m.SharedLookups.WithLabelValues("hit").Inc()
			} else {
				t.m.SharedLookups.WithLabelValues("miss").Inc()
			}
		}
		switch {
		case res.Found:
			return res.FleetClaim, nil
		case res.failure != nil:
			return swr.FleetClaim{}, res.failure
		case res.Lease != nil:
			if contended {
				t.m.Leases.WithLabelValues("takeover").Inc()
			} else {
				t.m.Leases.WithLabelValues("acquired").Inc()
			}
			err := t.takeSlot(ctx, lease, deadline)
			if err == nil {
				return res.FleetClaim, nil
			}
			if err != ErrLeaseLost {
				return swr.FleetClaim{}, err
			}
			// The slot wait outlasted the lease and another replica took
			// it: follow that one.
		}
		if !contended {
			contended = true
			t.m.Leases.WithLabelValues("contended").Inc()
		}
		if opts.NoFollow {
			return swr.FleetClaim{}, ErrLeaseHeld
		}
		if res.holder != holder {
			// Another lease than the one followed so far (the first, or
			// its holder settled without a result, or another follower
			// took it over): its holder gets the whole --lease-wait.
			holder, deadline = res.holder, time.Now().Add(t.opts.LeaseWait)
		}
		left := time.Until(deadline)
		if left <= 0 && opts.NoTakeOver {
			return swr.FleetClaim{}, ErrLeaseHeld
		}
		if left <= 0 && holder != "" {
			res, err := t.takeOver(ctx, lease, opts.FreshAfter, holder)
			switch {
			case err != nil:
				return swr.FleetClaim{}, err
			case res.failure != nil:
				return swr.FleetClaim{}, res.failure
			case res.Found || res.Lease != nil:
				return res.FleetClaim, nil
			}
			// Another follower took it over first: follow the winner.
			holder, deadline = res.holder, time.Now().Add(t.opts.LeaseWait)
			left = t.opts.LeaseWait
		}
		timer := time.NewTimer(min(backoff, max(left, 0)))
		select {
		case <-wake:
		case <-timer.C:
			backoff = min(2*backoff, pollMax)
		case <-ctx.Done():
			timer.Stop()
			return swr.FleetClaim{}, ctx.Err()
		case <-t.done:
			timer.Stop()
			return swr.FleetClaim{}, ErrUnavailable
		}
		timer.Stop()
	}
}

// takeOver is Claim's step once the lease of holder was followed for
// --lease-wait without a result (the holder stalled, or died and its lease
// has not expired yet): it takes that lease over for lease, unless another
// follower did first (a claimResult with the winner's holder token) or a
// result came meanwhile. With a fleet fill budget it first waits, at most
// --lease-wait again, for a slot of its own, which the lease keeps: the
// budget bounds the load it takes over, and a follower that gets no slot
// leaves the holder's lease alone and fails with ErrFleetBusy.
func (t *dbTier) takeOver(ctx context.Context, lease *Lease, freshAfter int64, holder string) (claimResult, error) {
	t.m.LeaseWaitFallbacks.Inc()
	if t.opts.FleetMaxConcurrentFills > 0 {
		if err := t.waitSlot(ctx, lease, time.Now().Add(t.opts.LeaseWait)); err != nil {
			return claimResult{}, err
		}
	}
	res, err := t.claimOnce(ctx, lease, freshAfter, holder)
	if err != nil || res.Lease == nil {
		t.freeSlot(lease)
		return res, err
	}
	t.m.Leases.WithLabelValues("takeover").Inc()
	return res, nil
}

// claimResult is one run of claimScript.
type claimResult struct {
	swr.FleetClaim
	failure *swr.FleetFailure
	holder  string // the token of the lease another replica holds
}

// claimOnce runs claimScript once; freshAfter is ClaimOptions.FreshAfter,
// and takeOver the token of the lease to take over ("": none).
func (t *dbTier) claimOnce(ctx context.Context, lease *Lease, freshAfter int64, takeOver string) (claimResult, error) {
	ctx, cancel := t.opCtx(ctx)
	defer cancel()
	key := lease.key
	v, err := claimScript.Run(ctx, t.rdb,
		[]string{t.keys.value(key), t.keys.failure(key), t.keys.lease(key)},
		lease.token, lease.ttl.Milliseconds(), toMillis(freshAfter), takeOver).Slice()
	if err != nil {
		return claimResult{}, t.check(err)
	}
	kind, _ := v[0].(string)
	switch kind {
	case "val":
		h, err := pairs(v[1])
		if err != nil {
			return claimResult{}, err
		}
		e, err := decodeEntry(h)
		if err != nil {
			return claimResult{}, err
		}
		return claimResult{FleetClaim: swr.FleetClaim{Entry: e, Found: true}}, nil
	case "err":
		h, err := pairs(v[1])
		if err != nil {
			return claimResult{}, err
		}
		f, err := decodeFailure(h)
		if err != nil {
			return claimResult{}, err
		}
		return claimResult{failure: f}, nil
	case "lease":
		return claimResult{FleetClaim: swr.FleetClaim{Lease: lease}}, nil
	case "held":
		var holder string
		if len(v) > 1 {
			holder, _ = v[1].(string)
		}
		return claimResult{holder: holder}, nil
	}
	return claimResult{}, fmt.Errorf("%w: claim answered %v", errMalformed, v)
}

// leaseTTL is how long a lease lives: the load's own deadline plus room for
// publishing its result (one Redis operation), so that a holder alive to the
// end of its load never loses the lease, and one that died loses it soon
// after.
func (c *Client) leaseTTL(loadTimeout time.Duration) time.Duration {
	return loadTimeout + loadTimeout/10 + c.opts.Timeout
}

// takeSlot waits for a --fleet-max-concurrent-fills slot for lease's load,
// until deadline, then renews the lease, which the wait may have eaten
// into. On ErrLeaseLost the lease and the slot are gone.
func (t *dbTier) takeSlot(ctx context.Context, lease *Lease, deadline time.Time) error {
	if t.opts.FleetMaxConcurrentFills <= 0 {
		return nil
	}
	if err := t.waitSlot(ctx, lease, deadline); err != nil {
		lease.Release()
		return err
	}
	octx, cancel := t.opCtx(ctx)
	defer cancel()
	renewed, err := renewScript.Run(octx, t.rdb, []string{t.keys.lease(lease.key)},
		lease.token, lease.ttl.Milliseconds()).Bool()
	if err != nil || !renewed {
		t.freeSlot(lease)
		if err != nil {
			return t.check(err)
		}
		t.m.Leases.WithLabelValues("lost").Inc()
		return ErrLeaseLost
	}
	return nil
}

// waitSlot waits until deadline for a --fleet-max-concurrent-fills slot
// named by lease's token, held for the lease's ttl. It returns ErrFleetBusy
// if every slot stayed taken.
func (t *dbTier) waitSlot(ctx context.Context, lease *Lease, deadline time.Time) error {
	start, backoff := time.Now(), pollMin
	for {
		octx, cancel := t.opCtx(ctx)
		ok, err := slotScript.Run(octx, t.rdb, []string{t.names.fills()},
			lease.token, lease.ttl.Milliseconds(), t.opts.FleetMaxConcurrentFills).Bool()
		cancel()
		if err != nil {
			return t.check(err)
		}
		if ok {
			lease.slot = true
			t.m.FleetSlotWaitSeconds.Observe(time.Since(start).Seconds())
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ErrFleetBusy
		}
		select {
		case <-time.After(min(backoff, left)):
		case <-t.done:
			return ErrUnavailable
		}
		backoff = min(2*backoff, slotPollMax)
	}
}

// Publish stores the holder's loaded entry in the shared tier, expiring at
// its stale deadline, releases the lease and wakes every follower, all in
// one step that happens only if the lease is still held: otherwise it
// returns ErrLeaseLost and changes nothing.
//
// An entry with tags is listed in its tags' sets first, for PURGE.TAG, so
// that no purge can run between its publication and its listing and miss
// it; a listing whose publication is then rejected costs a set member.
func (l *Lease) Publish(ctx context.Context, e swr.FleetEntry) error {
	c := l.c
	c.indexTags(ctx, l.key, e)
	msg := message{kind: msgFilled, sender: c.id, keys: []string{l.key}}
	return c.settle(ctx, l, c.keys.value(l.key), c.keys.failure(l.key), msg, entryExpireAt(e), entryFields(e))
}

// Fail shares the holder's failed load with the fleet: followers everywhere
// get it, and the key's loads pause fleet-wide until f.Until. The shared
// tier's entry, if any, is kept. Like Publish, it happens only if the lease
// is still held.
func (l *Lease) Fail(ctx context.Context, f swr.FleetFailure) error {
	c := l.c
	msg := message{kind: msgFailed, sender: c.id, keys: []string{l.key}}
	target := c.keys.failure(l.key)
	until := strconv.FormatInt(max(f.Until.UnixMilli(), 1), 10)
	return c.settle(ctx, l, target, target, msg, until, failureFields(f))
}

func (t *dbTier) settle(ctx context.Context, lease *Lease, target, cleared string, msg message, expireAt string, fields []any) error {
	defer t.freeSlot(lease)
	ctx, cancel := t.opCtx(ctx)
	defer cancel()
	args := append([]any{lease.token, t.keys.events(), msg.encode(), expireAt}, fields...)
	n, err := settleScript.Run(ctx, t.rdb, []string{target, t.keys.lease(lease.key), cleared}, args...).Int()
	if err != nil {
		return t.check(err)
	}
	if n == 0 {
		t.m.Publications.WithLabelValues("rejected").Inc()
		t.m.Leases.WithLabelValues("lost").Inc()
		return ErrLeaseLost
	}
	t.m.Publications.WithLabelValues("published").Inc()
	return nil
}

// Release gives the lease up without a result, so another replica may take
// it at once instead of after it expires.
func (l *Lease) Release() {
	c := l.c
	defer c.freeSlot(l)
	ctx, cancel := c.opCtx(context.Background())
	defer cancel()
	if err := releaseScript.Run(ctx, c.rdb, []string{c.keys.lease(l.key)}, l.token).Err(); err != nil {
		c.check(err)
	}
}

// freeSlot returns lease's fleet fill slot, if it has one.
func (c *Client) freeSlot(lease *Lease) {
	if !lease.slot {
		return
	}
	lease.slot = false
	ctx, cancel := c.opCtx(context.Background())
	defer cancel()
	if err := c.rdb.ZRem(ctx, c.names.fills(), lease.token).Err(); err != nil {
		c.check(err)
	}
}

// scanner is what SCAN and UNLINK need; both *redis.Client and a Redis
// Cluster's node clients have it.
type scanner interface {
	Scan(ctx context.Context, cursor uint64, match string, count int64) *redis.ScanCmd
	Pipeline() redis.Pipeliner
}
