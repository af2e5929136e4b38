package server

import (
	"time"
)

func cmdDBSize(c *Conn, _ [][]byte) { c.w.Int(int64(c.srv.store.Len())) }

// cmdFlush implements FLUSHDB and FLUSHALL [ASYNC|SYNC]; there is one database.
func cmdFlush(c *Conn, args [][]byte) {
	async := false
	switch {
	case len(args) == 1:
	case len(args) == 2 && equalFold(args[1], "async"):
		async = true
	case len(args) == 2 && equalFold(args[1], "sync"):
	default:
		c.w.Error(errSyntax)
		return
	}
	// In --redis mode the dispatcher then flushes the shared tier
	// (writeThrough), outside the atomic section.
	c.srv.store.Flush(async)
	c.w.OK()
}

func cmdTime(c *Conn, _ [][]byte) {
	now := time.Now()
	c.w.Array(2)
	c.w.BulkInt(now.Unix())
	c.w.BulkInt(int64(now.Nanosecond() / 1000))
}
