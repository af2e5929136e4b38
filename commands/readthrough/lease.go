package readthrough

import (
	"context"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/swr"
)

// cmdFillLease implements FILL.LEASE key ttl grace [TIMEOUT ms] [LEASE ms]:
// the read-through of a key the application fills itself. The reply is
// [value or nil, token or nil]; the caller handed a token fills the key
// with FILL.SET or gives up with FILL.ABORT.
func (f *family) cmdFillLease(c *commands.Ctx, args [][]byte) {
	ttl, grace, ok := parseTTLGrace(c, args[2], args[3], "fill.lease")
	if !ok {
		return
	}
	req := swr.LeaseRequest{Key: string(args[1]), TTL: ttl, Grace: grace, Timeout: -1}
	ok = eachOption(c, args[4:], func(name, value []byte) (known, ok bool) {
		switch {
		case resp.EqualFold(name, "timeout"):
			req.Timeout, ok = parseMillis(c, value, "TIMEOUT", "fill.lease")
			return true, ok
		case resp.EqualFold(name, "lease"):
			if req.Term, ok = parseMillis(c, value, "LEASE", "fill.lease"); ok && req.Term == 0 {
				c.W.Error("ERR invalid LEASE in 'fill.lease' command")
				return true, false
			}
			return true, ok
		}
		return false, false
	})
	if !ok {
		return
	}
	// Inside EXEC nothing may wait, as for GETFILL: a lease held
	// elsewhere is -TIMEOUT at once, or the stale value.
	req.InSection = c.Client.InSection()
	ans, pending, err := f.filler(c).StartLease(req)
	if pending != nil && c.Client.InSection() {
		ans, err = pending.Wait(context.Background())
		pending = nil
	}
	if pending == nil {
		writeLeaseAnswer(c, req.Key, ans, err)
		return
	}
	c.Client.Await(func(ctx context.Context) func() {
		ans, err := pending.Wait(ctx)
		return func() { writeLeaseAnswer(c, req.Key, ans, err) }
	})
}

// writeLeaseAnswer writes FILL.LEASE's reply.
func writeLeaseAnswer(c *commands.Ctx, key string, ans swr.LeaseAnswer, err error) {
	if writeFillError(c, key, err) {
		return
	}
	c.W.Array(2)
	if ans.Found {
		c.W.Bulk(ans.Value)
	} else {
		c.W.Null()
	}
	if ans.Token != "" {
		c.W.BulkString(ans.Token)
	} else {
		c.W.Null()
	}
}

// cmdFillSet implements FILL.SET key token value [NOTFOUND]: the lease
// holder's value, stored with the lease's ttl and grace. NOTFOUND, with an
// empty value, says instead that the key does not exist: remembered for
// --negative-ttl and answered as nil. A keyword after the value, rather
// than in its place, so that no value is ever mistaken for the marker.
func (f *family) cmdFillSet(c *commands.Ctx, args [][]byte) {
	found := true
	switch {
	case len(args) == 4:
	case len(args) == 5 && resp.EqualFold(args[4], "notfound"):
		if len(args[3]) > 0 {
			c.W.Error("ERR NOTFOUND takes an empty value in 'fill.set' command")
			return
		}
		found = false
	default:
		c.W.Error(commands.ErrSyntax)
		return
	}
	key := string(args[1])
	// The value is copied: the reader reuses its buffer.
	err := f.filler(c).FillLease(fillCaller(c), key, string(args[2]), append([]byte(nil), args[3]...), found)
	if !writeFillError(c, key, err) {
		c.W.OK()
	}
}

// cmdFillAbort implements FILL.ABORT key token [message]: the lease holder
// gives up; the key's waiters get -LOADERR app: message and the key cools
// down as after a failed load.
func (f *family) cmdFillAbort(c *commands.Ctx, args [][]byte) {
	if len(args) > 4 {
		c.W.Error(commands.ErrSyntax)
		return
	}
	var message string
	if len(args) == 4 {
		message = string(args[3])
	}
	key := string(args[1])
	if err := f.filler(c).AbortLease(fillCaller(c), key, string(args[2]), message); !writeFillError(c, key, err) {
		c.W.OK()
	}
}

// fillCaller says where a read-through command's store writes and fleet
// I/O run (swr.Caller): inside EXEC or a script, which hold the atomic
// section, the fleet I/O waits until it is left (shareDeferred); outside,
// the command runs outside the section (commands.OwnSection).
func fillCaller(c *commands.Ctx) swr.Caller {
	if !c.Client.InSection() {
		return swr.Caller{}
	}
	return swr.Caller{InSection: true, Later: func(fn func()) { c.Client.AfterSection(fn) }}
}
