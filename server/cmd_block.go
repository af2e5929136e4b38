package server

import (
	"time"
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
	b := c.srv.block(c.id, int(c.db.Load()), keys, serve)
	c.awaitBlocked(b, keys, timeout, reply, timedOut)
}

// BlockRead is Block for a reader that takes nothing (commands.Client):
// serving the key goes on past it when it cannot be served.
func (c *Conn) BlockRead(keys [][]byte, timeout time.Duration, serve func(ready []byte) bool, reply, timedOut func()) {
	b := c.srv.block(c.id, int(c.db.Load()), keys, serve)
	b.reader = true
	c.awaitBlocked(b, keys, timeout, reply, timedOut)
}

// InSection reports whether c runs inside EXEC or a script, where nothing
// may wait (commands.Client).
func (c *Conn) InSection() bool { return c.tx.inSection }
