package scripting

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// hexLua defines hex(s), the bytes of s in hex, for cases that show
// what a library packs.
const hexLua = "local function hex(s) local h = '' for i = 1, #s do h = h .. string.format('%02x', string.byte(s, i)) end return h end\n"

// libCompatCases are the differential cases (TestCompatEval) of cmsgpack
// and struct.
func libCompatCases() []compatCase {
	hexCase := func(name, expr string) compatCase {
		return compatCase{name: name, script: hexLua + "return hex(" + expr + ")"}
	}
	return []compatCase{
		// Redis's own tests (tests/unit/scripting.tcl).
		hexCase("cmsgpack double", "cmsgpack.pack(0.1)"),
		hexCase("cmsgpack negative int64", "cmsgpack.pack(-1099511627776)"),
		{name: "cmsgpack smoke", script: msgpackSmoke},
		{name: "cmsgpack readonly", script: "cmsgpack.pack = function() return 1 end"},
		{name: "cmsgpack readonly new field", script: "cmsgpack.x = 1"},
		// Numbers: integers of each width, floats, doubles, specials.
		hexCase("cmsgpack ints", "cmsgpack.pack(0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, 2^53, 2^63, -2^63, 2^64)"),
		hexCase("cmsgpack negative ints", "cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649)"),
		hexCase("cmsgpack floats", "cmsgpack.pack(0.5, -0.25, 1.5e30, 0.1, 1/3, 1e300, -0.0)"),
		hexCase("cmsgpack specials", "cmsgpack.pack(1/0, -1/0, 0/0)"),
		hexCase("cmsgpack strings", "cmsgpack.pack('', 'a', string.rep('x', 31), string.rep('y', 32), string.rep('z', 255), string.rep('w', 256))"),
		{name: "cmsgpack long strings", script: "local s = cmsgpack.pack(string.rep('a', 65535), string.rep('b', 65536)) return {#s, s:byte(1), s:byte(65539), s:byte(65540), s:byte(65541)}"},
		hexCase("cmsgpack others", "cmsgpack.pack(true, false, nil, print, cjson.null, coroutine.create(function() end))"),
		hexCase("cmsgpack arrays", "cmsgpack.pack({}, {1, 2, 3}, {{}, {{}}}, {[1]='a', [2]='b'}, {[2]='b'}, {1, nil, 3})"),
		hexCase("cmsgpack array 16", "cmsgpack.pack({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}, {1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16})"),
		hexCase("cmsgpack maps", "cmsgpack.pack({a=1}, {[1.5]=true}, {[0]=0}, {[-1]=1}, {[true]=false})"),
		{name: "cmsgpack nesting", script: hexLua + "local t = 1 for i = 1, 20 do t = {t} end return hex(cmsgpack.pack(t, 2, t[1][1][1][1][1]))"},
		{name: "cmsgpack nesting 16", script: hexLua + "local t = 1 for i = 1, 16 do t = {t} end return hex(cmsgpack.pack(t))"},
		{name: "cmsgpack nesting map", script: hexLua + "local t = 1 for i = 1, 20 do t = {a=t} end return hex(cmsgpack.pack(t))"},
		{name: "cmsgpack circular redis", script: msgpackCircular},
		{name: "cmsgpack circular", script: "local a = {} a[1] = a local e = cmsgpack.pack(a) return {#e, cmsgpack.unpack(e)[1][1][1][1][1][1][1][1][1][1][1][1][1][1][1][1] == nil}"},
		{name: "cmsgpack pack view", script: hexLua + "return hex(cmsgpack.pack(KEYS))", keys: []string{"a", "b"}},
		{name: "cmsgpack pack no input", script: "return cmsgpack.pack()"},
		{name: "cmsgpack pack too many", script: "local t = {} for i = 1, 4001 do t[i] = i end return cmsgpack.pack(unpack(t))"},
		{name: "cmsgpack pack 4000", script: "local t = {} for i = 1, 4000 do t[i] = i end return #cmsgpack.pack(unpack(t))"},
		// Unpacking.
		{name: "cmsgpack unpack values", script: "return {cmsgpack.unpack(cmsgpack.pack(1, 'two', 3.5, true, {4, 5}, -6, 2^40))}"},
		{name: "cmsgpack unpack types", script: "local r = {cmsgpack.unpack(cmsgpack.pack(1, 'two', 3.5, true, false, {4}, {a=1}, -7, 1e300))} local t = {} for i = 1, #r do t[i] = type(r[i]) end return t"},
		{name: "cmsgpack unpack nil", script: "local a, b, c = cmsgpack.unpack(cmsgpack.pack(1, nil, 3)) return {a, tostring(b), c}"},
		{name: "cmsgpack unpack count", script: "return select('#', cmsgpack.unpack(cmsgpack.pack(1, nil, 3, nil)))"},
		{name: "cmsgpack unpack empty", script: "return select('#', cmsgpack.unpack(''))"},
		{name: "cmsgpack unpack number arg", script: "return cmsgpack.unpack(5)"},
		{name: "cmsgpack unpack no arg", script: "return cmsgpack.unpack()"},
		{name: "cmsgpack unpack table arg", script: "return cmsgpack.unpack({})"},
		{name: "cmsgpack unpack missing", script: "return cmsgpack.unpack('\\205')"},
		{name: "cmsgpack unpack missing str", script: "return cmsgpack.unpack('\\218\\0\\9abc')"},
		{name: "cmsgpack unpack missing array", script: "return cmsgpack.unpack('\\147\\1\\2')"},
		{name: "cmsgpack unpack bad", script: "return cmsgpack.unpack('\\193')"},
		{name: "cmsgpack unpack bin", script: "return cmsgpack.unpack('\\196\\1a')"},
		{name: "cmsgpack unpack bad after", script: "return cmsgpack.unpack('\\1\\212')"},
		{name: "cmsgpack unpack nil key", script: "return cmsgpack.unpack('\\129\\192\\1')"},
		{name: "cmsgpack unpack nan key", script: "return cmsgpack.unpack(cmsgpack.pack({[1]=1}):sub(1,1) .. '\\129' .. cmsgpack.pack(0/0) .. '\\1')"},
		{name: "cmsgpack unpack nan key pcall", script: "return {pcall(cmsgpack.unpack, '\\129\\192\\1')}"},
		{name: "cmsgpack unpack uint64", script: "return {tostring(cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')), tostring(cmsgpack.unpack('\\207\\128\\0\\0\\0\\0\\0\\0\\0')), tostring(cmsgpack.unpack('\\207\\0\\0\\0\\1\\0\\0\\0\\0'))}"},
		{name: "cmsgpack unpack int64", script: "return {tostring(cmsgpack.unpack('\\211\\255\\255\\255\\255\\255\\255\\255\\254')), tostring(cmsgpack.unpack('\\210\\128\\0\\0\\0')), tostring(cmsgpack.unpack('\\209\\128\\1')), tostring(cmsgpack.unpack('\\208\\200'))}"},
		{name: "cmsgpack unpack float", script: "return {tostring(cmsgpack.unpack('\\202\\63\\192\\0\\0')), tostring(cmsgpack.unpack(cmsgpack.pack(0.1)))}"},
		{name: "cmsgpack unpack map", script: "local t = cmsgpack.unpack(cmsgpack.pack({a={1, {b='c'}}, [5]=6})) return {t.a[1], t.a[2].b, t[5]}"},
		{name: "cmsgpack unpack array nil", script: "local t = cmsgpack.unpack('\\147\\1\\192\\3') return {t[1], tostring(t[2]), t[3]}"},
		{name: "cmsgpack unpack too many", script: "return select('#', cmsgpack.unpack(string.rep('\\1', 7999)))"},
		{name: "cmsgpack unpack too many 2", script: "return select('#', cmsgpack.unpack(string.rep('\\1', 8000)))"},
		{name: "cmsgpack unpack deep", script: "return type(cmsgpack.unpack(string.rep('\\145', 3998) .. '\\1'))"},
		{name: "cmsgpack unpack too deep", script: "return type(cmsgpack.unpack(string.rep('\\145', 3999) .. '\\1'))"},
		{name: "cmsgpack unpack too deep 2", script: "return type(cmsgpack.unpack(string.rep('\\145', 4000) .. '\\1'))"},
		{name: "cmsgpack unpack deep map", script: "return type(cmsgpack.unpack(string.rep('\\129\\1', 4000) .. '\\1'))"},
		// unpack_one and unpack_limit.
		{name: "cmsgpack unpack_one", script: "local s = cmsgpack.pack(1, 'a', {2}) local o1, a = cmsgpack.unpack_one(s) local o2, b = cmsgpack.unpack_one(s, o1) local o3, c = cmsgpack.unpack_one(s, o2) return {o1, a, o2, b, o3, c}"},
		{name: "cmsgpack unpack_one end", script: "local s = cmsgpack.pack(1) return {cmsgpack.unpack_one(s, 1)}"},
		{name: "cmsgpack unpack_one past end", script: "return {cmsgpack.unpack_one('\\1', 2)}"},
		{name: "cmsgpack unpack_one negative", script: "return {cmsgpack.unpack_one('\\1\\2', -1)}"},
		{name: "cmsgpack unpack_one bad offset", script: "return {cmsgpack.unpack_one('\\1', 'x')}"},
		{name: "cmsgpack unpack_one string offset", script: "return {cmsgpack.unpack_one('\\1\\2', '1')}"},
		{name: "cmsgpack unpack_one float offset", script: "return {cmsgpack.unpack_one('\\1\\2\\3', 1.9)}"},
		{name: "cmsgpack unpack_one empty", script: "return {cmsgpack.unpack_one('')}"},
		{name: "cmsgpack unpack_one extra args", script: "return {cmsgpack.unpack_one('\\1\\2', 0, 'x', 'y')}"},
		{name: "cmsgpack unpack_limit", script: "local s = cmsgpack.pack(1, 2, 3, 4, 5) return {cmsgpack.unpack_limit(s, 2), cmsgpack.unpack_limit(s, 2, 2)}"},
		{name: "cmsgpack unpack_limit all", script: "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 10)}"},
		{name: "cmsgpack unpack_limit zero", script: "return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 0)}"},
		{name: "cmsgpack unpack_limit zero offset", script: "return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 0, 1)}"},
		{name: "cmsgpack unpack_limit negative", script: "return {cmsgpack.unpack_limit('\\1\\2\\3', -1)}"},
		{name: "cmsgpack unpack_limit no limit", script: "return {cmsgpack.unpack_limit('\\1')}"},
		{name: "cmsgpack unpack_limit missing", script: "return {cmsgpack.unpack_limit('\\1\\205', 5)}"},
		{name: "cmsgpack names", script: "return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION, type(cmsgpack_safe)}"},
		{name: "cmsgpack method call", script: "return #cmsgpack:pack()"},
		// struct.
		hexCase("struct ints", "struct.pack('bBhHlLiIT', -1, 255, -2, 65535, -3, 2^40, -4, 4294967295, 7)"),
		hexCase("struct big endian", "struct.pack('>bhlii3I5', 1, 2, 3, 4, -5, 6)"),
		hexCase("struct wide", "struct.pack('<i16>i12I9', -1, 2^40, 3)"),
		hexCase("struct out of range", "struct.pack('bhiLI', 300, 70000, 2^40, 2^64, -1)"),
		hexCase("struct floats", "struct.pack('fd>fd', 0.1, 0.1, 1.5, -2.25)"),
		hexCase("struct strings", "struct.pack('c3c0sxc', 'abcdef', 'xy', 'zz', 'q')"),
		hexCase("struct align", "struct.pack('!4bibhd!bi !2bd', 1, 2, 3, 4, 5, 6, 7, 8, 9)"),
		hexCase("struct align default", "struct.pack('!bd', 1, 2)"),
		{name: "struct unpack", script: "return {struct.unpack('bBhHlLiI', struct.pack('bBhHlLiI', -1, 255, -2, 65535, -3, 2^40, -4, 4294967295))}"},
		{name: "struct unpack wide", script: "return {struct.unpack('>i16<I9i3', struct.pack('>i16<I9i3', -7, 2^50, -8))}"},
		{name: "struct unpack floats", script: "local a, b, c = struct.unpack('>fd', struct.pack('>fd', 0.1, 0.1)) return {tostring(a), tostring(b), c}"},
		{name: "struct unpack strings", script: "return {struct.unpack('c2sc0', 'abhello\\0\\3xyzw')}"},
		{name: "struct unpack c0 from string", script: "return {struct.unpack('c1c0', '3xyzw')}"},
		{name: "struct unpack c0 no size", script: "return {struct.unpack('c0', 'abc')}"},
		{name: "struct unpack c0 not number", script: "return {struct.unpack('c1c0', 'axyz')}"},
		{name: "struct unpack offset", script: "return {struct.unpack('bb', '\\1\\2\\3\\4', 2)}"},
		{name: "struct unpack offset zero", script: "return {struct.unpack('b', '\\1', 0)}"},
		{name: "struct unpack offset negative", script: "return {struct.unpack('b', '\\1', -1)}"},
		{name: "struct unpack offset negative empty", script: "return {struct.unpack('', '\\1', -1)}"},
		{name: "struct unpack short", script: "return {struct.unpack('i', '\\1\\2')}"},
		{name: "struct unpack unfinished", script: "return {struct.unpack('s', 'abc')}"},
		{name: "struct unpack x", script: "return {struct.unpack('xbx', '\\1\\2\\3')}"},
		{name: "struct unpack align", script: "return {struct.unpack('!4bi', struct.pack('!4bi', 1, 2))}"},
		{name: "struct unpack too many", script: "return select('#', struct.unpack(string.rep('b', 8000), string.rep('\\1', 8000)))"},
		{name: "struct unpack 7995", script: "return select('#', struct.unpack(string.rep('b', 7995), string.rep('\\1', 8000)))"},
		{name: "struct size", script: "return {struct.size('bhilT'), struct.size('!bd'), struct.size('!4bd'), struct.size('c5i3'), struct.size('>< x'), struct.size('zq'), struct.size('')}"},
		{name: "struct size s", script: "return struct.size('s')"},
		{name: "struct size c0", script: "return struct.size('c0')"},
		{name: "struct size invalid", script: "return struct.size('b#')"},
		{name: "struct pack invalid", script: "return struct.pack('z', 1)"},
		{name: "struct unpack invalid", script: "return struct.unpack('y', 'a')"},
		{name: "struct pack too big", script: "return struct.pack('i33', 1)"},
		{name: "struct pack overflow", script: "return struct.pack('c99999999999', 'a')"},
		{name: "struct pack align not power", script: "return struct.pack('!3b', 1)"},
		{name: "struct pack align 0", script: "return struct.pack('!0b', 1)"},
		{name: "struct pack short string", script: "return struct.pack('bc5', 1, 'ab')"},
		{name: "struct pack missing", script: "return struct.pack('bb', 1)"},
		{name: "struct pack not number", script: "return struct.pack('b', 'x')"},
		{name: "struct pack string number", script: "return struct.pack('b>i', '65', '66')"},
		{name: "struct pack number string", script: "return struct.pack('c0', 12.5)"},
		{name: "struct pack no format", script: "return struct.pack()"},
		{name: "struct pack nul format", script: "return struct.pack('b\\0b', 65, 66)"},
		{name: "struct readonly", script: "struct.pack = function() end"},
		{name: "struct keys", script: "local t = {} for k in pairs(struct) do t[#t+1] = k end table.sort(t) return t"},
	}
}

