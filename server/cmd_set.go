package server

import (
	"strconv"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The set commands (Redis's t_set.c): argument checks, their order and
// the reply shapes are Redis 7's; the engine does the rest atomically.

// Errors of the set commands' counts, as Redis words them.
const (
	errPositiveCount = "ERR value is out of range, must be positive"
	errNumKeys       = "ERR numkeys should be greater than 0"
)

// maxRandomDraws bounds SRANDMEMBER's negative count, which Redis streams
// to the client however large it is, while a reply here is built whole
// before it is sent.
const maxRandomDraws = 1 << 24

func cmdSAdd(c *Conn, args [][]byte) {
	n, err := c.srv.store.SAdd(args[1], args[2:])
	writeIntOrErr(c, int64(n), err)
}

func cmdSRem(c *Conn, args [][]byte) {
	n, err := c.srv.store.SRem(args[1], args[2:])
	writeIntOrErr(c, int64(n), err)
}

func cmdSCard(c *Conn, args [][]byte) {
	n, err := c.srv.store.SCard(args[1])
	writeIntOrErr(c, int64(n), err)
}

// writeIntOrErr replies err if there is one, else n.
func writeIntOrErr(c *Conn, n int64, err error) {
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(n)
}

func cmdSIsMember(c *Conn, args [][]byte) {
	has, err := c.srv.store.SIsMember(args[1], args[2:])
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(boolInt(has[0]))
}

func cmdSMIsMember(c *Conn, args [][]byte) {
	has, err := c.srv.store.SIsMember(args[1], args[2:])
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Array(len(has))
	for _, h := range has {
		c.w.Int(boolInt(h))
	}
}

// writeSet replies members as a set (an array in RESP2), or err.
func writeSet(c *Conn, members [][]byte, err error) {
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Set(len(members))
	for _, m := range members {
		c.w.Bulk(m)
	}
}

func cmdSMembers(c *Conn, args [][]byte) {
	members, err := c.srv.store.SMembers(args[1])
	writeSet(c, members, err)
}

// cmdSPop implements SPOP key [count]: with a count, a set of the members
// popped (empty if key is missing); without, one member or nil.
func cmdSPop(c *Conn, args [][]byte) {
	switch len(args) {
	case 2:
		popped, err := c.srv.store.SPop(args[1], 1)
		writeOneOrNil(c, popped, err)
	case 3:
		count, ok := resp.ParseInt(args[2])
		if !ok || count < 0 {
			c.w.Error(errPositiveCount)
			return
		}
		popped, err := c.srv.store.SPop(args[1], count)
		writeSet(c, popped, err)
	default:
		c.w.Error(errSyntax)
	}
}

// writeOneOrNil replies the one member of members, nil if there is none,
// or err.
func writeOneOrNil(c *Conn, members [][]byte, err error) {
	switch {
	case err != nil:
		writeErr(c, err)
	case len(members) == 0:
		c.w.Null()
	default:
		c.w.Bulk(members[0])
	}
}

// cmdSRandMember implements SRANDMEMBER key [count]: with a count, an
// array of distinct members (count >= 0) or of -count independent draws;
// without, one member or nil.
func cmdSRandMember(c *Conn, args [][]byte) {
	switch len(args) {
	case 2:
		members, _, err := c.srv.store.SRandMember(args[1], 1)
		writeOneOrNil(c, members, err)
	case 3:
		count, ok := resp.ParseInt(args[2])
		if !ok {
			c.w.Error(errNotInteger)
			return
		}
		if count < -maxRandomDraws {
			c.w.Error("ERR value is out of range, value must between " + strconv.Itoa(-maxRandomDraws) + " and 9223372036854775807")
			return
		}
		members, _, err := c.srv.store.SRandMember(args[1], count)
		if err != nil {
			writeErr(c, err)
			return
		}
		c.w.Array(len(members))
		for _, m := range members {
			c.w.Bulk(m)
		}
	default:
		c.w.Error(errSyntax)
	}
}

func cmdSMove(c *Conn, args [][]byte) {
	moved, err := c.srv.store.SMove(args[1], args[2], args[3])
	writeIntOrErr(c, boolInt(moved), err)
}

func cmdSInter(c *Conn, args [][]byte) { setCompute(c, engine.SetInter, args[1:]) }
func cmdSUnion(c *Conn, args [][]byte) { setCompute(c, engine.SetUnion, args[1:]) }
func cmdSDiff(c *Conn, args [][]byte)  { setCompute(c, engine.SetDiff, args[1:]) }

func setCompute(c *Conn, op engine.SetOp, keys [][]byte) {
	members, err := c.srv.store.SetCompute(op, keys)
	writeSet(c, members, err)
}

func cmdSInterStore(c *Conn, args [][]byte) { setStore(c, engine.SetInter, args) }
func cmdSUnionStore(c *Conn, args [][]byte) { setStore(c, engine.SetUnion, args) }
func cmdSDiffStore(c *Conn, args [][]byte)  { setStore(c, engine.SetDiff, args) }

func setStore(c *Conn, op engine.SetOp, args [][]byte) {
	n, err := c.srv.store.SetStore(op, args[1], args[2:])
	writeIntOrErr(c, int64(n), err)
}

// cmdSInterCard implements SINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdSInterCard(c *Conn, args [][]byte) {
	numKeys, ok := resp.ParseInt(args[1])
	if !ok || numKeys < 1 {
		c.w.Error(errNumKeys)
		return
	}
	if numKeys > int64(len(args)-2) {
		c.w.Error("ERR Number of keys can't be greater than number of args")
		return
	}
	var limit int64
	for i := 2 + int(numKeys); i < len(args); i++ {
		if !equalFold(args[i], "limit") || i+1 >= len(args) {
			c.w.Error(errSyntax)
			return
		}
		i++
		if limit, ok = resp.ParseInt(args[i]); !ok || limit < 0 {
			c.w.Error("ERR LIMIT can't be negative")
			return
		}
	}
	n, err := c.srv.store.SInterCard(args[2:2+numKeys], int(limit))
	writeIntOrErr(c, int64(n), err)
}

// cmdSScan implements SSCAN key cursor [MATCH pattern] [COUNT count]. As
// in Redis, a missing key answers an empty scan and another type
// -WRONGTYPE before the options are looked at.
func cmdSScan(c *Conn, args [][]byte) {
	cursor, pattern, count, ok := collScanArgs(c, args, engine.TypeSet)
	if !ok {
		return
	}
	next, members, err := c.srv.store.SScan(args[1], cursor, pattern, count)
	if err != nil {
		writeErr(c, err)
		return
	}
	writeScanReply(c, next, members)
}

// collScanArgs reads HSCAN's and SSCAN's arguments (key cursor [MATCH
// pattern] [COUNT count]) in Redis's order: the cursor, then the key,
// which must hold t (a missing key is answered an empty scan), then the
// options. ok is false if it replied.
func collScanArgs(c *Conn, args [][]byte, t engine.Type) (cursor uint64, pattern []byte, count int, ok bool) {
	if cursor, ok = parseCursor(args[2]); !ok {
		c.w.Error("ERR invalid cursor")
		return 0, nil, 0, false
	}
	switch held, found := c.srv.store.TypeOf(args[1]); {
	case !found:
		writeScanReply(c, 0, nil)
		return 0, nil, 0, false
	case held != t:
		c.w.Error(errWrongType)
		return 0, nil, 0, false
	}
	pattern, count, _, ok = scanOptions(c, args[3:], false)
	return cursor, pattern, count, ok
}

// writeScanReply replies a step of SSCAN and the like: the next cursor and
// the elements.
func writeScanReply(c *Conn, next uint64, elems [][]byte) {
	c.w.Array(2)
	c.w.BulkString(strconv.FormatUint(next, 10))
	c.w.Array(len(elems))
	for _, e := range elems {
		c.w.Bulk(e)
	}
}
