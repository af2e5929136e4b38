package keyspace

import (
	"errors"
	"math"
	"math/big"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
)

// The blocking list commands: each first does what its non-blocking form
// would; finding nothing, it blocks on its keys (Client.Block) unless it
// runs inside EXEC or a script, where it answers as a timeout at once, as
// Redis does.

// parseBlockTimeout parses a blocking command's timeout in seconds, a
// float, to whole milliseconds rounded up, as Redis's
// getTimeoutFromObjectOrReply; 0 is no timeout. It answers the error.
func parseBlockTimeout(c *commands.Ctx, arg []byte) (time.Duration, bool) {
	f, ok := parseLongDouble(arg)
	if !ok {
		c.W.Error("ERR timeout is not a float or out of range")
		return 0, false
	}
	ms := new(big.Float).Mul(f, big.NewFloat(1000))
	// Redis converts ceill's result to a long long: an infinity or a
	// value out of its range becomes its minimum, a negative timeout.
	if ms.IsInf() || ms.Cmp(big.NewFloat(math.MinInt64)) < 0 || ms.Cmp(big.NewFloat(math.MaxInt64)) >= 0 {
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	n, acc := ms.Int64()
	if acc == big.Below { // truncated toward zero from above: ceil adds one
		n++
	}
	if n < 0 {
		c.W.Error("ERR timeout is negative")
		return 0, false
	}
	if n > engine.MaxDeadlineMillis {
		return 0, true // as good as forever
	}
	return time.Duration(n) * time.Millisecond, true
}

func cmdBLPop(c *commands.Ctx, args [][]byte) {
	blockingPop(c, args[1:len(args)-1], args[len(args)-1], true)
}
func cmdBRPop(c *commands.Ctx, args [][]byte) {
	blockingPop(c, args[1:len(args)-1], args[len(args)-1], false)
}

// blockingPop implements BLPOP and BRPOP key [key ...] timeout: the first
// key holding a list and its element, or a null array once timed out.
func blockingPop(c *commands.Ctx, keys [][]byte, timeoutArg []byte, left bool) {
	timeout, ok := parseBlockTimeout(c, timeoutArg)
	if !ok {
		return
	}
	blockingMPop(c, keys, 1, left, timeout, func(key []byte, popped [][]byte) {
		c.W.Array(2)
		c.W.Bulk(key)
		c.W.Bulk(popped[0])
	})
}

// cmdBLMPop implements BLMPOP timeout numkeys key [key ...] LEFT|RIGHT
// [COUNT count]; the timeout is parsed last, as in Redis.
func cmdBLMPop(c *commands.Ctx, args [][]byte) {
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
func blockingMPop(c *commands.Ctx, keys [][]byte, count int, left bool, timeout time.Duration, reply func(key []byte, popped [][]byte)) {
	blockingTake(c, keys, timeout, func(keys [][]byte) ([]byte, [][]byte, error) {
		key, popped, err := c.Store.LMPop(keys, count, left)
		if err == nil && key != nil {
			notifyPopped(c, key, left)
		}
		return key, popped, err
	}, reply)
}

// blockingTake is the blocking pops' one way to wait (BLPOP, BLMPOP,
// BZPOPMIN, BZMPOP...): take pops from the first of keys that can give
// (a nil key: none can); finding nothing, and not inside EXEC or a
// script, the client blocks on keys until a write makes one ready and
// take, from that key alone, gives. reply writes what was taken, a
// timeout a null array.
func blockingTake[T any](c *commands.Ctx, keys [][]byte, timeout time.Duration, take func(keys [][]byte) ([]byte, T, error), reply func(key []byte, taken T)) {
	key, taken, err := take(keys)
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
		return
	case key != nil:
		reply(key, taken)
		return
	case c.Client.InSection():
		c.W.NullArray()
		return
	}
	c.Client.Block(keys, timeout, func(ready []byte) bool {
		// A key of another type, or emptied meanwhile, does not serve:
		// the client stays blocked, as in Redis.
		k, t, err := take([][]byte{ready})
		if err != nil || k == nil {
			return false
		}
		key, taken = k, t
		return true
	}, func() { reply(key, taken) }, c.W.NullArray)
}

// cmdBLMove implements BLMOVE source destination LEFT|RIGHT LEFT|RIGHT
// timeout.
func cmdBLMove(c *commands.Ctx, args [][]byte) {
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
func cmdBRPopLPush(c *commands.Ctx, args [][]byte) {
	timeout, ok := parseBlockTimeout(c, args[3])
	if !ok {
		return
	}
	blockingMove(c, args[1], args[2], false, true, timeout)
}

// blockingMove is LMOVE, or once source is missing, a wait until it holds
// a list: the element moved, or nil once timed out.
func blockingMove(c *commands.Ctx, src, dst []byte, from, to bool, timeout time.Duration) {
	store := c.Store
	// One operation decides: moved, an error (either key's type), or
	// nothing to move, the one case that waits.
	switch elem, found, err := store.LMove(src, dst, from, to); {
	case err != nil:
		commands.WriteError(c.W, err)
		return
	case found:
		notifyMoved(c, src, dst, from, to)
		c.W.Bulk(elem)
		return
	}
	if c.Client.InSection() {
		c.W.Null()
		return
	}
	dst = append([]byte(nil), dst...)
	var elem []byte
	var moveErr error
	c.Client.Block([][]byte{src}, timeout, func(ready []byte) bool {
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
		default:
			notifyMoved(c, ready, dst, from, to)
		}
		elem = e
		return true
	}, func() {
		if moveErr != nil {
			commands.WriteError(c.W, moveErr)
			return
		}
		c.W.Bulk(elem)
	}, c.W.NullArray) // a timeout's reply, as Redis's, though LMOVE's nil is a bulk
}
