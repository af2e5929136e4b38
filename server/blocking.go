package server

import (
	"context"
	"time"

	"github.com/stampedeless/stampedeless/server/internal/blocked"
)

// serveBlocked serves the clients blocked on the keys c's command made
// ready, unless c runs inside EXEC or a script, whose end serves them
// (Redis serves them after the whole transaction, as if it were one
// command). It runs in the atomic section c's command holds.
func (s *Server) serveBlocked(c *Conn) {
	if c.tx.inSection || !s.blocked.HaveReady() {
		return
	}
	s.blocked.ServeReady()
}

// waitBlocked waits, where c may wait, until b is served, its timeout
// (0: none) passes, CLIENT UNBLOCK ends it or the client disconnects;
// then it unregisters b and replies: reply if it was served, else
// timedOut, or the UNBLOCKED error.
func (c *Conn) waitBlocked(b *blocked.Client, timeout time.Duration, reply, timedOut func()) {
	c.Await(func(ctx context.Context) func() {
		var expired <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-b.Done():
		case <-expired:
			b.Finish(blocked.TimedOut)
		case <-ctx.Done():
			b.Finish(blocked.Disconnect)
		}
		c.srv.blocked.Unregister(b)
		state := b.State()
		return func() {
			switch state {
			case blocked.Served:
				reply()
			case blocked.Unblocked:
				c.w.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
			default:
				timedOut()
			}
		}
	})
}

// awaitBlocked serves b at once from the first of keys that can serve it,
// which a write made before b was registered may have filled (its
// listener found no one blocked), then waits for it (waitBlocked). What
// reply writes must not alias the handler's arguments, which the reader
// reuses.
func (c *Conn) awaitBlocked(b *blocked.Client, keys [][]byte, timeout time.Duration, reply, timedOut func()) {
	for _, k := range keys {
		if b.TryServe(k) {
			break
		}
	}
	c.waitBlocked(b, timeout, reply, timedOut)
}
