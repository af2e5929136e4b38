package keyspace

import (
	"bytes"
	"math"
	"math/bits"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// The bitmap commands, after Redis's bitops.c: bit 0 is the most
// significant bit of the first byte, and a missing key is an endless run of
// zero bits.

// Error texts of the bitmap commands.
const (
	errBitOffset    = "ERR bit offset is not an integer or out of range"
	errBitValue     = "ERR bit is not an integer or out of range"
	errBitfieldType = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
)

// bitOffset parses a bit offset as Redis's getBitOffsetFromArgument does.
// With width > 0 (BITFIELD) an offset "#n" means n*width, multiplied with
// C's wrap-around. The offset's byte must lie within proto-max-bulk-len.
func bitOffset(c *commands.Ctx, arg []byte, width int) (uint64, bool) {
	hash := width > 0 && len(arg) > 0 && arg[0] == '#'
	if hash {
		arg = arg[1:]
	}
	n, ok := resp.ParseInt(arg)
	if hash {
		n *= int64(width)
	}
	if !ok || n < 0 || n>>3 >= c.Client.MaxBulk() {
		c.W.Error(errBitOffset)
		return 0, false
	}
	return uint64(n), true
}

// cmdSetBit implements SETBIT key offset 0|1 and replies with the bit's
// previous value.
func cmdSetBit(c *commands.Ctx, args [][]byte) {
	offset, ok := bitOffset(c, args[2], 0)
	if !ok {
		return
	}
	on, ok := resp.ParseInt(args[3])
	if !ok || on&^1 != 0 {
		c.W.Error(errBitValue)
		return
	}
	byteIdx, mask := offset>>3, byte(0x80)>>(offset&7)
	var was, changed bool
	// The offset's byte is within proto-max-bulk-len, so it fits an int.
	_, err := c.Store.Grow(args[1], func(old []byte, exists bool) (int, error) {
		was = byteIdx < uint64(len(old)) && old[byteIdx]&mask != 0
		// Redis's "setbit" event: the key was made or grew, or the bit
		// flipped.
		changed = !exists || byteIdx >= uint64(len(old)) || was != (on == 1)
		return int(byteIdx) + 1, nil
	}, func(v []byte) bool {
		if on == 1 {
			v[byteIdx] |= mask
		} else {
			v[byteIdx] &^= mask
		}
		return was != (on == 1)
	})
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	if changed {
		c.Notify(commands.EventString, "setbit", args[1])
	}
	c.W.Int(commands.BoolInt(was))
}

// cmdGetBit implements GETBIT key offset.
func cmdGetBit(c *commands.Ctx, args [][]byte) {
	offset, ok := bitOffset(c, args[2], 0)
	if !ok {
		return
	}
	v, _, ok := readString(c, args[1])
	if !ok {
		return
	}
	byteIdx := offset >> 3
	c.W.Int(commands.BoolInt(byteIdx < uint64(len(v)) && v[byteIdx]&(0x80>>(offset&7)) != 0))
}

// bitRange resolves BITCOUNT's and BITPOS's start and end, negative ones
// counting from the end, in bytes or (isBit) in bits, to an inclusive range
// of bytes and masks of the bits of its first and last byte that lie
// outside it. It reports false for an empty range. n is the string's
// length in bytes.
func bitRange(start, end, n int64, isBit bool) (first, last int64, firstMask, lastMask byte, ok bool) {
	total := n
	if isBit {
		total <<= 3
	}
	if start < 0 {
		start = max(total+start, 0)
	}
	if end < 0 {
		end = max(total+end, 0)
	}
	end = min(end, total-1)
	if start > end {
		return 0, 0, 0, 0, false
	}
	if isBit {
		firstMask = ^byte(0xff >> (start & 7))
		lastMask = byte(1<<(7-(end&7))) - 1
		start, end = start>>3, end>>3
	}
	return start, end, firstMask, lastMask, true
}

// cmdBitCount implements BITCOUNT key [start end [BYTE|BIT]]. As in Redis
// 7.0 and 7.2, a missing key counts 0 before the range is read.
func cmdBitCount(c *commands.Ctx, args [][]byte) {
	v, exists, ok := readString(c, args[1])
	if !ok {
		return
	}
	if !exists {
		c.W.Int(0)
		return
	}
	first, last := int64(0), int64(len(v))-1
	var firstMask, lastMask byte
	switch len(args) {
	case 2:
	case 4, 5:
		start, ok1 := resp.ParseInt(args[2])
		end, ok2 := resp.ParseInt(args[3])
		if !ok1 || !ok2 {
			c.W.Error(commands.ErrNotInteger)
			return
		}
		if start < 0 && end < 0 && start > end {
			c.W.Int(0)
			return
		}
		isBit, ok := bitUnit(args[4:])
		if !ok {
			c.W.Error(commands.ErrSyntax)
			return
		}
		if first, last, firstMask, lastMask, ok = bitRange(start, end, int64(len(v)), isBit); !ok {
			c.W.Int(0)
			return
		}
	default:
		c.W.Error(commands.ErrSyntax)
		return
	}
	if first > last {
		c.W.Int(0)
		return
	}
	n := popcount(v[first : last+1])
	n -= bits.OnesCount8(v[first]&firstMask) + bits.OnesCount8(v[last]&lastMask)
	c.W.Int(int64(n))
}

// bitUnit reads an optional BYTE or BIT argument and reports whether it
// says BIT.
func bitUnit(opt [][]byte) (isBit, ok bool) {
	switch {
	case len(opt) == 0, resp.EqualFold(opt[0], "byte"):
		return false, true
	case resp.EqualFold(opt[0], "bit"):
		return true, true
	}
	return false, false
}

func popcount(b []byte) int {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
		b = b[8:]
	}
	for _, x := range b {
		n += bits.OnesCount8(x)
	}
	return n
}

