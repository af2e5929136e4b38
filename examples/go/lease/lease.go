// Package lease is get-or-compute on stampedeless's application fills
// (FILL.LEASE, FILL.SET, FILL.ABORT) with go-redis: of all the callers of a
// missing or stale key, in any number of processes, one computes the value
// and the others wait for it.
package lease

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Wait is how long a caller waits for another caller's computation
// (FILL.LEASE's TIMEOUT); it must stay under the client's read timeout
// (go-redis: 3 s by default), which would cut the wait short.
const Wait = 2 * time.Second

// ErrNotFound: the key's filler said it does not exist (FILL.SET NOTFOUND).
var ErrNotFound = errors.New("lease: no such key")

// GetOrCompute returns key's value: the cached one while it is fresh (ttl)
// or within its grace; else compute's, called by exactly one caller (the
// lease holder) and cached for ttl + grace, which the others wait for.
// When compute fails, the holder aborts the lease with its message, so the
// waiters get "LOADERR app: <message>", and every caller while the key
// cools down "LOADERR app: cooling down for <time left> after: <message>". When Wait passes first, the caller gets the
// server's "TIMEOUT ..." error instead of computing too: the lease is there
// for computations too slow or costly to run once per caller. A value
// computed after the lease was lost (compute outlasted FILL.LEASE's LEASE,
// 10 s, or a client wrote the key) is returned, not cached.
func GetOrCompute(ctx context.Context, rdb *redis.Client, key string, ttl, grace time.Duration,
	compute func(context.Context) (string, error)) (string, error) {
	// One connection for the whole call: the holder's FILL.SET must not
	// wait for a pool connection that callers waiting for it hold.
	conn := rdb.Conn()
	defer conn.Close()
	reply, err := conn.Do(ctx, "FILL.LEASE", key, int(ttl/time.Second), int(grace/time.Second),
		"TIMEOUT", Wait.Milliseconds()).Slice()
	if err != nil {
		return "", err
	}
	switch value, token := reply[0], reply[1]; {
	case token != nil: // this caller holds the lease: compute below
	case value == nil:
		return "", ErrNotFound
	default:
		return value.(string), nil
	}
	token := reply[1]
	// The lease is settled even if ctx ends, so no waiter waits for LEASE.
	settle := context.WithoutCancel(ctx)
	v, err := compute(ctx)
	if err != nil {
		// Best effort: if it fails (-LEASELOST, or no connection), the
		// lease ends at its term anyway, and compute's error is the news.
		_ = conn.Do(settle, "FILL.ABORT", key, token, err.Error()).Err()
		return "", err
	}
	if err := conn.Do(settle, "FILL.SET", key, token, v).Err(); err != nil && !strings.HasPrefix(err.Error(), "LEASELOST") {
		return "", err
	}
	return v, nil
}
