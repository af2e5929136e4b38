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
// [REPLACE].
func cmdCopy(c *commands.Ctx, args [][]byte) {
	replace := false
	to := c.Store
	for j := 3; j < len(args); j++ {
		switch {
		case resp.EqualFold(args[j], "replace"):
			replace = true
		case resp.EqualFold(args[j], "db") && j+1 < len(args):
			j++
			var ok bool
			if to, ok = parseDB(c, args[j], commands.ErrNotInteger, commands.ErrInt32Range); !ok {
				return
			}
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	if to == c.Store && string(args[1]) == string(args[2]) {
		c.W.Error(errSameObject)
		return
	}
	copied, err := c.Store.Copy(args[1], to, args[2], replace)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if copied {
		c.NotifyIn(to, commands.EventGeneric, "copy_to", args[2])
	}
	c.W.Int(commands.BoolInt(copied))
}

// errSameObject is COPY's and MOVE's refusal to write a key over itself.
const errSameObject = "ERR source and destination objects are the same"

// cmdMove implements MOVE key db: the key, with its deadline, goes to the
// other database unless the key is there already.
func cmdMove(c *commands.Ctx, args [][]byte) {
	to, ok := parseDB(c, args[2], commands.ErrNotInteger, commands.ErrInt32Range)
	if !ok {
		return
	}
	if to == c.Store {
		c.W.Error(errSameObject)
		return
	}
	moved, err := c.Store.Move(args[1], to)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if moved {
		c.Notify(commands.EventGeneric, "move_from", args[1])
		c.NotifyIn(to, commands.EventGeneric, "move_to", args[1])
	}
	c.W.Int(commands.BoolInt(moved))
}

// parseDB reads a database's number for COPY, MOVE and SWAPDB, answering
// notInt for one that is no integer, outOfRange for one past 32 bits and
// ErrDBRange for one the store lacks.
func parseDB(c *commands.Ctx, arg []byte, notInt, outOfRange string) (*engine.Store, bool) {
	n, ok := resp.ParseInt(arg)
	switch {
	case !ok:
		c.W.Error(notInt)
		return nil, false
	case n < math.MinInt32 || n > math.MaxInt32:
		c.W.Error(outOfRange)
		return nil, false
	}
	db := c.Store.DB(int(n))
	if db == nil {
		c.W.Error(commands.ErrDBRange)
		return nil, false
	}
	return db, true
}

// SWAPDB's refusals of an index that is no 32-bit integer.
const (
	errFirstDB  = "ERR invalid first DB index"
	errSecondDB = "ERR invalid second DB index"
)

// cmdSwapDB implements SWAPDB index1 index2.
func cmdSwapDB(c *commands.Ctx, args [][]byte) {
	a, ok := parseDB(c, args[1], errFirstDB, errFirstDB)
	if !ok {
		return
	}
	b, ok := parseDB(c, args[2], errSecondDB, errSecondDB)
	if !ok {
		return
	}
	c.Store.SwapDB(a.Index(), b.Index())
	c.W.OK()
}
