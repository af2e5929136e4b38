package scripting

import (
	"math"

	lua "github.com/yuin/gopher-lua"
)

// The bit library Redis ships (LuaBitOp 1.0): 32-bit operations on Lua
// numbers, results as signed 32-bit numbers.

func openBit(L *lua.LState) *lua.LTable {
	t := L.NewTable()
	fold := func(name string, op func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			b := bitArg(L, 1, name)
			for i := 2; i <= L.GetTop(); i++ {
				b = op(b, bitArg(L, i, name))
			}
			return bitReturn(L, b)
		}
	}
	shift := func(name string, op func(b, n uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			b := bitArg(L, 1, name)
			return bitReturn(L, op(b, bitArg(L, 2, name)&31))
		}
	}
	fns := map[string]lua.LGFunction{
		"tobit":  func(L *lua.LState) int { return bitReturn(L, bitArg(L, 1, "tobit")) },
		"bnot":   func(L *lua.LState) int { return bitReturn(L, ^bitArg(L, 1, "bnot")) },
		"band":   fold("band", func(a, b uint32) uint32 { return a & b }),
		"bor":    fold("bor", func(a, b uint32) uint32 { return a | b }),
		"bxor":   fold("bxor", func(a, b uint32) uint32 { return a ^ b }),
		"lshift": shift("lshift", func(b, n uint32) uint32 { return b << n }),
		"rshift": shift("rshift", func(b, n uint32) uint32 { return b >> n }),
		"arshift": shift("arshift", func(b, n uint32) uint32 {
			return uint32(int32(b) >> n)
		}),
		"rol": shift("rol", func(b, n uint32) uint32 { return b<<n | b>>(32-n) }),
		"ror": shift("ror", func(b, n uint32) uint32 { return b<<(32-n) | b>>n }),
		"bswap": func(L *lua.LState) int {
			b := bitArg(L, 1, "bswap")
			return bitReturn(L, b>>24|(b>>8)&0xff00|(b&0xff00)<<8|b<<24)
		},
		"tohex": bitTohex,
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	return t
}

// bitArg converts argument i as LuaBitOp does: the number modulo 2^32,
// rounded to the nearest integer by adding 2^52+2^51 and keeping the low
// word of the double.
func bitArg(L *lua.LState, i int, fname string) uint32 {
	n, ok := luaNumber(L.Get(i))
	b := uint32(math.Float64bits(n + 6755399441055744.0))
	if b == 0 && !ok {
		argError(L, i, fname, "number expected, got "+typeName(L, i))
	}
	return b
}

func bitReturn(L *lua.LState, b uint32) int {
	L.Push(lua.LNumber(int32(b)))
	return 1
}

func bitTohex(L *lua.LState) int {
	b := bitArg(L, 1, "tohex")
	n := int32(8)
	if L.GetTop() >= 2 {
		n = int32(bitArg(L, 2, "tohex"))
	}
	digits := "0123456789abcdef"
	if n == math.MinInt32 {
		n = math.MinInt32 + 1
	}
	if n < 0 {
		n, digits = -n, "0123456789ABCDEF"
	}
	n = min(n, 8)
	buf := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		buf[i] = digits[b&15]
		b >>= 4
	}
	L.Push(lua.LString(buf))
	return 1
}

// argError raises luaL_argerror's text.
func argError(L *lua.LState, i int, fname, msg string) {
	luaError(L, "bad argument #%d to '%s' (%s)", i, fname, msg)
}

// typeName is luaL_typename of argument i: its type, or "no value" past
// the last argument.
func typeName(L *lua.LState, i int) string {
	if i > L.GetTop() {
		return "no value"
	}
	return L.Get(i).Type().String()
}