// cmdBitPos implements BITPOS key 0|1 [start [end [BYTE|BIT]]].
func cmdBitPos(c *commands.Ctx, args [][]byte) {
	bit, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	if bit != 0 && bit != 1 {
		c.W.Error("ERR The bit argument must be 1 or 0.")
		return
	}
	v, exists, ok := readString(c, args[1])
	if !ok {
		return
	}
	if !exists {
		// An endless run of zero bits: the first 0 is at 0, no 1 anywhere.
		c.W.Int(-bit)
		return
	}
	n := int64(len(v))
	first, last := int64(0), n-1
	var firstMask, lastMask byte
	endGiven := false
	switch len(args) {
	case 3:
	case 4, 5, 6:
		start, ok := resp.ParseInt(args[3])
		if !ok {
			c.W.Error(commands.ErrNotInteger)
			return
		}
		isBit, ok := bitUnit(args[min(len(args), 5):])
		if !ok {
			c.W.Error(commands.ErrSyntax)
			return
		}
		end := n - 1
		if isBit {
			end = n<<3 + 7
		}
		if len(args) >= 5 {
			if end, ok = resp.ParseInt(args[4]); !ok {
				c.W.Error(commands.ErrNotInteger)
				return
			}
			endGiven = true
		}
		if first, last, firstMask, lastMask, ok = bitRange(start, end, n, isBit); !ok {
			c.W.Int(-1)
			return
		}
	default:
		c.W.Error(commands.ErrSyntax)
		return
	}
	if first > last {
		c.W.Int(-1) // an empty string: no bit at all
		return
	}
	// The bits outside the range are made the opposite of the one looked
	// for, so they are never found.
	r := bytes.Clone(v[first : last+1])
	flip := func(i int, outside byte) {
		if bit == 1 {
			r[i] &^= outside
		} else {
			r[i] |= outside
		}
	}
	flip(0, firstMask)
	flip(len(r)-1, lastMask)
	pos := findBit(r, bit == 1)
	if pos < 0 && bit == 0 && !endGiven && lastMask == 0 {
		// Without an end, the string goes on in zero bits.
		pos = int64(len(r)) << 3
	}
	if pos >= 0 {
		pos += first << 3
	}
	c.W.Int(pos)
}

// findBit returns the position of the first bit of b equal to one, or -1.
func findBit(b []byte, one bool) int64 {
	for i, x := range b {
		if !one {
			x = ^x
		}
		if x != 0 {
			return int64(i)<<3 + int64(bits.LeadingZeros8(x))
		}
	}
	return -1
}

