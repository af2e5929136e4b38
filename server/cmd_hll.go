package server

import (
	"strconv"
	"strings"
)

// cmdPFAdd implements PFADD key [element ...]: 1 if the HLL changed or was
// created, else 0.
func cmdPFAdd(c *Conn, args [][]byte) {
	changed, err := c.srv.store.PFAdd(args[1], args[2:])
	writeIntOrErr(c, boolInt(changed), err)
}

// cmdPFCount implements PFCOUNT key [key ...].
func cmdPFCount(c *Conn, args [][]byte) {
	n, err := c.srv.store.PFCount(args[1:])
	writeIntOrErr(c, n, err)
}

// cmdPFMerge implements PFMERGE destkey [sourcekey ...].
func cmdPFMerge(c *Conn, args [][]byte) {
	if err := c.srv.store.PFMerge(args[1], args[2:]); err != nil {
		writeErr(c, err)
		return
	}
	c.w.OK()
}

// cmdPFDebug implements PFDEBUG GETREG|DECODE|ENCODING|TODENSE key. As in
// Redis, the key is looked at before the subcommand.
func cmdPFDebug(c *Conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	d, err := c.srv.store.PFDebug(args[2], sub == "getreg" || sub == "todense")
	if err != nil {
		writeErr(c, err)
		return
	}
	switch sub {
	case "getreg":
		c.w.Array(len(d.Registers))
		for _, r := range d.Registers {
			c.w.Int(int64(r))
		}
	case "todense":
		c.w.Int(boolInt(d.Converted))
	case "encoding":
		if d.Sparse {
			c.w.Status("sparse")
		} else {
			c.w.Status("dense")
		}
	case "decode":
		if !d.Sparse {
			c.w.Error("ERR HLL encoding is not sparse")
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
		c.w.Bulk(b)
	default:
		c.w.Error("ERR Unknown PFDEBUG subcommand '" + string(args[1]) + "'")
	}
}

// cmdPFSelfTest implements PFSELFTEST: the HLL code's checks of itself.
func cmdPFSelfTest(c *Conn, _ [][]byte) {
	if err := c.srv.store.PFSelfTest(); err != nil {
		c.w.Error("TESTFAILED " + err.Error())
		return
	}
	c.w.OK()
}
