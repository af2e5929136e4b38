package scripting

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/stampedeless/stampedeless/internal/redisnum"
	lua "github.com/yuin/gopher-lua"
)

// The cjson library Redis ships (lua-cjson 2.1.0), written anew to its
// behaviour: defaults, error texts, number formats, empty tables encoded
// as {}, sparse arrays refused, '/' escaped, nesting bounded at 1000.

type jsonConfig struct {
	sparseConvert   bool
	sparseRatio     int
	sparseSafe      int
	encodeMaxDepth  int
	decodeMaxDepth  int
	encodeInvalid   int // 0 off, 1 on, 2 null
	decodeInvalid   bool
	keepBuffer      bool
	numberPrecision int
	null            *lua.LUserData
}

func newJSONConfig() *jsonConfig {
	return &jsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000,
		decodeInvalid: true, keepBuffer: true, numberPrecision: 14}
}

// openJSON builds a cjson table with its own configuration, as
// cjson.new does.
func (s *state) openJSON() *lua.LTable {
	L := s.L
	cfg := newJSONConfig()
	cfg.null = s.jsonNull
	t := L.NewTable()
	s.setFuncs(t, map[string]lua.LGFunction{
		"encode":              func(L *lua.LState) int { return s.jsonEncode(L, cfg) },
		"decode":              func(L *lua.LState) int { return jsonDecode(L, cfg) },
		"encode_sparse_array": cfg.cfgSparse,
		"encode_max_depth": func(L *lua.LState) int {
			return cfg.intOption(L, "encode_max_depth", &cfg.encodeMaxDepth, 1, math.MaxInt32)
		},
		"decode_max_depth": func(L *lua.LState) int {
			return cfg.intOption(L, "decode_max_depth", &cfg.decodeMaxDepth, 1, math.MaxInt32)
		},
		"encode_number_precision": func(L *lua.LState) int {
			return cfg.intOption(L, "encode_number_precision", &cfg.numberPrecision, 1, 14)
		},
		"encode_keep_buffer":     func(L *lua.LState) int { return cfg.boolOption(L, "encode_keep_buffer", &cfg.keepBuffer) },
		"decode_invalid_numbers": func(L *lua.LState) int { return cfg.boolOption(L, "decode_invalid_numbers", &cfg.decodeInvalid) },
		"encode_invalid_numbers": cfg.cfgEncodeInvalid,
		"new": func(L *lua.LState) int {
			L.Push(s.openJSON())
			return 1
		},
	})
	t.RawSetString("null", cfg.null)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

// argInit checks a configuration function got at most n arguments.
func argInit(L *lua.LState, fname string, n int) {
	if L.GetTop() > n {
		argError(L, n+1, fname, "found too many arguments")
	}
}

func (c *jsonConfig) intOption(L *lua.LState, fname string, setting *int, lo, hi int) int {
	argInit(L, fname, 1)
	c.setInt(L, 1, fname, setting, lo, hi)
	L.Push(lua.LNumber(*setting))
	return 1
}

func (c *jsonConfig) setInt(L *lua.LState, i int, fname string, setting *int, lo, hi int) {
	v := L.Get(i)
	if v == lua.LNil {
		return
	}
	n, ok := luaNumber(v)
	if !ok {
		argError(L, i, fname, "number expected, got "+typeName(L, i))
	}
	value := int(toInt64(n))
	if value < lo || value > hi {
		// lua-cjson names argument 1 whichever argument is out of range.
		argError(L, 1, fname, fmt.Sprintf("expected integer between %d and %d", lo, hi))
	}
	*setting = value
}

// enumOption reads an option given as a boolean or one of names, and
// returns the setting's index.
func enumOption(L *lua.LState, i int, fname string, setting int, names []string) int {
	v := L.Get(i)
	if v == lua.LNil {
		return setting
	}
	if b, ok := v.(lua.LBool); ok {
		if b {
			return 1
		}
		return 0
	}
	str, ok := luaString(v)
	if !ok {
		argError(L, i, fname, "string expected, got "+typeName(L, i))
	}
	for j, name := range names {
		if name == str {
			return j
		}
	}
	argError(L, i, fname, fmt.Sprintf("invalid option '%s'", str))
	return setting
}

var onOff = []string{"off", "on"}

func (c *jsonConfig) boolOption(L *lua.LState, fname string, setting *bool) int {
	argInit(L, fname, 1)
	cur := 0
	if *setting {
		cur = 1
	}
	*setting = enumOption(L, 1, fname, cur, onOff) == 1
	L.Push(lua.LBool(*setting))
	return 1
}

func (c *jsonConfig) cfgSparse(L *lua.LState) int {
	const fname = "encode_sparse_array"
	argInit(L, fname, 3)
	cur := 0
	if c.sparseConvert {
		cur = 1
	}
	c.sparseConvert = enumOption(L, 1, fname, cur, onOff) == 1
	c.setInt(L, 2, fname, &c.sparseRatio, 0, math.MaxInt32)
	c.setInt(L, 3, fname, &c.sparseSafe, 0, math.MaxInt32)
	L.SetTop(0)
	L.Push(lua.LBool(c.sparseConvert))
	L.Push(lua.LNumber(c.sparseRatio))
	L.Push(lua.LNumber(c.sparseSafe))
	return 3
}

func (c *jsonConfig) cfgEncodeInvalid(L *lua.LState) int {
	const fname = "encode_invalid_numbers"
	argInit(L, fname, 1)
	c.encodeInvalid = enumOption(L, 1, fname, c.encodeInvalid, []string{"off", "on", "null"})
	if c.encodeInvalid == 2 {
		L.Push(lua.LString("null"))
	} else {
		L.Push(lua.LBool(c.encodeInvalid == 1))
	}
	return 1
}

func (s *state) jsonEncode(L *lua.LState, cfg *jsonConfig) int {
	if L.GetTop() != 1 {
		argError(L, 1, "encode", "expected 1 argument")
	}
	e := jsonEncoder{s: s, L: L, cfg: cfg}
	e.value(L.Get(1), 0)
	L.Push(lua.LString(e.b.String()))
	return 1
}

type jsonEncoder struct {
	s   *state
	L   *lua.LState
	cfg *jsonConfig
	b   strings.Builder
}

func (e *jsonEncoder) fail(v lua.LValue, reason string) {
	luaError(e.L, "Cannot serialise %s: %s", v.Type().String(), reason)
}

func (e *jsonEncoder) value(v lua.LValue, depth int) {
	switch v := v.(type) {
	case lua.LString:
		e.str(string(v))
	case lua.LNumber:
		e.number(v)
	case lua.LBool:
		if v {
			e.b.WriteString("true")
		} else {
			e.b.WriteString("false")
		}
	case *lua.LNilType:
		e.b.WriteString("null")
	case *lua.LTable:
		depth++
		if depth > e.cfg.encodeMaxDepth {
			luaError(e.L, "Cannot serialise, excessive nesting (%d)", depth)
		}
		t := e.s.shown(v).(*lua.LTable)
		if n := e.arrayLen(t); n > 0 {
			e.b.WriteByte('[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					e.b.WriteByte(',')
				}
				e.value(t.RawGetInt(i), depth)
			}
			e.b.WriteByte(']')
			return
		}
		e.object(t, depth)
	case *lua.LUserData:
		if v == e.cfg.null {
			e.b.WriteString("null")
			return
		}
		e.fail(v, "type not supported")
	default:
		e.fail(v, "type not supported")
	}
}