// msgpackCircular is Redis's "cmsgpack can pack and unpack circular
// references?".
const msgpackCircular = hexLua + `local a = {x=nil,y=5}
local b = {x=a}
a['x'] = b
local encoded = cmsgpack.pack(a)
local re = cmsgpack.unpack(encoded)
assert(re)
assert(re.x)
assert(re.x.x.y == re.y)
assert(re.x.x.x.x.y == re.y)
assert(re.x.x.x.x.x.x.y == re.y)
assert(re.x.x.x.x.x.x.x.x.x.x.y == re.y)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil)
return {hex(encoded), re.x.x.x.x.x.x.x.x.y == re.y, re.y == 5}`

// msgpackSmoke is Redis's "cmsgpack pack/unpack smoke test".
const msgpackSmoke = `
local str_lt_32 = string.rep("x", 30)
local str_lt_255 = string.rep("x", 250)
local str_lt_65535 = string.rep("x", 65530)
local str_long = string.rep("x", 100000)
local array_lt_15 = {1, 2, 3, 4, 5}
local array_lt_65535 = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}
local array_big = {}
for i=1, 100000 do array_big[i] = i end
local map_lt_15 = {a=1, b=2}
local map_big = {}
for i=1, 100000 do map_big[tostring(i)] = i end
local some_map = {s1=str_lt_32, s2=str_lt_255, s3=str_lt_65535, s4=str_long, d1=0.1,
  i1=1, i2=250, i3=65530, i4=100000, i5=2^40, i6=-1, i7=-120, i8=-32000, i9=-100000, i10=-3147483648,
  a1=array_lt_15, a2=array_lt_65535, a3=array_big, m1=map_lt_15, m2=map_big, b1=false, b2=true, n=nil}
local encoded = cmsgpack.pack(some_map)
local decoded = cmsgpack.unpack(encoded)
assert(table.concat(some_map) == table.concat(decoded))
local offset, decoded_one = cmsgpack.unpack_one(encoded, 0)
assert(table.concat(some_map) == table.concat(decoded_one))
assert(offset == -1)
local encoded_multiple = cmsgpack.pack(str_lt_32, str_lt_255, str_lt_65535, str_long)
local offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, 0)
assert(obj == str_lt_32)
offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
assert(obj == str_lt_255)
offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
assert(obj == str_lt_65535)
offset, obj = cmsgpack.unpack_limit(encoded_multiple, 1, offset)
assert(obj == str_long)
assert(offset == -1)
return {#encoded, decoded.a3[100000], decoded.m2['99999'], decoded.i10, decoded.d1 == 0.1, decoded.s4 == str_long}
`

