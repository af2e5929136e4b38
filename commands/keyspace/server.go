package keyspace

import (
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdDBSize(c *commands.Ctx, _ [][]byte) { c.W.Int(int64(c.Store.Len())) }

// cmdFlush implements FLUSHDB and FLUSHALL [ASYNC|SYNC]. ASYNC is SYNC:
// the store frees its records at once (engine.Store.FlushAll).
func cmdFlush(c *commands.Ctx, args [][]byte) {
	switch {
	case len(args) == 1:
	case len(args) == 2 && (resp.EqualFold(args[1], "async") || resp.EqualFold(args[1], "sync")):
	default:
		c.W.Error(commands.ErrSyntax)
		return
	}
	// In --redis mode the dispatcher then flushes the shared tier
	// (writeThrough), outside the atomic section.
	if resp.EqualFold(args[0], "flushall") {
		c.Store.FlushAll()
	} else {
		c.Store.Flush()
	}
	c.W.OK()
}

func cmdTime(c *commands.Ctx, _ [][]byte) {
	now := time.Now()
	c.W.Array(2)
	c.W.BulkInt(now.Unix())
	c.W.BulkInt(int64(now.Nanosecond() / 1000))
}
