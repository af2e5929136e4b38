package scripting

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/stampedeless/stampedeless/resp"
	lua "github.com/yuin/gopher-lua"
)

// encodeReply writes r back as RESP, for round trips.
func encodeReply(b []byte, r *Reply) []byte {
	switch r.Kind {
	case KindStatus, KindError, KindBigNumber, KindDouble:
		b = append(b, byte(r.Kind))
		b = append(b, r.Str...)
		return append(b, "\r\n"...)
	case KindInt:
		return header(b, ':', int(r.Int))
	case KindNull:
		return append(b, "_\r\n"...)
	case KindBool:
		w := resp.Buffer(b, 3)
		w.Bool(r.Bool)
		return w.Buffered()
	case KindBulk, KindBlobError:
		if r.Null {
			return append(b, "$-1\r\n"...)
		}
		b = header(b, byte(r.Kind), len(r.Str))
		b = append(b, r.Str...)
		return append(b, "\r\n"...)
	case KindVerbatim:
		w := resp.Buffer(b, 3)
		w.Verbatim(r.Format, string(r.Str))
		return w.Buffered()
	}
	if r.Null {
		return append(b, "*-1\r\n"...)
	}
	n := len(r.Elems)
	if r.Kind == KindMap {
		n /= 2
	}
	b = header(b, byte(r.Kind), n)
	for i := range r.Elems {
		b = encodeReply(b, &r.Elems[i])
	}
	return b
}

// header is a RESP type byte and a number, on a line.
func header(b []byte, kind byte, n int) []byte {
	return append(strconv.AppendInt(append(b, kind), int64(n), 10), '\r', '\n')
}

func TestParseReply(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // encodeReply of the result, when it differs from in
	}{
		{in: "+OK\r\n"},
		{in: "-ERR bad thing\r\n"},
		{in: ":-42\r\n"},
		{in: "$5\r\nhe\r\nl\r\n"},
		{in: "$0\r\n\r\n"},
		{in: "$-1\r\n"},
		{in: "*-1\r\n"},
		{in: "*0\r\n"},
		{in: "*3\r\n:1\r\n$1\r\na\r\n*1\r\n+x\r\n"},
		{in: "_\r\n"},
		{in: "#t\r\n"},
		{in: "#f\r\n"},
		{in: ",1.5\r\n"},
		{in: ",-inf\r\n"},
		{in: ",nan\r\n"},
		{in: "(12345678901234567890\r\n"},
		{in: "=7\r\ntxt:abc\r\n"},
		{in: "!10\r\nSYNTAX bad\r\n"},
		{in: "%2\r\n+a\r\n:1\r\n+b\r\n_\r\n"},
		{in: "~2\r\n:1\r\n:2\r\n"},
		{in: ">2\r\n+message\r\n$1\r\nx\r\n"},
		{in: "|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n", want: "$1\r\nv\r\n"},
		{in: "*1\r\n|1\r\n+a\r\n+b\r\n:7\r\n", want: "*1\r\n:7\r\n"},
	} {
		r, n, err := ParseReply([]byte(c.in + "+next\r\n"))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if n != len(c.in) {
			t.Errorf("%q: took %d bytes", c.in, n)
		}
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := string(encodeReply(nil, &r)); got != want {
			t.Errorf("%q: parsed as %q", c.in, got)
		}
	}
	r, _, _ := ParseReply([]byte(",1e3\r\n"))
	if r.Double != 1000 {
		t.Errorf("double: %v", r.Double)
	}
	r, _, _ = ParseReply([]byte("=7\r\nmkd:abc\r\n"))
	if r.Format != "mkd" || string(r.Str) != "abc" {
		t.Errorf("verbatim: %q %q", r.Format, r.Str)
	}

	for _, in := range []string{"", "+OK", "+OK\r", "$5\r\nabc", "*2\r\n:1\r\n", "%1\r\n+a\r\n", "|1\r\n+a\r\n+b\r\n"} {
		if _, _, err := ParseReply([]byte(in)); !errors.Is(err, ErrIncomplete) {
			t.Errorf("%q: %v, want incomplete", in, err)
		}
	}
	for _, in := range []string{"?\r\n", "+OK\rx\n", ":12a\r\n", "$-2\r\n", "$3\r\nabcd\r\n", "*-2\r\n", "%-1\r\n",
		"#x\r\n", ",abc\r\n", "_x\r\n", "=2\r\nab\r\n", "$01\r\na\r\n", ":+1\r\n"} {
		_, _, err := ParseReply([]byte(in))
		if !errors.Is(err, ErrMalformed) || errors.Is(err, ErrIncomplete) {
			t.Errorf("%q: %v, want malformed", in, err)
		}
	}
	deep := bytes.Repeat([]byte("*1\r\n"), maxReplyDepth+2)
	if _, _, err := ParseReply(append(deep, ":1\r\n"...)); !errors.Is(err, ErrMalformed) || errors.Is(err, ErrIncomplete) {
		t.Errorf("deep nesting: %v", err)
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nabc\r\n", "$-1\r\n", "*2\r\n:1\r\n*-1\r\n",
		"%1\r\n+a\r\n#t\r\n", "~1\r\n,1.5\r\n", "(1\r\n", "=5\r\ntxt:a\r\n", "|1\r\n+a\r\n+b\r\n_\r\n", ">1\r\n!1\r\nx\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, n, err := ParseReply(data)
		if err != nil {
			return
		}
		if n <= 0 || n > len(data) {
			t.Fatalf("took %d of %d bytes", n, len(data))
		}
		enc := encodeReply(nil, &r)
		r2, n2, err := ParseReply(enc)
		if err != nil || n2 != len(enc) {
			t.Fatalf("re-encoded %q does not parse: %v", enc, err)
		}
		if enc2 := encodeReply(nil, &r2); !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip: %q then %q", enc, enc2)
		}
	})
}

