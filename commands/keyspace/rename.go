package keyspace

import (
	"bytes"
	"errors"
	"math"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdRename(c *commands.Ctx, args [][]byte)   { rename(c, args, false) }
func cmdRenameNX(c *commands.Ctx, args [][]byte) { rename(c, args, true) }

// rename implements RENAME and RENAMENX key newkey: the key keeps its TTL.
func rename(c *commands.Ctx, args [][]byte, nx bool) {
	moved, err := c.Store.Rename(args[1], args[2], nx)
	switch {
	case errors.Is(err, engine.ErrNoSuchKey):
		c.W.Error("ERR no such key")
	case err != nil:
		commands.WriteError(c.W, err)
	default:
		// Renaming a key to itself changes nothing, and Redis says nothing.
		if moved && !bytes.Equal(args[1], args[2]) {
			c.Notify(commands.EventGeneric, "rename_from", args[1])
			c.Notify(commands.EventGeneric, "rename_to", args[2])
		}
		if nx {
			c.W.Int(commands.BoolInt(moved))
		} else {
			c.W.OK()
		}
	}
}

// cmdCopy implements COPY source destination [DB destination-db]
// [REPLACE]. Only database 0 exists, so DB accepts only 0, as Redis with
// "databases 1" does.
func cmdCopy(c *commands.Ctx, args [][]byte) {
	replace := false
	for j := 3; j < len(args); j++ {
		switch {
		case resp.EqualFold(args[j], "replace"):
			replace = true
		case resp.EqualFold(args[j], "db") && j+1 < len(args):
			j++
			db, ok := resp.ParseInt(args[j])
			if !ok {
				c.W.Error(commands.ErrNotInteger)
				return
			}
			if db < math.MinInt32 || db > math.MaxInt32 {
				c.W.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
				return
			}
			if db != 0 {
				c.W.Error(commands.ErrDBRange)
				return
			}
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	if string(args[1]) == string(args[2]) {
		c.W.Error("ERR source and destination objects are the same")
		return
	}
	copied, err := c.Store.Copy(args[1], nil, args[2], replace)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if copied {
		c.Notify(commands.EventGeneric, "copy_to", args[2])
	}
	c.W.Int(commands.BoolInt(copied))
}