// cmdBitOp implements BITOP AND|OR|XOR|NOT destkey key [key ...]. The
// result is as long as the longest source, shorter ones padded with zero
// bytes; an empty result deletes destkey.
func cmdBitOp(c *commands.Ctx, args [][]byte) {
	op := args[1]
	var combine func(acc, x byte) byte
	switch {
	case resp.EqualFold(op, "and"):
		combine = func(acc, x byte) byte { return acc & x }
	case resp.EqualFold(op, "or"):
		combine = func(acc, x byte) byte { return acc | x }
	case resp.EqualFold(op, "xor"):
		combine = func(acc, x byte) byte { return acc ^ x }
	case resp.EqualFold(op, "not"):
		if len(args) != 4 {
			c.W.Error("ERR BITOP NOT must be called with a single source key.")
			return
		}
	default:
		c.W.Error(commands.ErrSyntax)
		return
	}
	// The sources are read and the result written at one instant, as in
	// Redis.
	n, existed, err := c.Store.Derive(args[2], args[3:], readMode(c), func(srcs [][]byte) []byte {
		longest := 0
		for _, src := range srcs {
			longest = max(longest, len(src))
		}
		if longest == 0 {
			return nil
		}
		res := make([]byte, longest)
		copy(res, srcs[0])
		if combine == nil {
			for i := range res {
				res[i] = ^res[i]
			}
		}
		for _, src := range srcs[1:] {
			for i := range res {
				var x byte
				if i < len(src) {
					x = src[i]
				}
				res[i] = combine(res[i], x)
			}
		}
		return res
	})
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
		return
	case n > 0:
		c.Notify(commands.EventString, "set", args[2])
	case existed:
		c.Notify(commands.EventGeneric, "del", args[2])
	}
	c.W.Int(int64(n))
}

// Overflow behaviours of BITFIELD.
const (
	overflowWrap = iota
	overflowSat
	overflowFail
)

// bitfieldOp is one GET, SET or INCRBY of a BITFIELD call.
type bitfieldOp struct {
	op       byte // 'g', 's' or 'i'
	signed   bool
	width    uint64
	offset   uint64
	value    int64 // SET's value or INCRBY's increment
	overflow int
}

// bitfieldType parses a type such as i16 or u8: signed up to 64 bits,
// unsigned up to 63. Redis reads it as a C string, so a NUL byte ends it.
func bitfieldType(arg []byte) (signed bool, width uint64, ok bool) {
	if i := bytes.IndexByte(arg, 0); i >= 0 {
		arg = arg[:i]
	}
	if len(arg) == 0 || arg[0] != 'i' && arg[0] != 'u' {
		return false, 0, false
	}
	signed = arg[0] == 'i'
	n, ok := resp.ParseInt(arg[1:])
	if !ok || n < 1 || n > 64 || !signed && n > 63 {
		return false, 0, false
	}
	return signed, uint64(n), true
}

// parseBitfield parses BITFIELD's operations as Redis does, replying with
// the first error. It reports whether any operation writes.
func parseBitfield(c *commands.Ctx, args [][]byte) (ops []bitfieldOp, writes, ok bool) {
	overflow := overflowWrap
	for j := 2; j < len(args); j++ {
		rest := len(args) - j - 1
		var op bitfieldOp
		switch a := args[j]; {
		case resp.EqualFold(a, "get") && rest >= 2:
			op.op = 'g'
		case resp.EqualFold(a, "set") && rest >= 3:
			op.op = 's'
		case resp.EqualFold(a, "incrby") && rest >= 3:
			op.op = 'i'
		case resp.EqualFold(a, "overflow") && rest >= 1:
			j++
			switch t := args[j]; {
			case resp.EqualFold(t, "wrap"):
				overflow = overflowWrap
			case resp.EqualFold(t, "sat"):
				overflow = overflowSat
			case resp.EqualFold(t, "fail"):
				overflow = overflowFail
			default:
				c.W.Error("ERR Invalid OVERFLOW type specified")
				return nil, false, false
			}
			continue
		default:
			c.W.Error(commands.ErrSyntax)
			return nil, false, false
		}
		var typeOK bool
		if op.signed, op.width, typeOK = bitfieldType(args[j+1]); !typeOK {
			c.W.Error(errBitfieldType)
			return nil, false, false
		}
		if op.offset, ok = bitOffset(c, args[j+2], int(op.width)); !ok {
			return nil, false, false
		}
		if op.op != 'g' {
			writes = true
			if op.value, ok = resp.ParseInt(args[j+3]); !ok {
				c.W.Error(commands.ErrNotInteger)
				return nil, false, false
			}
			j++
		}
		op.overflow = overflow
		ops = append(ops, op)
		j += 2
	}
	return ops, writes, true
}

// bitfieldResult is one reply element of BITFIELD: a number, or nil for
// an operation that OVERFLOW FAIL stopped.
type bitfieldResult struct {
	n   int64
	nil bool
	// changed: a SET or INCRBY wrote a field a value other than its own.
	changed bool
}

func cmdBitField(c *commands.Ctx, args [][]byte)   { bitfield(c, args, false) }
func cmdBitFieldRO(c *commands.Ctx, args [][]byte) { bitfield(c, args, true) }

