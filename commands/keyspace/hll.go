package keyspace

import (
	"strconv"
	"strings"

	"github.com/stampedeless/stampedeless/commands"
)

// cmdPFAdd implements PFADD key [element ...]: 1 if the HLL changed or was
// created, else 0.
func cmdPFAdd(c *commands.Ctx, args [][]byte) {
	changed, err := c.Store.PFAdd(args[1], args[2:])
	if err == nil && changed {
		c.Notify(commands.EventString, "pfadd", args[1])
	}
	writeIntOrErr(c, commands.BoolInt(changed), err)
}

// cmdPFCount implements PFCOUNT key [key ...].
func cmdPFCount(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.PFCount(args[1:])
	writeIntOrErr(c, n, err)
}

// cmdPFMerge implements PFMERGE destkey [sourcekey ...].
func cmdPFMerge(c *commands.Ctx, args [][]byte) {
	if err := c.Store.PFMerge(args[1], args[2:]); err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.Notify(commands.EventString, "pfadd", args[1])
	c.W.OK()
}

// cmdPFDebug implements PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. As in
// Redis, the key is looked at before the subcommand.
func cmdPFDebug(c *commands.Ctx, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	d, err := c.Store.PFDebug(args[2], sub == "getreg" || sub == "todense")
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	switch sub {
	case "getreg":
		c.W.Array(len(d.Registers))
		for _, r := range d.Registers {
			c.W.Int(int64(r))
		}
	case "todense":
		c.W.Int(commands.BoolInt(d.Converted))
	case "encoding":
		if d.Sparse {
			c.W.Status("sparse")
		} else {
			c.W.Status("dense")
		}
	case "decode":
		if !d.Sparse {
			c.W.Error("ERR HLL encoding is not sparse")
			return
		}
		var b []byte
		for i, op := range d.Opcodes {
			if i > 0 {
				b = append(b, ' ')
			}
			switch {
			case op.Long:
				b = append(b, "Z:"...)
			case op.Zero:
				b = append(b, "z:"...)
			default:
				b = strconv.AppendInt(append(b, "v:"...), int64(op.Value), 10)
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(op.Len), 10)
		}
		c.W.Bulk(b)
	default:
		c.W.Error("ERR Unknown PFDEBUG subcommand '" + string(args[1]) + "'")
	}
}

// cmdPFSelfTest implements PFSELFTEST: the HLL code's checks of itself.
func cmdPFSelfTest(c *commands.Ctx, _ [][]byte) {
	if err := c.Store.PFSelfTest(); err != nil {
		c.W.Error("TESTFAILED " + err.Error())
		return
	}
	c.W.OK()
}

// hyperLogLogCommands are the HyperLogLog commands, for the family's table
// (Commands).
func hyperLogLogCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "pfadd", Arity: -2, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdPFAdd, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KInsert)},
			Group:    "hyperloglog", Summary: "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.",
			Usage: "key [element [element ...]]", Since: "2.8.9"},
		{Name: "pfcount", Arity: -2, Flags: commands.Readonly | commands.MayReplicate,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdPFCount,
			KeySpecs: []commands.KeySpec{
				{Notes: "RW because it may change the internal representation of the key, and propagate to replicas",
					Flags: commands.KRW | commands.KAccess, Index: 1, LastKey: -1},
			},
			Group:   "hyperloglog",
			Summary: "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).",
			Usage:   "key [key ...]", Since: "2.8.9"},
		{Name: "pfmerge", Arity: -2, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: -1, Step: 1, Handler: cmdPFMerge, Access: commands.KeysMerge,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KInsert),
				{Flags: commands.KRO | commands.KAccess, Index: 2, LastKey: -1},
			},
			Group: "hyperloglog", Summary: "Merges one or more HyperLogLog values into a single key.",
			Usage: "destkey [sourcekey [sourcekey ...]]", Since: "2.8.9"},
		{Name: "pfdebug", Arity: 3, Flags: commands.Write | commands.DenyOOM | commands.Admin,
			FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdPFDebug, Access: commands.KeysRead,
			KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRW|commands.KAccess)},
			Group:    "hyperloglog", Summary: "Internal commands for debugging HyperLogLog values.",
			Usage: "subcommand key", Since: "2.8.9"},
		{Name: "pfselftest", Arity: 1, Flags: commands.Admin,
			Handler: cmdPFSelfTest,
			Group:   "hyperloglog", Summary: "An internal command for testing HyperLogLog values.", Since: "2.8.9"},
	}
}
