package scripting

import (
	"encoding/binary"
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The cmsgpack library Redis ships (lua-cmsgpack 0.4.0), written anew to
// its behaviour: numbers that are integers pack as the smallest integer
// type, others as a float when a float holds them exactly, else a
// double; tables whose keys are exactly 1..n pack as arrays, others as
// maps; tables nested deeper than 16 levels pack as nil; strings as
// str8/16/32 (fixstr below 32 bytes); other values as nil. Unpacking
// gives Lua numbers for every number type and refuses bin and ext.

const (
	msgpackMaxNesting = 16
	// luaMaxCStack is Lua 5.1's LUAI_MAXCSTACK: the most values a C
	// function may hold on its stack, which bounds how many values
	// cmsgpack.pack takes and cmsgpack.unpack returns.
	luaMaxCStack = 8000
)

func (s *state) openMsgpack() *lua.LTable {
	t := s.L.NewTable()
	s.setFuncs(t, map[string]lua.LGFunction{
		"pack":   s.msgpackPack,
		"unpack": func(L *lua.LState) int { return msgpackUnpack(L, "unpack", 0, 0) },
		"unpack_one": func(L *lua.LState) int {
			offset := optInteger(L, 2, "unpack_one", 0)
			L.SetTop(1)
			return msgpackUnpack(L, "unpack_one", 1, offset)
		},
		"unpack_limit": func(L *lua.LState) int {
			limit := checkInteger(L, 2, "unpack_limit")
			offset := optInteger(L, 3, "unpack_limit", 0)
			L.SetTop(1)
			return msgpackUnpack(L, "unpack_limit", limit, offset)
		},
	})
	t.RawSetString("_NAME", lua.LString("cmsgpack"))
	t.RawSetString("_VERSION", lua.LString("lua-cmsgpack 0.4.0"))
	t.RawSetString("_COPYRIGHT", lua.LString("Copyright (C) 2012, Salvatore Sanfilippo"))
	t.RawSetString("_DESCRIPTION", lua.LString("MessagePack C implementation for Lua"))
	return t
}

// checkInteger is luaL_checkinteger: a number, or a string that reads as
// one, truncated as C casts.
func checkInteger(L *lua.LState, i int, fname string) int64 {
	n, ok := luaNumber(L.Get(i))
	if !ok {
		argError(L, i, fname, "number expected, got "+typeName(L, i))
	}
	return toInt64(n)
}

// optInteger is luaL_optinteger: def when argument i is none or nil.
func optInteger(L *lua.LState, i int, fname string, def int64) int64 {
	if L.Get(i) == lua.LNil {
		return def
	}
	return checkInteger(L, i, fname)
}

// checkLString is luaL_checklstring: a string, or a number printed as Lua
// prints it.
func checkLString(L *lua.LState, i int, fname string) string {
	str, ok := luaString(L.Get(i))
	if !ok {
		argError(L, i, fname, "string expected, got "+typeName(L, i))
	}
	return str
}

func (s *state) msgpackPack(L *lua.LState) int {
	n := L.GetTop()
	if n == 0 {
		argError(L, 0, "pack", "MessagePack pack needs input.")
	}
	if 2*n > luaMaxCStack {
		argError(L, 0, "pack", "Too many arguments for MessagePack pack.")
	}
	var b []byte
	for i := 1; i <= n; i++ {
		b = s.msgpackValue(b, L.Get(i), 0)
	}
	L.Push(lua.LString(b))
	return 1
}

func (s *state) msgpackValue(b []byte, v lua.LValue, level int) []byte {
	switch v := v.(type) {
	case lua.LString:
		return msgpackStr(b, string(v))
	case lua.LBool:
		if v {
			return append(b, 0xc3)
		}
		return append(b, 0xc2)
	case lua.LNumber:
		d := float64(v)
		if !math.IsInf(d, 0) && float64(toInt64(d)) == d {
			return msgpackInt(b, toInt64(d))
		}
		if f := float32(d); float64(f) == d {
			return binary.BigEndian.AppendUint32(append(b, 0xca), math.Float32bits(f))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(d))
	case *lua.LTable:
		if level == msgpackMaxNesting {
			return append(b, 0xc0)
		}
		return s.msgpackTable(b, s.shown(v).(*lua.LTable), level)
	}
	return append(b, 0xc0)
}

// msgpackTable packs t as an array when its keys are exactly 1..n (n may
// be 0), else as a map in the table's iteration order.
func (s *state) msgpackTable(b []byte, t *lua.LTable, level int) []byte {
	count, maxKey, array := 0, 0, true
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		count++
		if !array {
			continue
		}
		n, ok := k.(lua.LNumber)
		// lua-cmsgpack wants a key that an int holds exactly.
		if !ok || n <= 0 || float64(n) != math.Trunc(float64(n)) || n > math.MaxInt32 {
			array = false
			continue
		}
		maxKey = max(maxKey, int(n))
	}
	if array && maxKey == count {
		b = msgpackHeader(b, 0x90, 0xdc, 0xdd, count)
		for i := 1; i <= count; i++ {
			b = s.msgpackValue(b, t.RawGetInt(i), level+1)
		}
		return b
	}
	b = msgpackHeader(b, 0x80, 0xde, 0xdf, count)
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		b = s.msgpackValue(b, k, level+1)
		b = s.msgpackValue(b, v, level+1)
	}
	return b
}