// bitfield implements BITFIELD and BITFIELD_RO. Operations run in order on
// the value; one that writes makes the key at least as long as the
// furthest bit any operation writes, even if OVERFLOW FAIL stops it.
func bitfield(c *commands.Ctx, args [][]byte, readonly bool) {
	ops, writes, ok := parseBitfield(c, args)
	if !ok {
		return
	}
	results := make([]bitfieldResult, len(ops))
	if !writes {
		v, _, ok := readString(c, args[1])
		if !ok {
			return
		}
		for i, op := range ops {
			results[i].n = op.get(v)
		}
	} else {
		if readonly {
			c.W.Error("ERR BITFIELD_RO only supports the GET subcommand")
			return
		}
		var need uint64
		for _, op := range ops {
			if op.op != 'g' {
				need = max(need, (op.offset+op.width-1)>>3+1)
			}
		}
		// Redis 7.0's "setbit": the key was made or grew, or some SET or
		// INCRBY changed a field (none that overflowed with FAIL).
		var changed bool
		_, err := c.Store.Grow(args[1], func(old []byte, exists bool) (int, error) {
			changed = !exists || need > uint64(len(old))
			return int(need), nil
		}, func(v []byte) bool {
			edited := false
			for i, op := range ops {
				results[i] = op.apply(v)
				edited = edited || results[i].changed
			}
			changed = changed || edited
			return edited
		})
		if err != nil {
			commands.WriteError(c.W, err)
			return
		}
		if changed {
			c.Notify(commands.EventString, "setbit", args[1])
		}
	}
	c.W.Array(len(results))
	for _, r := range results {
		if r.nil {
			c.W.Null()
		} else {
			c.W.Int(r.n)
		}
	}
}

// get reads the field from v, which may be shorter than the field: bits
// past its end are zero.
func (op bitfieldOp) get(v []byte) int64 {
	var buf [9]byte
	start := op.offset >> 3
	if start < uint64(len(v)) {
		copy(buf[:], v[start:])
	}
	u := getBits(buf[:], op.offset&7, op.width)
	if op.signed {
		return signExtend(u, op.width)
	}
	return int64(u)
}

// apply runs a GET, SET or INCRBY on v, which is long enough for every
// field written.
func (op bitfieldOp) apply(v []byte) bitfieldResult {
	if op.op == 'g' {
		return bitfieldResult{n: op.get(v)}
	}
	oldU := getBits(v, op.offset, op.width)
	var newU uint64
	var reply int64
	var overflow bool
	if op.signed {
		old := signExtend(oldU, op.width)
		var next int64
		if op.op == 'i' {
			next, overflow = signedOverflow(old, op.value, op.width, op.overflow)
			reply = next
		} else {
			next, overflow = signedOverflow(op.value, 0, op.width, op.overflow)
			reply = old
		}
		newU = uint64(next)
	} else {
		if op.op == 'i' {
			newU, overflow = unsignedOverflow(oldU, op.value, op.width, op.overflow)
			reply = int64(newU)
		} else {
			newU, overflow = unsignedOverflow(uint64(op.value), 0, op.width, op.overflow)
			reply = int64(oldU)
		}
	}
	if overflow && op.overflow == overflowFail {
		return bitfieldResult{nil: true}
	}
	newU &= ^uint64(0) >> (64 - op.width)
	setBits(v, op.offset, op.width, newU)
	return bitfieldResult{n: reply, changed: newU != oldU}
}

// getBits reads width bits of p from bit offset on as an unsigned number.
func getBits(p []byte, offset, width uint64) uint64 {
	var u uint64
	for j := uint64(0); j < width; j++ {
		bit := offset + j
		u = u<<1 | uint64(p[bit>>3]>>(7-bit&7)&1)
	}
	return u
}

// setBits writes the low width bits of u into p from bit offset on.
func setBits(p []byte, offset, width, u uint64) {
	for j := uint64(0); j < width; j++ {
		bit := offset + j
		mask := byte(0x80) >> (bit & 7)
		if u>>(width-1-j)&1 != 0 {
			p[bit>>3] |= mask
		} else {
			p[bit>>3] &^= mask
		}
	}
}

// signExtend reads the low width bits of u as a two's complement number.
func signExtend(u, width uint64) int64 {
	if width < 64 {
		u &= 1<<width - 1
		if u&(1<<(width-1)) != 0 {
			u |= math.MaxUint64 << width
		}
	}
	return int64(u)
}

