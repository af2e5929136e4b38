package server

import (
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// awaitBlocked serves b at once from the first of keys that can serve it,
// which a write made before b was registered may have filled (its
// listener found no one blocked), then waits for it (waitBlocked). What
// reply writes must not alias the handler's arguments, which the reader
// reuses.
func (c *Conn) awaitBlocked(b *blockedClient, keys [][]byte, timeout time.Duration, reply, timedOut func()) {
	for _, k := range keys {
		if b.tryServe(k) {
			break
		}
	}
	c.waitBlocked(b, timeout, reply, timedOut)
}

// Block blocks c on keys (commands.Client): serve runs in the atomic
// section when a write makes one of them ready, and once one has served,
// or timeout passes, reply or timedOut answers.
func (c *Conn) Block(keys [][]byte, timeout time.Duration, serve func(ready []byte) bool, reply, timedOut func()) {
	b := c.srv.block(c.id, keys, serve)
	c.awaitBlocked(b, keys, timeout, reply, timedOut)
}

// InSection reports whether c runs inside EXEC or a script, where nothing
// may wait (commands.Client).
func (c *Conn) InSection() bool { return c.tx.inSection }

// cmdClientUnblock implements CLIENT UNBLOCK client-id [TIMEOUT|ERROR]:
// 1 if that client was blocked (BLPOP and the like) and is no longer, 0
// otherwise.
func cmdClientUnblock(c *Conn, args [][]byte) {
	if len(args) > 4 {
		subcommandSyntaxError(c, args)
		return
	}
	withError := false
	if len(args) == 4 {
		switch {
		case resp.EqualFold(args[3], "timeout"):
		case resp.EqualFold(args[3], "error"):
			withError = true
		default:
			c.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(commands.ErrNotInteger)
		return
	}
	c.w.Int(commands.BoolInt(c.srv.unblockClient(id, withError)))
}
