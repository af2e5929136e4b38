package swr

import (
	"context"
	"time"

	"github.com/stampedeless/stampedeless/cluster"
)

// Fleet coordinates fills with other replicas through a shared Redis
// (cluster.Client, --redis). It sits inside a flight, so each replica asks
// it at most once per key at a time; without one (nil), the Filler
// coalesces within this process only.
type Fleet interface {
	// Claim returns the fleet's entry for key, the fleet's failure (a
	// *cluster.Failure), or a lease to load it under; any other error
	// means this replica loads alone.
	Claim(ctx context.Context, key string, refresh bool, loadTimeout time.Duration) (cluster.Claim, error)
	// Publish shares a loaded entry; Fail shares a failed load; Release
	// gives a lease up with neither. Each ends the lease.
	Publish(ctx context.Context, lease *cluster.Lease, e cluster.Entry) error
	Fail(ctx context.Context, lease *cluster.Lease, f cluster.Failure) error
	Release(lease *cluster.Lease)
}
