package server

import (
	"errors"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The list commands (Redis's t_list.c): argument checks, their order and
// the reply shapes are Redis 7.0's; the engine does the rest atomically.
// The blocking ones are in cmd_block.go.

func cmdLPush(c *Conn, args [][]byte)  { listPush(c, args, true, false) }
func cmdRPush(c *Conn, args [][]byte)  { listPush(c, args, false, false) }
func cmdLPushX(c *Conn, args [][]byte) { listPush(c, args, true, true) }
func cmdRPushX(c *Conn, args [][]byte) { listPush(c, args, false, true) }

func listPush(c *Conn, args [][]byte, left, onlyExisting bool) {
	n, err := c.srv.store.LPush(args[1], args[2:], left, onlyExisting)
	writeIntOrErr(c, int64(n), err)
}

func cmdLPop(c *Conn, args [][]byte) { listPop(c, args, true) }
func cmdRPop(c *Conn, args [][]byte) { listPop(c, args, false) }

// listPop implements LPOP and RPOP key [count]: with a count, an array
// of the elements popped (a null array if key is missing); without, one
// element or nil.
func listPop(c *Conn, args [][]byte, left bool) {
	if len(args) > 3 {
		c.w.Error("ERR wrong number of arguments for '" + string(lower(args[0])) + "' command")
		return
	}
	count := int64(1)
	if len(args) == 3 {
		var ok bool
		if count, ok = resp.ParseInt(args[2]); !ok || count < 0 {
			c.w.Error(errPositiveCount)
			return
		}
	}
	popped, found, err := c.srv.store.LPop(args[1], int(min(count, maxListCount)), left)
	switch {
	case err != nil:
		writeErr(c, err)
	case len(args) == 2 && !found:
		c.w.Null()
	case len(args) == 2:
		c.w.Bulk(popped[0])
	case !found:
		c.w.NullArray()
	default:
		writeBulks(c, popped)
	}
}

// maxListCount bounds the counts the engine is given: no list holds more.
const maxListCount = 1 << 40

// writeBulks replies elems as an array.
func writeBulks(c *Conn, elems [][]byte) {
	c.w.Array(len(elems))
	for _, e := range elems {
		c.w.Bulk(e)
	}
}

func cmdLLen(c *Conn, args [][]byte) {
	n, err := c.srv.store.LLen(args[1])
	writeIntOrErr(c, int64(n), err)
}

// parseIndexes parses two index arguments (LRANGE, LTRIM), or answers
// Redis's integer error.
func parseIndexes(c *Conn, a, b []byte) (start, stop int64, ok bool) {
	start, ok1 := resp.ParseInt(a)
	stop, ok2 := resp.ParseInt(b)
	if !ok1 || !ok2 {
		c.w.Error(errNotInteger)
		return 0, 0, false
	}
	return start, stop, true
}

func cmdLRange(c *Conn, args [][]byte) {
	start, stop, ok := parseIndexes(c, args[2], args[3])
	if !ok {
		return
	}
	elems, err := c.srv.store.LRange(args[1], start, stop)
	if err != nil {
		writeErr(c, err)
		return
	}
	writeBulks(c, elems)
}

// cmdLIndex implements LINDEX key index: the key is looked at before the
// index is parsed, as in Redis.
func cmdLIndex(c *Conn, args [][]byte) {
	if !listKeyOK(c, args[1], (*resp.Writer).Null) {
		return
	}
	i, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	elem, found, err := c.srv.store.LIndex(args[1], i)
	writeBulkOrNil(c, elem, found, err)
}

// writeBulkOrNil replies elem if found, else nil, or err.
func writeBulkOrNil(c *Conn, elem []byte, found bool, err error) {
	switch {
	case err != nil:
		writeErr(c, err)
	case !found:
		c.w.Null()
	default:
		c.w.Bulk(elem)
	}
}

// listKeyOK looks at key for a command that does so before parsing its
// arguments: missing, it answers missing's reply; of another type,
// -WRONGTYPE. It reports whether key holds a list.
func listKeyOK(c *Conn, key []byte, missing func(*resp.Writer)) bool {
	switch t, found := c.srv.store.TypeOf(key); {
	case !found:
		missing(c.w)
		return false
	case t != engine.TypeList:
		c.w.Error(errWrongType)
		return false
	}
	return true
}

// cmdLSet implements LSET key index element.
func cmdLSet(c *Conn, args [][]byte) {
	if !listKeyOK(c, args[1], func(w *resp.Writer) { w.Error("ERR no such key") }) {
		return
	}
	i, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	switch err := c.srv.store.LSet(args[1], i, args[3]); {
	case errors.Is(err, engine.ErrNoSuchKey):
		c.w.Error("ERR no such key")
	case errors.Is(err, engine.ErrIndexOutOfRange):
		c.w.Error("ERR index out of range")
	case err != nil:
		writeErr(c, err)
	default:
		c.w.OK()
	}
}

// cmdLInsert implements LINSERT key BEFORE|AFTER pivot element.
func cmdLInsert(c *Conn, args [][]byte) {
	var before bool
	switch {
	case equalFold(args[2], "before"):
		before = true
	case equalFold(args[2], "after"):
	default:
		c.w.Error(errSyntax)
		return
	}
	n, err := c.srv.store.LInsert(args[1], before, args[3], args[4])
	writeIntOrErr(c, int64(n), err)
}

func cmdLRem(c *Conn, args [][]byte) {
	count, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(errNotInteger)
		return
	}
	n, err := c.srv.store.LRem(args[1], count, args[3])
	writeIntOrErr(c, int64(n), err)
}

func cmdLTrim(c *Conn, args [][]byte) {
	start, stop, ok := parseIndexes(c, args[2], args[3])
	if !ok {
		return
	}
	if err := c.srv.store.LTrim(args[1], start, stop); err != nil {
		writeErr(c, err)
		return
	}
	c.w.OK()
}

// cmdLPos implements LPOS key element [RANK rank] [COUNT num-matches]
// [MAXLEN len], its options checked before the key, as in Redis.
func cmdLPos(c *Conn, args [][]byte) {
	q := engine.LPosQuery{Rank: 1, Count: -1}
	for i := 3; i < len(args); i++ {
		more := i+1 < len(args)
		switch {
		case equalFold(args[i], "rank") && more:
			i++
			r, ok := resp.ParseInt(args[i])
			if !ok {
				c.w.Error(errNotInteger)
				return
			}
			if r == 0 {
				c.w.Error("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			q.Rank = r
		case equalFold(args[i], "count") && more:
			i++
			var ok bool
			if q.Count, ok = nonNegative(c, args[i], "ERR COUNT can't be negative"); !ok {
				return
			}
		case equalFold(args[i], "maxlen") && more:
			i++
			var ok bool
			if q.MaxLen, ok = nonNegative(c, args[i], "ERR MAXLEN can't be negative"); !ok {
				return
			}
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	found, err := c.srv.store.LPos(args[1], args[2], q)
	switch {
	case err != nil:
		writeErr(c, err)
	case q.Count >= 0:
		c.w.Array(len(found))
		for _, i := range found {
			c.w.Int(i)
		}
	case len(found) == 0:
		c.w.Null()
	default:
		c.w.Int(found[0])
	}
}

// nonNegative parses an integer >= 0, or answers msg, as Redis's
// getPositiveLongFromObjectOrReply does for a bad integer too.
func nonNegative(c *Conn, arg []byte, msg string) (int64, bool) {
	n, ok := resp.ParseInt(arg)
	if !ok || n < 0 {
		c.w.Error(msg)
		return 0, false
	}
	return n, true
}

// listEnds parses LMOVE's and BLMOVE's LEFT|RIGHT LEFT|RIGHT, or answers
// a syntax error.
func listEnds(c *Conn, fromArg, toArg []byte) (from, to, ok bool) {
	if from, ok = listEnd(c, fromArg); !ok {
		return false, false, false
	}
	to, ok = listEnd(c, toArg)
	return from, to, ok
}

// listEnd parses LEFT or RIGHT, or answers a syntax error; left says
// which.
func listEnd(c *Conn, arg []byte) (left, ok bool) {
	switch {
	case equalFold(arg, "left"):
		return true, true
	case equalFold(arg, "right"):
		return false, true
	}
	c.w.Error(errSyntax)
	return false, false
}

// cmdLMove implements LMOVE source destination LEFT|RIGHT LEFT|RIGHT.
func cmdLMove(c *Conn, args [][]byte) {
	from, to, ok := listEnds(c, args[3], args[4])
	if !ok {
		return
	}
	lmove(c, args[1], args[2], from, to)
}

// cmdRPopLPush implements RPOPLPUSH source destination: LMOVE source
// destination RIGHT LEFT.
func cmdRPopLPush(c *Conn, args [][]byte) { lmove(c, args[1], args[2], false, true) }

func lmove(c *Conn, src, dst []byte, from, to bool) {
	elem, found, err := c.srv.store.LMove(src, dst, from, to)
	writeBulkOrNil(c, elem, found, err)
}

// mpopArgs are LMPOP's and BLMPOP's arguments past the command (and
// BLMPOP's timeout): numkeys key [key ...] LEFT|RIGHT [COUNT count].
type mpopArgs struct {
	keys  [][]byte
	left  bool
	count int64
}

// parseMPop parses args, numkeys first, in Redis's order, or answers the
// error.
func parseMPop(c *Conn, args [][]byte) (m mpopArgs, ok bool) {
	numKeys, ok := resp.ParseInt(args[0])
	if !ok || numKeys < 1 {
		c.w.Error(errNumKeys)
		return m, false
	}
	if numKeys >= int64(len(args)-1) {
		c.w.Error(errSyntax)
		return m, false
	}
	m.keys = args[1 : 1+numKeys]
	if m.left, ok = listEnd(c, args[1+numKeys]); !ok {
		return m, false
	}
	m.count = -1
	for i := 2 + int(numKeys); i < len(args); i++ {
		if m.count != -1 || !equalFold(args[i], "count") || i+1 >= len(args) {
			c.w.Error(errSyntax)
			return m, false
		}
		i++
		if m.count, ok = resp.ParseInt(args[i]); !ok || m.count < 1 {
			c.w.Error("ERR count should be greater than 0")
			return m, false
		}
	}
	if m.count == -1 {
		m.count = 1
	}
	return m, true
}

// cmdLMPop implements LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT
// count]: the key popped from and its elements, or a null array.
func cmdLMPop(c *Conn, args [][]byte) {
	m, ok := parseMPop(c, args[1:])
	if !ok {
		return
	}
	key, popped, err := c.srv.store.LMPop(m.keys, int(min(m.count, maxListCount)), m.left)
	writeMPop(c, key, popped, err)
}

// writeMPop replies an LMPOP: the key and its elements, a null array if
// key is nil, or err.
func writeMPop(c *Conn, key []byte, popped [][]byte, err error) {
	switch {
	case err != nil:
		writeErr(c, err)
	case key == nil:
		c.w.NullArray()
	default:
		c.w.Array(2)
		c.w.Bulk(key)
		writeBulks(c, popped)
	}
}