// evalString runs script in e with args as ARGV and returns its reply.
func evalString(t *testing.T, e *Engine, script string, args ...string) string {
	t.Helper()
	argv := [][]byte{[]byte(script), []byte("0")}
	for _, a := range args {
		argv = append(argv, []byte(a))
	}
	r, err := e.Eval(context.Background(), Invocation{Args: argv, Proto: 2, Caller: newBlockingCaller(false)})
	if err != nil {
		t.Fatal(err)
	}
	return string(r)
}

// TestMsgpackRedisCases: the answers Redis's own tests expect.
func TestMsgpackRedisCases(t *testing.T) {
	e := New(Options{})
	defer e.Close()
	for _, c := range []struct{ script, want string }{
		{hexLua + "return hex(cmsgpack.pack(0.1))", "$18\r\ncb3fb999999999999a\r\n"},
		{hexLua + "return hex(cmsgpack.pack(-1099511627776))", "$18\r\nd3ffffff0000000000\r\n"},
		{msgpackSmoke, "*6\r\n:1491977\r\n:100000\r\n:99999\r\n:-3147483648\r\n:1\r\n:1\r\n"},
		{msgpackCircular, "*3\r\n$146\r\n82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0\r\n:1\r\n:1\r\n"},
		{"cmsgpack.pack = function() return 1 end", "-ERR user_script:1: Attempt to modify a readonly table"},
		{"return cmsgpack.pack()", "-ERR user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.)"},
		{"return cmsgpack.unpack('\\205')", "-ERR user_script:1: Missing bytes in input."},
		{"return cmsgpack.unpack('\\193')", "-ERR user_script:1: Bad data format in input."},
	} {
		if got := evalString(t, e, c.script); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q:\n got %q\nwant %q...", c.script, got, c.want)
		}
	}
}

