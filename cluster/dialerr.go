package cluster

import (
	"context"
	"errors"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// dialErrors remembers why the last connection to Redis could not be made.
// The client library retries a failed dial until the operation's deadline
// and then reports only the deadline; the log should name the cause
// (connection refused, no such host). A redis.Hook.
type dialErrors struct {
	last atomic.Pointer[error] // nil once a dial succeeds
}

func (d *dialErrors) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			d.last.Store(nil)
		} else if ctx.Err() == nil {
			d.last.Store(&err)
		}
		return conn, err
	}
}

func (d *dialErrors) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (d *dialErrors) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// explain returns err, or for an operation that ran out of time while the
// last dial had failed, that dial's error, which says why.
func (d *dialErrors) explain(err error) error {
	if p := d.last.Load(); p != nil && errors.Is(err, context.DeadlineExceeded) {
		return *p
	}
	return err
}
