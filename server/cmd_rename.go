package server

import (
	"errors"
	"math"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdRename(c *Conn, args [][]byte)   { rename(c, args, false) }
func cmdRenameNX(c *Conn, args [][]byte) { rename(c, args, true) }

// rename implements RENAME and RENAMENX key newkey: the key keeps its TTL.
func rename(c *Conn, args [][]byte, nx bool) {
	moved, err := c.srv.store.Rename(args[1], args[2], nx)
	switch {
	case errors.Is(err, engine.ErrNoSuchKey):
		c.w.Error("ERR no such key")
	case err != nil:
		writeErr(c, err)
	case nx:
		c.w.Int(boolInt(moved))
	default:
		c.w.OK()
	}
}

// cmdCopy implements COPY source destination [DB destination-db]
// [REPLACE]. Only database 0 exists, so DB accepts only 0, as Redis with
// "databases 1" does.
func cmdCopy(c *Conn, args [][]byte) {
	replace := false
	for j := 3; j < len(args); j++ {
		switch {
		case equalFold(args[j], "replace"):
			replace = true
		case equalFold(args[j], "db") && j+1 < len(args):
			j++
			db, ok := resp.ParseInt(args[j])
			if !ok {
				c.w.Error(errNotInteger)
				return
			}
			if db < math.MinInt32 || db > math.MaxInt32 {
				c.w.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
				return
			}
			if db != 0 {
				c.w.Error(errDBRange)
				return
			}
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	if string(args[1]) == string(args[2]) {
		c.w.Error("ERR source and destination objects are the same")
		return
	}
	copied, err := c.srv.store.Copy(args[1], args[2], replace)
	if err != nil {
		writeErr(c, err)
		return
	}
	c.w.Int(boolInt(copied))
}