// msgpackHeader writes an array's or a map's header: the fix form below
// 16 elements, else the 16-bit or the 32-bit one.
func msgpackHeader(b []byte, fix, op16, op32 byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, fix|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(b, op16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, op32), uint32(n))
}

func msgpackStr(b []byte, str string) []byte {
	switch n := len(str); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n <= 0xff:
		b = append(b, 0xd9, byte(n))
	case n <= 0xffff:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, str...)
}

func msgpackInt(b []byte, n int64) []byte {
	if n >= 0 {
		switch {
		case n <= 127:
			return append(b, byte(n))
		case n <= 0xff:
			return append(b, 0xcc, byte(n))
		case n <= 0xffff:
			return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
		case n <= 0xffffffff:
			return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
		}
		return binary.BigEndian.AppendUint64(append(b, 0xcf), uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(n))
	case n >= -128:
		return append(b, 0xd0, byte(n))
	case n >= -32768:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// msgpackDecoder reads values from in; used counts the slots Lua's stack
// would hold, to refuse what lua-cmsgpack's luaL_checkstack refuses.
type msgpackDecoder struct {
	L    *lua.LState
	in   string
	used int
	// eof: the input ended inside a value; bad: a byte no type starts
	// with. Either stops the decoding.
	eof, bad bool
}

func (d *msgpackDecoder) checkStack(msg string) {
	if d.used+1 > luaMaxCStack {
		luaError(d.L, "stack overflow (%s)", msg)
	}
}

func (d *msgpackDecoder) need(n int) bool {
	if len(d.in) < n {
		d.eof = true
		return false
	}
	return true
}

func (d *msgpackDecoder) failed() bool { return d.eof || d.bad }

// length reads an n-byte big-endian length after the type byte.
func (d *msgpackDecoder) length(n int) (int, bool) {
	if !d.need(1 + n) {
		return 0, false
	}
	var l uint64
	for i := 1; i <= n; i++ {
		l = l<<8 | uint64(d.in[i])
	}
	d.in = d.in[1+n:]
	return int(l), true
}

func (d *msgpackDecoder) str(l int) lua.LValue {
	if !d.need(l) {
		return lua.LNil
	}
	v := lua.LString(d.in[:l])
	d.in = d.in[l:]
	return v
}

// value decodes one value; on failure it returns nil with eof or bad set.
func (d *msgpackDecoder) value() lua.LValue {
	if !d.need(1) {
		return lua.LNil
	}
	d.checkStack("too many return values at once; use unpack_one or unpack_limit instead.")
	in := d.in
	fixed := func(n int) uint64 {
		if !d.need(1 + n) {
			return 0
		}
		var u uint64
		for i := 1; i <= n; i++ {
			u = u<<8 | uint64(in[i])
		}
		d.in = in[1+n:]
		return u
	}
	num := func(n float64) lua.LValue {
		if d.eof {
			return lua.LNil
		}
		return lua.LNumber(n)
	}
	switch c := in[0]; {
	case c <= 0x7f:
		d.in = in[1:]
		return lua.LNumber(c)
	case c >= 0xe0:
		d.in = in[1:]
		return lua.LNumber(int8(c))
	case c&0xe0 == 0xa0:
		d.in = in[1:]
		return d.str(int(c & 0x1f))
	case c&0xf0 == 0x90:
		d.in = in[1:]
		return d.array(int(c & 0xf))
	case c&0xf0 == 0x80:
		d.in = in[1:]
		return d.hash(int(c & 0xf))
	case c == 0xc0:
		d.in = in[1:]
		return lua.LNil
	case c == 0xc2, c == 0xc3:
		d.in = in[1:]
		return lua.LBool(c == 0xc3)
	case c == 0xcc:
		return num(float64(fixed(1)))
	case c == 0xcd:
		return num(float64(fixed(2)))
	case c == 0xce:
		return num(float64(fixed(4)))
	case c == 0xcf:
		// lua_pushunsigned is lua_pushinteger here: a signed cast.
		return num(float64(int64(fixed(8))))
	case c == 0xd0:
		return num(float64(int8(fixed(1))))
	case c == 0xd1:
		return num(float64(int16(fixed(2))))
	case c == 0xd2:
		return num(float64(int32(fixed(4))))
	case c == 0xd3:
		return num(float64(int64(fixed(8))))
	case c == 0xca:
		return num(float64(math.Float32frombits(uint32(fixed(4)))))
	case c == 0xcb:
		return num(math.Float64frombits(fixed(8)))
	case c == 0xd9, c == 0xda, c == 0xdb:
		l, ok := d.length(1 << (c - 0xd9))
		if !ok {
			return lua.LNil
		}
		return d.str(l)
	case c == 0xdc, c == 0xdd:
		l, ok := d.length(2 << (c - 0xdc))
		if !ok {
			return lua.LNil
		}
		return d.array(l)
	case c == 0xde, c == 0xdf:
		l, ok := d.length(2 << (c - 0xde))
		if !ok {
			return lua.LNil
		}
		return d.hash(l)
	}
	d.bad = true
	return lua.LNil
}

func (d *msgpackDecoder) array(n int) lua.LValue {
	t := d.L.NewTable()
	d.used++ // the table
	d.checkStack("in function mp_decode_to_lua_array")
	for i := 1; i <= n; i++ {
		d.used++ // the index
		v := d.value()
		d.used--
		if d.failed() {
			break
		}
		t.RawSetInt(i, v)
	}
	d.used--
	return t
}

func (d *msgpackDecoder) hash(n int) lua.LValue {
	t := d.L.NewTable()
	d.used++
	defer func() { d.used-- }()
	for ; n > 0; n-- {
		k := d.value()
		if d.failed() {
			break
		}
		d.used++
		v := d.value()
		d.used--
		if d.failed() {
			break
		}
		// lua_settable raises these from inside a C function: no
		// position.
		switch {
		case k == lua.LNil:
			d.L.Error(lua.LString("table index is nil"), 0)
		case k.Type() == lua.LTNumber && math.IsNaN(float64(k.(lua.LNumber))):
			d.L.Error(lua.LString("table index is NaN"), 0)
		}
		t.RawSet(k, v)
	}
	return t
}

// msgpackUnpack is mp_unpack_full: limit 0 and offset 0 unpack all the
// values; otherwise at most limit values from offset, preceded by the
// offset of what follows (-1 at the end).
func msgpackUnpack(L *lua.LState, fname string, limit, offset int64) int {
	in := checkLString(L, 1, fname)
	all := limit == 0 && offset == 0
	if offset < 0 || limit < 0 {
		// lua-cmsgpack prints the input's length as the limit.
		luaError(L, "Invalid request to unpack with offset of %d and limit of %d.", int32(offset), int32(len(in)))
	}
	if offset > int64(len(in)) {
		luaError(L, "Start offset %d greater than input length %d.", int32(offset), int32(len(in)))
	}
	if all {
		limit = math.MaxInt32
	}
	d := &msgpackDecoder{L: L, in: in[offset:], used: 1}
	var out []lua.LValue
	for cnt := int64(0); len(d.in) > 0 && cnt < limit; cnt++ {
		v := d.value()
		if d.eof {
			luaError(L, "Missing bytes in input.")
		}
		if d.bad {
			luaError(L, "Bad data format in input.")
		}
		out = append(out, v)
		d.used++
	}
	if !all {
		d.checkStack("in function mp_unpack_full")
		next := lua.LNumber(len(in) - len(d.in))
		if len(d.in) == 0 {
			next = -1
		}
		L.Push(next)
	}
	for _, v := range out {
		L.Push(v)
	}
	if all {
		return len(out)
	}
	return len(out) + 1
}
