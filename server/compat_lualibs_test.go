package server

// Differential tests of the Lua libraries cmsgpack and struct: the same
// EVAL scripts to a real redis-server and to our server, raw replies
// compared, in both protocols. Redis's own cases (tests/unit/
// scripting.tcl) are here as Go, and random values packed from the same
// seed (math.random is Redis's lrand48 in both) must pack to the same
// bytes and come back equal.

import (
	"strconv"
	"testing"
)

func compatLuaLibScripts() []compatScript {
	hex := "local function hex(s) local h = '' for i = 1, #s do h = h .. string.format('%02x', string.byte(s, i)) end return h end\n"
	ev := func(script string, args ...string) compatStep {
		return ca(append([]string{"EVAL", script, "0"}, args...)...)
	}
	random := compatScript{name: "cmsgpack-random"}
	for seed := 1; seed <= 30; seed++ {
		random.steps = append(random.steps, ev(msgpackRandomScript, strconv.Itoa(seed)))
	}
	return []compatScript{
		{name: "cmsgpack-redis-tests", steps: []compatStep{
			ev(hex + "return hex(cmsgpack.pack(0.1))"),
			ev(hex + "return hex(cmsgpack.pack(-1099511627776))"),
			ev(`local a = {x=nil,y=5}
local b = {x=a}
a['x'] = b
local encoded = cmsgpack.pack(a)
local re = cmsgpack.unpack(encoded)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.y == re.y)
assert(re.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x.x == nil)
return {encoded, re.x.x.x.x.x.x.x.x.y == re.y, re.y == 5}`),
			ev("cmsgpack.pack = function() return 1 end"),
			ev("cmsgpack.unpack_one = nil"),
			ev("rawset(cmsgpack, 'pack', 1)"),
			ev("return pcall(function() cmsgpack.pack = 1 end)"),
			ev(`local s = string.rep('x', 65530)
local e = cmsgpack.pack('a', string.rep('x', 250), s, string.rep('y', 100000))
local o, v = cmsgpack.unpack_limit(e, 1, 0)
local o2, v2 = cmsgpack.unpack_limit(e, 1, o)
local o3, v3 = cmsgpack.unpack_limit(e, 1, o2)
local o4, v4 = cmsgpack.unpack_limit(e, 1, o3)
return {#e, o, v, o2, #v2, o3, v3 == s, o4, #v4}`),
		}},
		{name: "cmsgpack-values", steps: []compatStep{
			ev("return cmsgpack.pack(0, 127, 128, 255, 256, 65535, 65536, 2^32 - 1, 2^32, 2^53, 2^63, -1, -32, -33, -128, -129, -32768, -32769, -2^31, -2^31 - 1, -2^63)"),
			ev("return cmsgpack.pack(0.5, 0.1, 1/3, 1e300, 1/0, -1/0, 0/0, -0.0)"),
			ev("return cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('x', 32), true, false, nil, print, cjson.null)"),
			ev("return cmsgpack.pack({}, {1, 2, {3}}, {[1]='a', [3]='c'}, {k='v'}, {[2.5]=1}, {1, nil, 3})"),
			ev("local t = 1 for i = 1, 20 do t = {t} end return cmsgpack.pack(t)"),
			ev("local t = {} t[1] = t return cmsgpack.pack(t)"),
			ev("return cmsgpack.pack(ARGV)", "a", "b"),
			ev("return cmsgpack.pack()"),
			ev("local t = {} for i = 1, 4001 do t[i] = i end return cmsgpack.pack(unpack(t))"),
			ev("return {cmsgpack.unpack(cmsgpack.pack(1, 'two', 3.5, true, {4, {5}}, -6, 2^40, {a='b'}))}"),
			ev("return {cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255\\211\\128\\0\\0\\0\\0\\0\\0\\0\\202\\63\\192\\0\\0')}"),
			ev("return select('#', cmsgpack.unpack(''))"),
			ev("return cmsgpack.unpack()"),
			ev("return cmsgpack.unpack('\\205')"),
			ev("return cmsgpack.unpack('\\196\\1a')"),
			ev("return cmsgpack.unpack('\\129\\192\\1')"),
			ev("return select('#', cmsgpack.unpack(string.rep('\\1', 8000)))"),
			ev("return type(cmsgpack.unpack(string.rep('\\145', 3999) .. '\\1'))"),
			ev("local s = cmsgpack.pack(1, 'a', {2}) local o1, a = cmsgpack.unpack_one(s) local o2, b = cmsgpack.unpack_one(s, o1) local o3, c = cmsgpack.unpack_one(s, o2) return {o1, a, o2, b, o3, c}"),
			ev("return {cmsgpack.unpack_one('\\1', 2)}"),
			ev("return {cmsgpack.unpack_one('\\1\\2', -1)}"),
			ev("return {cmsgpack.unpack_one('\\1', 'x')}"),
			ev("local s = cmsgpack.pack(1, 2, 3, 4, 5) return {cmsgpack.unpack_limit(s, 2), cmsgpack.unpack_limit(s, 2, 2)}"),
			ev("return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 0)}"),
			ev("return {cmsgpack.unpack_limit('\\1\\2\\3', -1)}"),
			ev("return {cmsgpack.unpack_limit('\\1')}"),
			ev("return {cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}"),
		}},
		{name: "struct", steps: []compatStep{
			ev("return struct.pack('bBhHlLiIT', -1, 255, -2, 65535, -3, 2^40, -4, 4294967295, 7)"),
			ev("return struct.pack('>bhli3I5<i16fd!4bibhd', 1, 2, 3, -5, 6, -1, 0.1, 0.1, 1, 2, 3, 4, 5)"),
			ev("return struct.pack('c3c0sxc', 'abcdef', 'xy', 'zz', 'q')"),
			ev("return {struct.unpack('>bBhHlLiIc2sc0', struct.pack('>bBhHlLiIc2sb', -1, 255, -2, 65535, -3, 2^40, -4, 4294967295, 'ab', 'hi', 3) .. 'xyz')}"),
			ev("return {struct.unpack('bb', '\\1\\2\\3\\4', 2)}"),
			ev("return {struct.size('bhilT'), struct.size('!bd'), struct.size('c5i3')}"),
			ev("return struct.size('s')"),
			ev("return struct.pack('bb', 1)"),
			ev("return struct.pack('i33', 1)"),
			ev("return struct.pack('!3b', 1)"),
			ev("return struct.unpack('i', '\\1')"),
			ev("return struct.unpack('s', 'abc')"),
			ev("return struct.unpack('b', 'a', 0)"),
			ev("return struct.pack('z', 1)"),
			ev("struct.pack = function() end"),
		}},
		random,
	}
}

