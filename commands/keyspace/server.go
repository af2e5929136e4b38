package keyspace

import (
	"time"

	"github.com/stampedeless/stampedeless/acl"
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

// serverCommands are the commands of a database as a whole, for the
// family's table (Commands).
func serverCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "dbsize", Arity: 1, Flags: commands.Readonly | commands.Fast,
			Handler: cmdDBSize, ACL: acl.Keyspace,
			Group: "server", Summary: "Returns the number of keys in the database.", Since: "1.0.0"},
		{Name: "flushdb", Arity: -1, Flags: commands.Write,
			Handler: cmdFlush, Flush: true, ACL: acl.Keyspace | acl.Dangerous,
			Group: "server", Summary: "Removes all keys from the current database.", Usage: "[ASYNC|SYNC]",
			Since: "1.0.0"},
		{Name: "flushall", Arity: -1, Flags: commands.Write,
			Handler: cmdFlush, Flush: true, ACL: acl.Keyspace | acl.Dangerous,
			Group: "server", Summary: "Removes all keys from all databases.", Usage: "[ASYNC|SYNC]", Since: "1.0.0"},
		{Name: "swapdb", Arity: 3, Flags: commands.Write | commands.Fast,
			Handler: cmdSwapDB, ACL: acl.Keyspace | acl.Dangerous,
			Group: "server", Summary: "Swaps two Redis databases.", Usage: "index1 index2", Since: "4.0.0"},
		{Name: "time", Arity: 1, Flags: commands.Fast | commands.Loading | commands.Stale,
			Handler: cmdTime,
			Group:   "server", Summary: "Returns the server time.", Since: "2.6.0"},
	}
}
