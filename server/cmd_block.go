package server

import (
	"errors"
	"math"
	"math/big"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The blocking list commands: each first does what its non-blocking form
// would; finding nothing, it blocks on its keys (blocking.go) unless it
// runs inside EXEC or a script, where it answers as a timeout at once, as
// Redis does.

// parseBlockTimeout parses a blocking command's timeout in seconds, a
// float, to whole milliseconds rounded up, as Redis's
// getTimeoutFromObjectOrReply; 0 is no timeout. It answers the error.
func parseBlockTimeout(c *Conn, arg []byte) (time.Duration, bool) {
	f, ok := parseLongDouble(arg)
	if !ok {
		c.w.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	ms := new(big.Float).Mul(f, big.NewFloat(1000))
	// Redis converts ceill's result to a long long: an infinity or a
	// value out of its range becomes its minimum, a negative timeout.
	if ms.IsInf() || ms.Cmp(big.NewFloat(math.MinInt64)) < 0 || ms.Cmp(big.NewFloat(math.MaxInt64)) >= 0 {
		c.w.Error("ERR timeout is negative")
		return 0, false
	}
	n, acc := ms.Int64()
	if acc == big.Below { // truncated toward zero from above: ceil adds one
		n++
	}
	if n < 0 {
		c.w.Error("ERR timeout is negative")
		return 0, false
	}
	if n > maxDeadlineMillis {
		return 0, true // as good as forever
	}
	return time.Duration(n) * time.Millisecond, true
}

func cmdBLPop(c *Conn, args [][]byte) { blockingPop(c, args[1:len(args)-1], args[len(args)-1], true) }
func cmdBRPop(c *Conn, args [][]byte) { blockingPop(c, args[1:len(args)-1], args[len(args)-1], false) }

// blockingPop implements BLPOP and BRPOP key [key ...] timeout: the first
// key holding a list and its element, or a null array once timed out.
func blockingPop(c *Conn, keys [][]byte, timeoutArg []byte, left bool) {
	timeout, ok := parseBlockTimeout(c, timeoutArg)
	if !ok {
		return
	}
	blockingMPop(c, keys, 1, left, timeout, func(key []byte, popped [][]byte) {
		c.w.Array(2)
		c.w.Bulk(key)
		c.w.Bulk(popped[0])
	})
}

// cmdBLMPop implements BLMPOP timeout numkeys key [key ...] LEFT|RIGHT
// [COUNT count]; the timeout is parsed last, as in Redis.
func cmdBLMPop(c *Conn, args [][]byte) {
	m, ok := parseMPop(c, args[2:])
	if !ok {
		return
	}
	timeout, ok := parseBlockTimeout(c, args[1])
	if !ok {
		return
	}
	blockingMPop(c, m.keys, int(min(m.count, maxListCount)), m.left, timeout, func(key []byte, popped [][]byte) {
		writeMPop(c, key, popped, nil)
	})
}

// blockingMPop pops up to count elements from the first of keys that
// holds a list, or blocks on keys until one does; reply writes what was
// popped, a timeout a null array.
func blockingMPop(c *Conn, keys [][]byte, count int, left bool, timeout time.Duration, reply func(key []byte, popped [][]byte)) {
	blockingTake(c, keys, timeout, func(keys [][]byte) ([]byte, [][]byte, error) {
		return c.srv.store.LMPop(keys, count, left)
	}, reply)
}

// blockingTake is the blocking pops' one way to wait (BLPOP, BLMPOP,
// BZPOPMIN, BZMPOP...): take pops from the first of keys that can give
// (a nil key: none can); finding nothing, and not inside EXEC or a
// script, the client blocks on keys until a write makes one ready and
// take, from that key alone, gives. reply writes what was taken, a
// timeout a null array.
func blockingTake[T any](c *Conn, keys [][]byte, timeout time.Duration, take func(keys [][]byte) ([]byte, T, error), reply func(key []byte, taken T)) {
	key, taken, err := take(keys)
	switch {
	case err != nil:
		writeErr(c, err)
		return
	case key != nil:
		reply(key, taken)
		return
	case c.tx.running:
		c.w.NullArray()
		return
	}
	b := c.srv.block(c.id, keys, func(ready []byte) bool {
		// A key of another type, or emptied meanwhile, does not serve:
		// the client stays blocked, as in Redis.
		k, t, err := take([][]byte{ready})
		if err != nil || k == nil {
			return false
		}
		key, taken = k, t
		return true
	})
	c.awaitBlocked(b, keys, timeout, func() { reply(key, taken) }, c.w.NullArray)
}

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

// cmdBLMove implements BLMOVE source destination LEFT|RIGHT LEFT|RIGHT
// timeout.
func cmdBLMove(c *Conn, args [][]byte) {
	from, to, ok := listEnds(c, args[3], args[4])
	if !ok {
		return
	}
	timeout, ok := parseBlockTimeout(c, args[5])
	if !ok {
		return
	}
	blockingMove(c, args[1], args[2], from, to, timeout)
}

// cmdBRPopLPush implements BRPOPLPUSH source destination timeout.
func cmdBRPopLPush(c *Conn, args [][]byte) {
	timeout, ok := parseBlockTimeout(c, args[3])
	if !ok {
		return
	}
	blockingMove(c, args[1], args[2], false, true, timeout)
}

// blockingMove is LMOVE, or once source is missing, a wait until it holds
// a list: the element moved, or nil once timed out.
func blockingMove(c *Conn, src, dst []byte, from, to bool, timeout time.Duration) {
	store := c.srv.store
	if t, found := store.TypeOf(src); found {
		if t != engine.TypeList {
			c.w.Error(errWrongType)
			return
		}
		lmove(c, src, dst, from, to)
		return
	}
	if c.tx.running {
		c.w.Null()
		return
	}
	dst = append([]byte(nil), dst...)
	var elem []byte
	var moveErr error
	b := c.srv.block(c.id, [][]byte{src}, func(ready []byte) bool {
		if t, found := store.TypeOf(ready); !found || t != engine.TypeList {
			return false
		}
		e, found, err := store.LMove(ready, dst, from, to)
		switch {
		case errors.Is(err, engine.ErrWrongType):
			// The destination's type: Redis answers it to the blocked
			// client, and the element stays.
			moveErr = err
		case err != nil || !found:
			return false
		}
		elem = e
		return true
	})
	c.awaitBlocked(b, [][]byte{src}, timeout, func() {
		if moveErr != nil {
			writeErr(c, moveErr)
			return
		}
		c.w.Bulk(elem)
	}, c.w.NullArray) // a timeout's reply, as Redis's, though LMOVE's nil is a bulk
}

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
		case equalFold(args[3], "timeout"):
		case equalFold(args[3], "error"):
			withError = true
		default:
			c.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	c.w.Int(boolInt(c.srv.unblockClient(id, withError)))
}