// msgpackRandomScript packs a random value, from ARGV[1]'s seed, of
// arrays, maps of one key (so that both servers iterate them alike) and
// scalars, unpacks it, checks it came back equal and answers the packed
// bytes.
const msgpackRandomScript = `
math.randomseed(tonumber(ARGV[1]))
local function rnd(depth)
  local k = math.random(0, depth < 5 and 9 or 6)
  if k == 0 then return math.random(-200, 200)
  elseif k == 1 then return math.random(-2^31, 2^31) * (math.random(2) == 1 and 1 or 2^20)
  elseif k == 2 then return (math.random() - 0.5) * 2 ^ math.random(-100, 100)
  elseif k == 3 then return math.random(0, 1000) / 8
  elseif k == 4 then return string.rep(string.char(math.random(0, 255)), math.random(0, 300))
  elseif k == 5 then return math.random(2) == 1
  elseif k == 6 then local s = '' for i = 1, math.random(0, 40) do s = s .. string.char(math.random(0, 255)) end return s
  elseif k <= 8 then local t = {} for i = 1, math.random(0, 20) do t[i] = rnd(depth + 1) end return t
  else return {[rnd(6)] = rnd(depth + 1)}
  end
end
local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= 'table' then return a == b end
  for k, v in pairs(a) do if not same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
local v1, v2, v3 = rnd(0), rnd(0), rnd(0)
local packed = cmsgpack.pack(v1, v2, v3)
local b1, b2, b3 = cmsgpack.unpack(packed)
assert(same(v1, b1) and same(v2, b2) and same(v3, b3), 'round trip')
return packed
`

func TestCompatLuaLibs(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatLuaLibScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}