// TestMsgpackRoundTrip packs random nested values and unpacks them
// again: every value must come back equal.
func TestMsgpackRoundTrip(t *testing.T) {
	e := New(Options{})
	defer e.Close()
	for seed := 1; seed <= 20; seed++ {
		got := evalString(t, e, msgpackRandomRoundTrip, strconv.Itoa(seed))
		if got != "+OK\r\n" {
			t.Fatalf("seed %d: %q", seed, got)
		}
	}
}

// msgpackRandomRoundTrip builds a random value from ARGV[1]'s seed, packs
// it with a few others, unpacks all and compares deeply; it answers OK
// or the first difference as an error.
const msgpackRandomRoundTrip = `
math.randomseed(tonumber(ARGV[1]))
local function rnd(depth)
  local k = math.random(0, depth < 4 and 9 or 6)
  if k == 0 then return math.random(-200, 200)
  elseif k == 1 then return math.random(-2^31, 2^31) * (math.random(2) == 1 and 1 or 2^20)
  elseif k == 2 then return (math.random() - 0.5) * 2 ^ math.random(-100, 100)
  elseif k == 3 then return math.random(0, 1000) / 8
  elseif k == 4 then return string.rep(string.char(math.random(0, 255)), math.random(0, 300))
  elseif k == 5 then return math.random(2) == 1
  elseif k == 6 then local n = math.random(0, 40) local s = '' for i = 1, n do s = s .. string.char(math.random(0, 255)) end return s
  elseif k <= 8 then local t = {} for i = 1, math.random(0, 20) do t[i] = rnd(depth + 1) end return t
  else local t = {} for i = 1, math.random(0, 20) do t[tostring(math.random(1, 1000))] = rnd(depth + 1) ; t[math.random(1, 1000) + 0.5] = rnd(depth + 1) end return t
  end
end
local function same(a, b, path)
  if type(a) ~= type(b) then return path .. ': ' .. type(a) .. ' vs ' .. type(b) end
  if type(a) ~= 'table' then
    if a ~= b then return path .. ': ' .. tostring(a) .. ' vs ' .. tostring(b) end
    return nil
  end
  for k, v in pairs(a) do local d = same(v, b[k], path .. '.' .. tostring(k)) if d then return d end end
  for k, v in pairs(b) do if a[k] == nil then return path .. ': extra ' .. tostring(k) end end
  return nil
end
local vals = {}
for i = 1, 5 do vals[i] = rnd(0) end
local packed = cmsgpack.pack(vals[1], vals[2], vals[3], vals[4], vals[5])
local back = {cmsgpack.unpack(packed)}
local d = same(vals, back, 'unpack')
if d then return redis.error_reply(d) end
local off, i = 0, 1
while off ~= -1 do
  local v
  off, v = cmsgpack.unpack_one(packed, off)
  d = same(vals[i], v, 'unpack_one ' .. i)
  if d then return redis.error_reply(d) end
  i = i + 1
end
if i ~= 6 then return redis.error_reply('unpack_one count ' .. i) end
return redis.status_reply('OK')
`