func (e *jsonEncoder) number(n lua.LNumber) {
	d := float64(n)
	if math.IsInf(d, 0) || math.IsNaN(d) {
		switch e.cfg.encodeInvalid {
		case 0:
			e.fail(n, "must not be NaN or Inf")
		case 1:
			if math.IsNaN(d) {
				e.b.WriteString("nan")
				return
			}
		default:
			e.b.WriteString("null")
			return
		}
	}
	var num [32]byte
	e.b.Write(redisnum.AppendG(num[:0], d, e.cfg.numberPrecision))
}

// arrayLen returns the length of t as a JSON array, or -1 for an object:
// t is an array when every key is an integer >= 1; an array sparser than
// the configured ratio is an error (or an object, when so configured).
func (e *jsonEncoder) arrayLen(t *lua.LTable) int {
	maxKey, items := 0, 0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || n < 1 || math.Floor(float64(n)) != float64(n) {
			return -1
		}
		if float64(n) > float64(maxKey) {
			maxKey = int(min(float64(n), math.MaxInt32))
		}
		items++
	}
	c := e.cfg
	if c.sparseRatio > 0 && maxKey > items*c.sparseRatio && maxKey > c.sparseSafe {
		if !c.sparseConvert {
			e.fail(t, "excessively sparse array")
		}
		return -1
	}
	return maxKey
}