// cannedCaller answers every command with the same reply.
type cannedCaller string

func (c cannedCaller) Call(Command) ([]byte, bool) { return []byte(c), false }

func evalWith(t *testing.T, e *Engine, script string, proto int, c Caller) string {
	t.Helper()
	r, err := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte(script), []byte("0")}, Proto: proto, Caller: c})
	if err != nil {
		t.Fatal(err)
	}
	return string(r)
}

// RESP3 replies no command a script may call in redis-server 7.0 gives
// (booleans, big numbers, blob errors, attributes, pushes) converted as
// Redis converts them.
func TestRESP3Conversions(t *testing.T) {
	e := New(Options{})
	const inspect = "redis.setresp(3) local r = redis.call('x') "
	for _, c := range []struct {
		reply, script string
		proto         int
		want          string
	}{
		{"#t\r\n", inspect + "return {type(r), tostring(r)}", 2, "*2\r\n$7\r\nboolean\r\n$4\r\ntrue\r\n"},
		{"#f\r\n", inspect + "return r", 2, ":0\r\n"},
		{"#f\r\n", inspect + "return r", 3, "#f\r\n"},
		{"#t\r\n", "local r = redis.call('x') return r", 3, ":1\r\n"},
		{"(123456789012345678901234567890\r\n", inspect + "return r.big_number", 2, "$30\r\n123456789012345678901234567890\r\n"},
		{"(-5\r\n", inspect + "return r", 3, "(-5\r\n"},
		{"(-5\r\n", inspect + "return r", 2, "$2\r\n-5\r\n"},
		{"=8\r\nmkd:a\r\nb\r\n", inspect + "return {r.verbatim_string.format, r.verbatim_string.string}", 2, "*2\r\n$3\r\nmkd\r\n$4\r\na\r\nb\r\n"},
		{"=8\r\nmkd:a\r\nb\r\n", inspect + "return r", 3, "=8\r\nmkd:a\r\nb\r\n"},
		{"!11\r\nSYNTAX oops\r\n", inspect + "return 1", 2, "-SYNTAX oops script: %s, on @user_script:1.\r\n"},
		{"!4\r\noops\r\n", "return redis.pcall('x')", 2, "-ERR oops\r\n"},
		{"|1\r\n+key-popularity\r\n%0\r\n:5\r\n", inspect + "return r", 2, ":5\r\n"},
		{">2\r\n+a\r\n:1\r\n", inspect + "return r", 2, "*2\r\n+a\r\n:1\r\n"},
		{"_\r\n", inspect + "return {type(r)}", 2, "*1\r\n$3\r\nnil\r\n"},
		{"*3\r\n:1\r\n_\r\n:3\r\n", inspect + "return {r[1], r[3], type(r[2])}", 2, "*3\r\n:1\r\n:3\r\n$3\r\nnil\r\n"},
		{"%2\r\n+a\r\n_\r\n_\r\n:1\r\n", inspect + "local n = 0 for k in pairs(r.map) do n = n + 1 end return n", 2, ":0\r\n"},
		{",-inf\r\n", inspect + "return r", 3, ",-inf\r\n"},
		{",3\r\n", inspect + "return r", 2, "$1\r\n3\r\n"},
		{"~2\r\n:1\r\n:1\r\n", inspect + "return r", 3, "~1\r\n:1\r\n"},
		{"+bad", inspect + "return 1", 2, "-ERR malformed RESP reply: reply cut short at byte 1 script: %s, on @user_script:1.\r\n"},
		{"?x\r\n", "return redis.pcall('x')", 2, "-ERR malformed RESP reply: unknown reply type '?' at byte 0\r\n"},
	} {
		want := c.want
		if bytes.Contains([]byte(want), []byte("%s")) {
			want = fmt.Sprintf(want, SHA1([]byte(c.script)))
		}
		if got := evalWith(t, e, c.script, c.proto, cannedCaller(c.reply)); got != want {
			t.Errorf("reply %q, script %q, client RESP%d:\n got %q\nwant %q", c.reply, c.script, c.proto, got, want)
		}
	}
}