// unsignedOverflow adds incr to value, an unsigned field of width bits, as
// Redis's checkUnsignedBitfieldOverflow does, and returns the value to
// store and whether it overflowed. With overflowFail the value is unused.
func unsignedOverflow(value uint64, incr int64, width uint64, behaviour int) (uint64, bool) {
	maxVal := uint64(1)<<width - 1
	maxIncr := int64(maxVal - value)
	minIncr := int64(-value)
	switch {
	case value > maxVal || incr > 0 && incr > maxIncr:
		if behaviour == overflowSat {
			return maxVal, true
		}
	case incr < 0 && incr < minIncr:
		if behaviour == overflowSat {
			return 0, true
		}
	default:
		return value + uint64(incr), false
	}
	return (value + uint64(incr)) & maxVal, true
}

// signedOverflow is unsignedOverflow for a signed field, as Redis's
// checkSignedBitfieldOverflow: wrapping keeps the low width bits.
func signedOverflow(value, incr int64, width uint64, behaviour int) (int64, bool) {
	maxVal := int64(math.MaxInt64)
	if width < 64 {
		maxVal = 1<<(width-1) - 1
	}
	minVal := -maxVal - 1
	maxIncr := int64(uint64(maxVal) - uint64(value))
	minIncr := minVal - value
	switch {
	case value > maxVal || width != 64 && incr > maxIncr || value >= 0 && incr > 0 && incr > maxIncr:
		if behaviour == overflowSat {
			return maxVal, true
		}
	case value < minVal || width != 64 && incr < minIncr || value < 0 && incr < 0 && incr < minIncr:
		if behaviour == overflowSat {
			return minVal, true
		}
	default:
		return value + incr, false
	}
	return signExtend(uint64(value)+uint64(incr), width), true
}

// bitfieldKeys is BITFIELD's access, as Redis's bitfieldGetKeys finds it:
// a read of the key when every operation is a GET (or OVERFLOW), else a
// read and write; a malformed one counts as a write.
func bitfieldKeys(args [][]byte) commands.KeyAccess {
	for i := 2; i < len(args); i++ {
		rest := len(args) - i - 1
		switch {
		case resp.EqualFold(args[i], "get") && rest >= 2:
			i += 2
		case resp.EqualFold(args[i], "overflow") && rest >= 1:
			i++
		default:
			return commands.KeysReadWrite
		}
	}
	return commands.KeysRead
}

// bitmapCommands are the bitmap commands, for the family's table
// (Commands).
func bitmapCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "setbit", Arity: 4, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdSetBit,
			Group:   "bitmap",
			Summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.",
			Usage:   "key offset value", Since: "2.2.0"},
		{Name: "getbit", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdGetBit,
			Group: "bitmap", Summary: "Returns a bit value by offset.", Usage: "key offset", Since: "2.2.0"},
		{Name: "bitcount", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdBitCount,
			Group: "bitmap", Summary: "Counts the number of set bits (population counting) in a string.",
			Usage: "key [start end [BYTE|BIT]]", Since: "2.6.0"},
		{Name: "bitpos", Arity: -3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdBitPos,
			Group: "bitmap", Summary: "Finds the first set (1) or clear (0) bit in a string.",
			Usage: "key bit [start [end [BYTE|BIT]]]", Since: "2.8.7"},
		{Name: "bitop", Arity: -4, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 2, LastKey: -1, Step: 1, Handler: cmdBitOp, Access: commands.KeysDestFirst,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(2, commands.KOW|commands.KUpdate),
				{Flags: commands.KRO | commands.KAccess, Index: 3, LastKey: -1},
			},
			Group: "bitmap", Summary: "Performs bitwise operations on multiple strings, and stores the result.",
			Usage: "(AND|OR|XOR|NOT) destkey key [key ...]", Since: "2.6.0"},
		{Name: "bitfield", Arity: -2, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdBitField, VarAccess: bitfieldKeys,
			KeySpecs: []commands.KeySpec{
				{Notes: "This command allows both access and modification of the key",
					Flags: commands.KRW | commands.KAccess | commands.KUpdate | commands.KVariableFlags, Index: 1},
			},
			Group: "bitmap", Summary: "Performs arbitrary bitfield integer operations on strings.",
			Usage: "key [GET encoding offset] [SET encoding offset value] [INCRBY encoding offset increment] " +
				"[OVERFLOW (WRAP|SAT|FAIL)]",
			Since: "3.2.0"},
		{Name: "bitfield_ro", Arity: -2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdBitFieldRO,
			Group: "bitmap", Summary: "Performs arbitrary read-only bitfield integer operations on strings.",
			Usage: "key [GET encoding offset [GET encoding offset ...]]", Since: "6.0.0"},
	}
}
