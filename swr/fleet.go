package swr

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// Fleet coordinates fills with other replicas through a shared Redis
// (cluster.Client implements it, --redis). It sits inside a flight, so each
// replica asks it at most once per key at a time; without one (nil), the
// Filler coalesces within this process only.
type Fleet interface {
	// Claim returns the fleet's entry for key of database db (Found), or a
	// lease to load
	// it under. Its error is a *FleetFailure while the key's loads pause
	// fleet-wide after another replica's failed load, matches ErrFleetBusy
	// when the fleet's fill budget stayed full, and matches ErrFleetHeld
	// when another replica held the lease (with NoFollow; without it the
	// Fleet follows the holder until its result, or takes the lease over
	// for this replica once it waited long enough); any other error means
	// this replica loads alone.
	Claim(ctx context.Context, db int, key string, opts ClaimOptions) (FleetClaim, error)
	// Entry returns the fleet's entry for key, if it has one, and claims
	// nothing: it is for a caller that must not wait for a fill already
	// running here. An error means the fleet did not answer.
	Entry(ctx context.Context, db int, key string) (FleetEntry, bool, error)
}

// ClaimOptions say what a Claim will take and how long it may wait.
type ClaimOptions struct {
	// FreshAfter, if not zero, makes only a shared entry still fresh at
	// that time (unix nanoseconds) an answer: a refresh passes now, an
	// early refresh the fresh deadline of the entry it replaces.
	FreshAfter int64
	// NoFollow makes Claim return at once, with an error matching
	// ErrFleetHeld, when another replica holds the lease, instead of
	// waiting for that replica's result.
	NoFollow bool
	// LoadTimeout is how long the load may take (the loader's timeout, or
	// FILL.LEASE's LEASE): the lease must outlive it.
	LoadTimeout time.Duration
	// NoTakeOver makes a follower wait for the holder's lease to end
	// rather than take it over once it has waited --lease-wait: the term
	// of an application's lease (FILL.LEASE's LEASE) is its holder's to
	// use whole, however much longer than --lease-wait it is. Claim then
	// returns an error matching ErrFleetHeld at each --lease-wait.
	NoTakeOver bool
}

// FleetClaim is how a replica's fill of a key goes: with the entry the
// fleet already has (Found), or by loading it under Lease.
type FleetClaim struct {
	Entry FleetEntry
	Found bool
	Lease FleetLease
}

// FleetLease is the right to call the origin for one key, fleet-wide. Its
// holder ends it with exactly one of its methods: Publish shares a loaded
// entry, Fail shares a failed load, Release gives it up with neither. The
// Fleet reports their failures in its own metrics and logs: a GETFILL
// flight goes on with its outcome whatever they return, while an
// application's FILL.SET answers -LEASELOST when Publish's error matches
// ErrFleetLeaseLost.
type FleetLease interface {
	Publish(ctx context.Context, e FleetEntry) error
	Fail(ctx context.Context, f FleetFailure) error
	Release()
}

// ErrFleetBusy is what a Fleet's Claim error matches when every fleet-wide
// fill slot (--fleet-max-concurrent-fills) stayed taken: the load fails
// rather than add to an origin the fleet already keeps busy.
var ErrFleetBusy = errors.New("swr: the fleet's fill budget stayed full")

// ErrFleetHeld is what a Fleet's Claim error matches when another replica
// holds the key's lease and the claim was not to follow it (NoFollow).
var ErrFleetHeld = errors.New("swr: another replica holds the key's lease")

// ErrFleetLeaseLost is what Publish and Fail return (matching) when the
// lease was no longer held: it expired and another replica took it, or a
// client wrote the key. Nothing was shared.
var ErrFleetLeaseLost = errors.New("swr: the fleet lease is no longer held")

// FleetEntry is a cache entry as the fleet shares it: the value with its
// envelope.
type FleetEntry struct {
	// Type is the key's type; Value is a collection's portable form
	// (engine.Store.Export) for another type than a string.
	Type  engine.Type
	Value []byte
	// FreshUntil and StaleUntil are unix nanoseconds, zero when there is no
	// such deadline, as in engine.Envelope.
	FreshUntil, StaleUntil int64
	ETag, LastModified     string
	// Loader is the prefix of the loader that filled it; empty for a
	// client write.
	Loader string
	// Missing marks a negative entry: the origin answered 404 or 410.
	Missing bool
	// LoadTime is how long the fill took (engine.FillMeta.LoadTime).
	LoadTime time.Duration
	// Tags are the origin's tags for the value (loader.Result.Tags), within
	// the Filler's bounds; PURGE.TAG names them.
	Tags []string
}

// SetOptions are the options that store e in the local store under fence.
func (e FleetEntry) SetOptions(fence *engine.Fence) engine.SetOptions {
	opts := engine.SetOptions{FreshUntil: e.FreshUntil, StaleUntil: e.StaleUntil, Fence: fence, Type: e.Type}
	if e.Loader != "" {
		opts.Fill = &engine.FillMeta{Loader: e.Loader, ETag: e.ETag, LastModified: e.LastModified, LoadTime: e.LoadTime}
	}
	return opts
}

// FleetFailure is a failed fill shared with the fleet: the lease holder's
// load failed, and the key's loads pause fleet-wide until Until. It is never
// stored as a value.
type FleetFailure struct {
	Loader, Reason string
	Until          time.Time
}

// Error says which loader failed and why.
func (f *FleetFailure) Error() string {
	return fmt.Sprintf("loader %q: %s (fleet cooldown)", f.Loader, f.Reason)
}