// The caller is told the protocol and read-only mode, and gets the
// arguments as Redis 7.2 prints them: a real redis-server runs them.
func TestCommandArguments(t *testing.T) {
	e := New(Options{})
	rc := newRedisCaller(t, startRedis(t))
	got := evalWith(t, e, "redis.call('rpush', 'l', 1, -2.5, 1e300, 2^53, 0.1, 'x\\0y') return redis.call('lrange', 'l', 0, -1)", 2, rc)
	if want := "*6\r\n$1\r\n1\r\n$4\r\n-2.5\r\n$6\r\n1e+300\r\n$16\r\n9007199254740992\r\n$3\r\n0.1\r\n$3\r\nx\x00y\r\n"; got != want {
		t.Errorf("arguments read back as %q, want %q", got, want)
	}
	// After redis.setresp(3) the reply comes in RESP3: a double is a table.
	if got := evalWith(t, e, "redis.call('zadd', 'z', 1.5, 'a') redis.setresp(3) return type(redis.call('zscore', 'z', 'a'))", 2, rc); got != "$5\r\ntable\r\n" {
		t.Errorf("RESP3 zscore in Lua: %q", got)
	}
	r, err := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte("return redis.pcall('set', 'k', 'v')"), []byte("0")}, ReadOnly: true, Proto: 2, Caller: rc})
	if err != nil || string(r) != string(ErrWriteReadOnly.Reply()) {
		t.Errorf("a write from a read-only script: %q, %v", r, err)
	}
}

// A script's double reply is Redis 7.2's d2string: 7.0's for integers
// within 2^62, zeros and specials, the rest shortest.
func TestFormatDouble(t *testing.T) {
	for d, want := range map[float64]string{
		1e17: "100000000000000000", 4611686018427387904 * 2: "9223372036854776000", 0.1: "0.1",
		math.Copysign(0, -1): "-0", math.Inf(-1): "-inf", math.NaN(): "nan", 1e300: "1e+300",
	} {
		if got := formatDouble(d); got != want {
			t.Errorf("formatDouble(%v) = %q, want %q", d, got, want)
		}
	}
}

// fuzzValue builds a Lua value from fuzz bytes: numbers, strings,
// booleans, nil, and tables whose keys include the names the reply
// conversion looks for.
func fuzzValue(L *lua.LState, data []byte, depth int) (lua.LValue, []byte) {
	if len(data) == 0 {
		return lua.LNil, data
	}
	op, data := data[0], data[1:]
	switch op % 6 {
	case 0:
		if len(data) < 8 {
			return lua.LNumber(float64(op)), nil
		}
		return lua.LNumber(math.Float64frombits(binary.LittleEndian.Uint64(data))), data[8:]
	case 1:
		n := int(op / 6)
		n = min(n, len(data))
		return lua.LString(data[:n]), data[n:]
	case 2:
		return lua.LBool(op&8 != 0), data
	case 3:
		return lua.LNil, data
	}
	t := L.NewTable()
	if depth > 8 {
		return t, data
	}
	keys := []string{"err", "ok", "double", "big_number", "verbatim_string", "map", "set", "format", "string"}
	for i := 0; i < int(op/6)%5 && len(data) > 0; i++ {
		var v lua.LValue
		v, data = fuzzValue(L, data, depth+1)
		if op%6 == 4 {
			t.RawSetInt(i+1, v)
		} else if len(data) > 0 {
			var k lua.LValue = lua.LString(keys[int(data[0])%len(keys)])
			if data[0] >= 200 {
				k, data = fuzzValue(L, data[1:], depth+1)
			} else {
				data = data[1:]
			}
			if k != lua.LNil {
				t.RawSet(k, v)
			}
		}
	}
	return t, data
}

func FuzzAppendLua(f *testing.F) {
	for _, s := range [][]byte{{0}, {7, 'a'}, {4 + 6*2, 1 + 6, 'x', 2}, {5 + 6, 2, 0}, {5 + 6, 1 + 6*3, 'a', 'b', 'c', 1},
		{5 + 12, 5 + 6, 2, 5, 0, 7, 'k', 2}} {
		f.Add(s)
	}
	L := lua.NewState()
	defer L.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := fuzzValue(L, data, 0)
		for _, proto := range []int{2, 3} {
			for _, resp := range []int{2, 3} {
				out := AppendLua(nil, v, proto, resp)
				_, n, err := ParseReply(out)
				if err != nil || n != len(out) {
					t.Fatalf("RESP%d (script RESP%d) wrote %q: %v", proto, resp, out, err)
				}
			}
		}
	})
}

// A reply converted to Lua and back gives a reply again, whatever the
// Caller sent.
func FuzzReplyToLua(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", "*2\r\n:1\r\n$-1\r\n", "%1\r\n+a\r\n#t\r\n", "~1\r\n,1.5\r\n",
		"(1\r\n", "=5\r\ntxt:a\r\n", "*2\r\n_\r\n!3\r\nE x\r\n"} {
		f.Add([]byte(s))
	}
	L := lua.NewState()
	defer L.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		r, _, err := ParseReply(data)
		if err != nil {
			return
		}
		v := replyToLua(L, &r)
		for _, proto := range []int{2, 3} {
			out := AppendLua(nil, v, proto, 3)
			if _, n, err := ParseReply(out); err != nil || n != len(out) {
				t.Fatalf("%q became %q: %v", data, out, err)
			}
		}
	})
}