func (e *jsonEncoder) object(t *lua.LTable, depth int) {
	e.b.WriteByte('{')
	first := true
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if !first {
			e.b.WriteByte(',')
		}
		first = false
		switch k := k.(type) {
		case lua.LNumber:
			e.b.WriteByte('"')
			e.number(k)
			e.b.WriteString(`":`)
		case lua.LString:
			e.str(string(k))
			e.b.WriteByte(':')
		default:
			e.fail(k, "table key must be a number or string")
		}
		e.value(v, depth)
	}
	e.b.WriteByte('}')
}

// str writes s quoted with lua-cjson's escapes: the JSON ones, \/ and
// \u00XX for control bytes and DEL; other bytes pass as they are.
func (e *jsonEncoder) str(s string) {
	const hexDigits = "0123456789abcdef"
	e.b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			e.b.WriteString(`\"`)
		case '\\':
			e.b.WriteString(`\\`)
		case '/':
			e.b.WriteString(`\/`)
		case '\b':
			e.b.WriteString(`\b`)
		case '\t':
			e.b.WriteString(`\t`)
		case '\n':
			e.b.WriteString(`\n`)
		case '\f':
			e.b.WriteString(`\f`)
		case '\r':
			e.b.WriteString(`\r`)
		default:
			if c < 0x20 || c == 0x7f {
				e.b.WriteString(`\u00`)
				e.b.WriteByte(hexDigits[c>>4])
				e.b.WriteByte(hexDigits[c&15])
			} else {
				e.b.WriteByte(c)
			}
		}
	}
	e.b.WriteByte('"')
}

// JSON decoding, token by token as lua-cjson reads.

type jsonTok int

const (
	tObjBegin jsonTok = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
)

var jsonTokName = [...]string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING",
	"T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR"}

type jsonToken struct {
	typ   jsonTok
	index int
	str   string // a string's value, or an error's description
	num   float64
	b     bool
}

type jsonDecoder struct {
	L     *lua.LState
	cfg   *jsonConfig
	data  string
	pos   int
	depth int
}

// at is the byte at i; the text ends at its end or at its first NUL, as
// the C string lua-cjson reads does.
func (d *jsonDecoder) at(i int) byte {
	if i >= len(d.data) {
		return 0
	}
	return d.data[i]
}

func jsonDecode(L *lua.LState, cfg *jsonConfig) int {
	if L.GetTop() != 1 {
		argError(L, 1, "decode", "expected 1 argument")
	}
	v := L.Get(1)
	data, ok := luaString(v)
	if !ok {
		argError(L, 1, "decode", "string expected, got "+typeName(L, 1))
	}
	if len(data) >= 2 && (data[0] == 0 || data[1] == 0) {
		luaError(L, "JSON parser does not support UTF-16 or UTF-32")
	}
	d := jsonDecoder{L: L, cfg: cfg, data: data}
	tok := d.next()
	L.Push(d.value(tok))
	if tok = d.next(); tok.typ != tEnd {
		d.fail("the end", tok)
	}
	return 1
}

