package scripting

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The struct library Redis ships (Roberto Ierusalimschy's lua_struct,
// as Redis patched it), written anew to its behaviour on x86-64: native
// order little-endian, long and size_t 8 bytes, int 4, default maximum
// alignment 8, integers of up to 32 bytes.

const (
	structMaxIntSize = 32
	structMaxAlign   = 8
)

type structFormat struct {
	L      *lua.LState
	fname  string
	fmt    string
	little bool
	align  int
}

func newStructFormat(L *lua.LState, fname string) *structFormat {
	f := checkLString(L, 1, fname)
	// The format is a C string: it ends at a NUL.
	if i := strings.IndexByte(f, 0); i >= 0 {
		f = f[:i]
	}
	return &structFormat{L: L, fname: fname, fmt: f, little: true, align: 1}
}

// num reads the digits after an option, or answers def.
func (h *structFormat) num(def int) int {
	if h.fmt == "" || !isDigit(h.fmt[0]) {
		return def
	}
	a := 0
	for h.fmt != "" && isDigit(h.fmt[0]) {
		d := int(h.fmt[0] - '0')
		if a > math.MaxInt32/10 || a*10 > math.MaxInt32-d {
			luaError(h.L, "integral size overflow")
		}
		a = a*10 + d
		h.fmt = h.fmt[1:]
	}
	return a
}

// next returns the next option and its size; ok is false at the end.
func (h *structFormat) next() (opt byte, size int, ok bool) {
	if h.fmt == "" {
		return 0, 0, false
	}
	opt = h.fmt[0]
	h.fmt = h.fmt[1:]
	switch opt {
	case 'B', 'b', 'x':
		size = 1
	case 'H', 'h':
		size = 2
	case 'L', 'l', 'T', 'd':
		size = 8
	case 'f':
		size = 4
	case 'c':
		size = h.num(1)
	case 'i', 'I':
		size = h.num(4)
		if size > structMaxIntSize {
			luaError(h.L, "integral size %d is larger than limit of %d", size, structMaxIntSize)
		}
	}
	return opt, size, true
}

// toAlign is the padding before an option of size at offset n.
func (h *structFormat) toAlign(n uint64, opt byte, size int) uint64 {
	if size == 0 || opt == 'c' {
		return 0
	}
	s := uint64(min(size, h.align))
	return (s - (n & (s - 1))) & (s - 1)
}

// control applies an option that is not a value: space, <, >, !.
func (h *structFormat) control(opt byte) {
	switch opt {
	case ' ':
	case '>':
		h.little = false
	case '<':
		h.little = true
	case '!':
		a := h.num(structMaxAlign)
		if a <= 0 || a&(a-1) != 0 {
			luaError(h.L, "alignment %d is not a power of 2", a)
		}
		h.align = a
	default:
		argError(h.L, 1, h.fname, fmt.Sprintf("invalid format option '%c'", opt))
	}
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func (h *structFormat) order() byteOrder {
	if h.little {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

func checkNumber(L *lua.LState, i int, fname string) float64 {
	n, ok := luaNumber(L.Get(i))
	if !ok {
		argError(L, i, fname, "number expected, got "+typeName(L, i))
	}
	return n
}

// toUint64 is C's (unsigned long) cast of a non-negative double as x86-64
// compilers emit it.
func toUint64(d float64) uint64 {
	switch {
	case d < 1<<63:
		return uint64(int64(d))
	case d < 1<<64:
		return uint64(d)
	}
	return 0
}

func openStruct(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	for name, fn := range map[string]lua.LGFunction{"pack": structPack, "unpack": structUnpack, "size": structSize} {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

func structPack(L *lua.LState) int {
	h := newStructFormat(L, "pack")
	arg := 2
	// lua_struct pushes a nil after the arguments: the first missing one
	// is a nil, not "no value".
	L.Push(lua.LNil)
	var b []byte
	for {
		opt, size, ok := h.next()
		if !ok {
			break
		}
		pad := h.toAlign(uint64(len(b)), opt, size)
		for ; pad > 0; pad-- {
			b = append(b, 0)
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			n := checkNumber(L, arg, "pack")
			arg++
			var v uint64
			if n < 0 {
				v = uint64(toInt64(n))
			} else {
				v = toUint64(n)
			}
			buf := make([]byte, size)
			for i := 0; i < size; i++ {
				j := i
				if !h.little {
					j = size - 1 - i
				}
				buf[j] = byte(v)
				v >>= 8
			}
			b = append(b, buf...)
		case 'x':
			b = append(b, 0)
		case 'f':
			f := float32(checkNumber(L, arg, "pack"))
			arg++
			b = h.order().AppendUint32(b, math.Float32bits(f))
		case 'd':
			d := checkNumber(L, arg, "pack")
			arg++
			b = h.order().AppendUint64(b, math.Float64bits(d))
		case 'c', 's':
			str := checkLString(L, arg, "pack")
			arg++
			if size == 0 {
				size = len(str)
			}
			if len(str) < size {
				// lua_struct names the argument after the string.
				argError(L, arg, "pack", "string too short")
			}
			b = append(b, str[:size]...)
			if opt == 's' {
				b = append(b, 0)
			}
		default:
			h.control(opt)
		}
	}
	L.Push(lua.LString(b))
	return 1
}

func structUnpack(L *lua.LState) int {
	h := newStructFormat(L, "unpack")
	data := checkLString(L, 2, "unpack")
	pos := uint64(optInteger(L, 3, "unpack", 1))
	if pos == 0 {
		argError(L, 3, "unpack", "offset must be 1 or greater")
	}
	pos--
	nargs := L.GetTop()
	ld := uint64(len(data))
	var out []lua.LValue
	tooShort := func(size uint64) {
		if size > ld || pos > ld-size {
			argError(L, 2, "unpack", "data string too short")
		}
	}
	for {
		opt, sz, ok := h.next()
		if !ok {
			break
		}
		size := uint64(sz)
		pos += h.toAlign(pos, opt, sz)
		tooShort(size)
		if nargs+len(out)+2 > luaMaxCStack {
			luaError(L, "stack overflow (too many results)")
		}
		switch opt {
		case 'b', 'B', 'h', 'H', 'l', 'L', 'T', 'i', 'I':
			var l uint64
			for i := 0; i < sz; i++ {
				j := i
				if h.little {
					j = sz - 1 - i
				}
				l = l<<8 | uint64(data[pos+uint64(j)])
			}
			if opt >= 'a' { // signed
				mask := ^uint64(0) << (uint(sz*8-1) & 63)
				if l&mask != 0 {
					l |= mask
				}
				out = append(out, lua.LNumber(float64(int64(l))))
			} else {
				out = append(out, lua.LNumber(float64(l)))
			}
		case 'x':
		case 'f':
			out = append(out, lua.LNumber(math.Float32frombits(h.order().Uint32([]byte(data[pos:pos+4])))))
		case 'd':
			out = append(out, lua.LNumber(math.Float64frombits(h.order().Uint64([]byte(data[pos:pos+8])))))
		case 'c':
			if size == 0 {
				var n float64
				ok := len(out) > 0
				if ok {
					n, ok = luaNumber(out[len(out)-1])
				}
				if !ok {
					luaError(L, "format 'c0' needs a previous size")
				}
				size = toSize(n)
				out = out[:len(out)-1]
				tooShort(size)
			}
			out = append(out, lua.LString(data[pos:pos+size]))
		case 's':
			e := strings.IndexByte(data[pos:], 0)
			if e < 0 {
				luaError(L, "unfinished string in data")
			}
			size = uint64(e) + 1
			out = append(out, lua.LString(data[pos:pos+uint64(e)]))
		default:
			h.control(opt)
		}
		pos += size
	}
	for _, v := range out {
		L.Push(v)
	}
	L.Push(lua.LNumber(int64(pos + 1)))
	return len(out) + 1
}

// toSize is C's (size_t) cast of a double.
func toSize(d float64) uint64 {
	if d < 0 {
		return uint64(toInt64(d))
	}
	return toUint64(d)
}

func structSize(L *lua.LState) int {
	h := newStructFormat(L, "size")
	var pos uint64
	for {
		opt, size, ok := h.next()
		if !ok {
			break
		}
		pos += h.toAlign(pos, opt, size)
		switch {
		case opt == 's':
			argError(L, 1, "size", "option 's' has no fixed size")
		case opt == 'c' && size == 0:
			argError(L, 1, "size", "option 'c0' has no fixed size")
		}
		if !isAlnum(opt) {
			h.control(opt)
		}
		pos += uint64(size)
	}
	L.Push(lua.LNumber(int64(pos)))
	return 1
}