func (d *jsonDecoder) fail(expected string, tok jsonToken) {
	found := jsonTokName[tok.typ]
	if tok.typ == tError {
		found = tok.str
	}
	luaError(d.L, "Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *jsonDecoder) errTok(what string) jsonToken {
	return jsonToken{typ: tError, index: d.pos, str: what}
}

func (d *jsonDecoder) next() jsonToken {
	for {
		c := d.at(d.pos)
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		d.pos++
	}
	start := d.pos
	c := d.at(d.pos)
	if t := strings.IndexByte("{}[],:", c); t >= 0 && c != 0 {
		d.pos++
		return jsonToken{typ: [...]jsonTok{tObjBegin, tObjEnd, tArrBegin, tArrEnd, tComma, tColon}[t], index: start}
	}
	rest := d.data[min(d.pos, len(d.data)):]
	switch {
	case c == 0:
		return jsonToken{typ: tEnd, index: start}
	case c == '"':
		return d.string()
	case c == '-' || isDigit(c):
		if !d.cfg.decodeInvalid && d.invalidNumber() {
			return d.errTok("invalid number")
		}
		return d.number()
	case strings.HasPrefix(rest, "true"):
		d.pos += 4
		return jsonToken{typ: tBoolean, index: start, b: true}
	case strings.HasPrefix(rest, "false"):
		d.pos += 5
		return jsonToken{typ: tBoolean, index: start}
	case strings.HasPrefix(rest, "null"):
		d.pos += 4
		return jsonToken{typ: tNull, index: start}
	case strings.IndexByte("iInN+", c) >= 0 && d.cfg.decodeInvalid && d.invalidNumber():
		return d.number()
	}
	return d.errTok("invalid token")
}

// invalidNumber reports what strict JSON refuses but strtod reads: a
// leading '+', hexadecimal, leading zeros, inf and nan.
func (d *jsonDecoder) invalidNumber() bool {
	p := d.pos
	if d.at(p) == '+' {
		return true
	}
	if d.at(p) == '-' {
		p++
	}
	if d.at(p) == '0' {
		c := d.at(p + 1)
		return c|0x20 == 'x' || isDigit(c)
	}
	if d.at(p) <= '9' {
		return false
	}
	rest := []byte(d.data[min(p, len(d.data)):])
	return matchFold(rest, "inf") == 3 || matchFold(rest, "nan") == 3
}

func (d *jsonDecoder) number() jsonToken {
	rest := d.data[d.pos:]
	if i := strings.IndexByte(rest, 0); i >= 0 {
		rest = rest[:i]
	}
	v, n, _ := redisnum.Strtod([]byte(rest))
	if n == 0 {
		return d.errTok("invalid number")
	}
	tok := jsonToken{typ: tNumber, index: d.pos, num: v}
	d.pos += n
	return tok
}

func (d *jsonDecoder) string() jsonToken {
	start := d.pos
	d.pos++
	var b strings.Builder
	for {
		c := d.at(d.pos)
		switch {
		case c == '"':
			d.pos++
			return jsonToken{typ: tString, index: start, str: b.String()}
		case c == 0:
			return d.errTok("unexpected end of string")
		case c != '\\':
			b.WriteByte(c)
			d.pos++
			continue
		}
		esc := d.at(d.pos + 1)
		switch esc {
		case '"', '\\', '/':
			b.WriteByte(esc)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if !d.unicodeEscape(&b) {
				return d.errTok("invalid unicode escape code")
			}
			continue
		default:
			return d.errTok("invalid escape code")
		}
		d.pos += 2
	}
}

func (d *jsonDecoder) hex4(at int) int {
	v := 0
	for i := range 4 {
		c := d.at(at + i)
		if !isHex(c) {
			return -1
		}
		v = v<<4 | int(hexVal(c))
	}
	return v
}

// unicodeEscape decodes \uXXXX, or a surrogate pair of them, into UTF-8.
func (d *jsonDecoder) unicodeEscape(b *strings.Builder) bool {
	cp := d.hex4(d.pos + 2)
	if cp < 0 {
		return false
	}
	n := 6
	if cp&0xF800 == 0xD800 {
		if cp&0x400 != 0 || d.at(d.pos+6) != '\\' || d.at(d.pos+7) != 'u' {
			return false
		}
		low := d.hex4(d.pos + 8)
		if low < 0 || low&0xFC00 != 0xDC00 {
			return false
		}
		cp = (cp&0x3FF)<<10 | low&0x3FF + 0x10000
		n = 12
	}
	var buf [4]byte
	b.Write(buf[:utf8.EncodeRune(buf[:], rune(cp))])
	d.pos += n
	return true
}

func (d *jsonDecoder) descend() {
	d.depth++
	if d.depth > d.cfg.decodeMaxDepth {
		luaError(d.L, "Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

func (d *jsonDecoder) value(tok jsonToken) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tNull:
		return d.cfg.null
	case tObjBegin:
		return d.object()
	case tArrBegin:
		return d.array()
	}
	d.fail("value", tok)
	return lua.LNil
}

func (d *jsonDecoder) object() lua.LValue {
	d.descend()
	t := d.L.NewTable()
	tok := d.next()
	if tok.typ == tObjEnd {
		d.depth--
		return t
	}
	for {
		if tok.typ != tString {
			d.fail("object key string", tok)
		}
		key := tok.str
		if tok = d.next(); tok.typ != tColon {
			d.fail("colon", tok)
		}
		t.RawSetString(key, d.value(d.next()))
		tok = d.next()
		if tok.typ == tObjEnd {
			d.depth--
			return t
		}
		if tok.typ != tComma {
			d.fail("comma or object end", tok)
		}
		tok = d.next()
	}
}

func (d *jsonDecoder) array() lua.LValue {
	d.descend()
	t := d.L.NewTable()
	tok := d.next()
	if tok.typ == tArrEnd {
		d.depth--
		return t
	}
	for i := 1; ; i++ {
		t.RawSetInt(i, d.value(tok))
		tok = d.next()
		if tok.typ == tArrEnd {
			d.depth--
			return t
		}
		if tok.typ != tComma {
			d.fail("comma or array end", tok)
		}
		tok = d.next()
	}
}
