package scripting

// Differential tests: each script runs as EVAL in a real redis-server and
// in an Engine whose Caller runs the script's commands in that same
// server (redisCaller), from the same keyspace; the reply bytes must be
// identical. The redis-server here is 7.0, the package follows 7.2: where
// 7.2 answers differently (checked against 7.2's source), or where
// gopher-lua words a runtime error differently from Lua 5.1, the case
// says what ours must answer and why, and Redis's reply is logged.
//
// Run: go test -count=1 -run Compat ./scripting/

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

type compatCase struct {
	name   string
	script string
	keys   []string
	args   []string
	setup  []string // commands, one a line, split on spaces
	proto  int      // the client's protocol; 0 means 2
	ro     bool     // EVAL_RO
	// want, when set, is what ours must answer instead of Redis 7.0's
	// reply; note says why.
	want, note string
}

func TestCompatEval(t *testing.T) {
	addr := startRedis(t)
	ctrl := dialRaw(t, addr, 2)
	evalConns := map[int]*rawConn{2: dialRaw(t, addr, 2), 3: dialRaw(t, addr, 3)}
	rc := newRedisCaller(t, addr)
	e := New(Options{})
	for _, c := range append(compatCases(), libCompatCases()...) {
		t.Run(c.name, func(t *testing.T) {
			proto := c.proto
			if proto == 0 {
				proto = 2
			}
			reset := func() {
				ctrl.do("FLUSHALL")
				ctrl.do("SCRIPT", "FLUSH")
				for _, line := range c.setup {
					ctrl.do(strings.Fields(line)...)
				}
			}
			reset()
			args := evalArgs(c.script, c.keys, c.args)
			if c.ro {
				args[0] = "EVAL_RO"
			}
			theirs := evalConns[proto].do(args...)
			reset()
			ours, err := e.Eval(context.Background(), Invocation{Args: byteArgs(args[1:]), ReadOnly: c.ro, Proto: proto, Caller: rc})
			if err != nil {
				t.Fatal(err)
			}
			want := theirs
			if c.want != "" {
				want = []byte(c.want)
				t.Logf("redis 7.0 answers %q (%s)", theirs, c.note)
			}
			if !bytes.Equal(ours, want) {
				t.Errorf("script %q\nours: %q\nwant: %q", c.script, ours, want)
			}
		})
	}
}

// sha is the digest a case's script runs under, for expected texts.
func sha(script string) string { return SHA1([]byte(script)) }

// errorAt is the reply to script when it raises msg on line.
func errorAt(script string, line int, msg string) string {
	return fmt.Sprintf("-ERR user_script:%d: %s script: %s, on @user_script:%d.\r\n", line, msg, sha(script), line)
}

func compatCases() []compatCase {
	const nilIndex = "local t = nil\nreturn t.x"
	const arith = "local x\nreturn x + 1"
	const callsDisagree = "local t = {}\nt.foo() t.bar()"
	return []compatCase{
		// Lua values to replies.
		{name: "integer", script: "return 42"},
		{name: "truncated", script: "return {3.99, -3.99, 0.5, -0.5}"},
		{name: "huge number", script: "return 1e20"},
		{name: "nan", script: "return 0/0"},
		{name: "string", script: "return 'hello'"},
		{name: "binary string", script: "return 'a\\0b\\r\\n'"},
		{name: "true", script: "return true"},
		{name: "false", script: "return false"},
		{name: "nil", script: "return nil"},
		{name: "nothing", script: "local x = 1"},
		{name: "empty table", script: "return {}"},
		{name: "array", script: "return {1, 'two', {3, {4}}}"},
		{name: "array stops at nil", script: "return {1, nil, 3}"},
		{name: "array ignores keys", script: "return {1, 2, foo='bar'}"},
		{name: "booleans in array", script: "return {true, false, 1}"},
		{name: "first value only", script: "return 1, 2"},
		{name: "status", script: "return {ok='FINE'}"},
		{name: "status newlines", script: "return {ok='a\\r\\nb'}"},
		{name: "error table", script: "return {err='MYCODE went wrong'}"},
		{name: "error newlines", script: "return {err='x\\ny\\r\\n'}"},
		{name: "empty error", script: "return {err=''}"},
		{name: "error wins over ok", script: "return {err='E1', ok='O1'}"},
		{name: "non-string err is array", script: "return {err=1, 5}"},
		{name: "status_reply", script: "return redis.status_reply('PONG')"},
		{name: "error_reply code", script: "return redis.error_reply('MY Error')"},
		{name: "error_reply no code", script: "return redis.error_reply('oops')"},
		{name: "error_reply dash", script: "return redis.error_reply('-WRONG stuff')"},
		{name: "error_reply empty", script: "return redis.error_reply('')"},
		{name: "error_reply bad args", script: "return redis.error_reply(1)"},
		{name: "status_reply bad args", script: "return redis.status_reply()"},
		{name: "double resp2", script: "return {double=1.5}"},
		{name: "double resp3", script: "return {double=1.5}", proto: 3},
		{name: "double integral", script: "return {double=3}", proto: 3},
		{name: "double inf", script: "return {double=1/0}", proto: 3},
		{name: "double shortest", script: "return {double=0.1}",
			want: "$3\r\n0.1\r\n", note: "7.2 prints doubles shortest (fpconv_dtoa), 7.0 with %.17g"},
		{name: "double shortest resp3", script: "return {double=0.1}", proto: 3,
			want: ",0.1\r\n", note: "7.2 prints doubles shortest (fpconv_dtoa), 7.0 with %.17g"},
		{name: "big number", script: "return {big_number='123456789012345678901234567890'}"},
		{name: "big number resp3", script: "return {big_number='1234567890123456789012'}", proto: 3},
		{name: "verbatim", script: "return {verbatim_string={format='txt', string='hi'}}"},
		{name: "verbatim resp3", script: "return {verbatim_string={format='md', string='hi'}}", proto: 3},
		{name: "verbatim incomplete", script: "return {verbatim_string={format='txt'}}", proto: 3},
		{name: "map resp2", script: "return {map={a=1}}"},
		{name: "map resp3", script: "return {map={a={1,2}}}", proto: 3},
		{name: "set resp2", script: "return {set={x=true}}"},
		{name: "set resp3", script: "return {set={x=true}}", proto: 3},
		{name: "setresp3 booleans resp2", script: "redis.setresp(3) return {true, false}"},
		{name: "setresp3 booleans resp3", script: "redis.setresp(3) return {true, false}", proto: 3},
		{name: "resp2 false to resp3 client", script: "return false", proto: 3},
		{name: "nil in resp3", script: "return {1, nil}", proto: 3},

		// Replies to Lua values.
		{name: "call status", script: "return redis.call('set', KEYS[1], ARGV[1])", keys: []string{"k"}, args: []string{"v"}},
		{name: "call type status", script: "return type(redis.call('set', 'k', 'v'))"},
		{name: "call ok field", script: "return redis.call('set', 'k', 'v').ok"},
		{name: "call bulk", script: "return redis.call('get', 'k')", setup: []string{"SET k hello"}},
		{name: "call null is false", script: "return {type(redis.call('get', 'nokey')), redis.call('get', 'nokey') == false}"},
		{name: "call integer", script: "return redis.call('incrby', 'n', 5) + 1", setup: []string{"SET n 10"}},
		{name: "call array", script: "return redis.call('lrange', 'l', 0, -1)", setup: []string{"RPUSH l a b c"}},
		{name: "call hgetall resp2", script: "return redis.call('hgetall', 'h')", setup: []string{"HSET h f v"}},
		{name: "call hgetall resp3", script: "redis.setresp(3) return redis.call('hgetall', 'h')", setup: []string{"HSET h f v"}},
		{name: "call hgetall resp3 client", script: "redis.setresp(3) return redis.call('hgetall', 'h')", setup: []string{"HSET h f v"}, proto: 3},
		{name: "resp3 map is a table", script: "redis.setresp(3) local r = redis.call('hgetall', 'h') return r.map.f", setup: []string{"HSET h f v"}},
		{name: "resp3 set", script: "redis.setresp(3) local r = redis.call('smembers', 's') return {r.set.m == true, type(r.set)}", setup: []string{"SADD s m"}},
		{name: "resp3 set passthrough", script: "redis.setresp(3) return redis.call('smembers', 's')", setup: []string{"SADD s m"}, proto: 3},
		{name: "resp3 double", script: "redis.setresp(3) local r = redis.call('zscore', 'z', 'a') return {r.double * 2, type(r)}", setup: []string{"ZADD z 1.5 a"}},
		{name: "resp3 double passthrough", script: "redis.setresp(3) return redis.call('zscore', 'z', 'a')", setup: []string{"ZADD z 1.5 a"}, proto: 3},
		{name: "resp3 double to resp2", script: "redis.setresp(3) return redis.call('zscore', 'z', 'a')", setup: []string{"ZADD z 2.25 a"}},
		{name: "resp3 null is nil", script: "redis.setresp(3) return {type(redis.call('get', 'nokey'))}"},
		{name: "resp3 verbatim", script: "redis.setresp(3) local r = redis.call('info', 'server') return {type(r.verbatim_string.string), r.verbatim_string.format}"},
		{name: "setresp back to 2", script: "redis.setresp(3) redis.setresp(2) return type(redis.call('get', 'nokey'))"},
		{name: "setresp bad", script: "redis.setresp(4)"},
		{name: "setresp no args", script: "redis.setresp()"},
		{name: "pcall error table", script: "local r = redis.pcall('incr', 's') return {type(r), r.err}", setup: []string{"SET s x"}},
		{name: "pcall error passthrough", script: "return redis.pcall('incr', 's')", setup: []string{"SET s x"}},
		{name: "error inside array", script: "return {1, redis.pcall('incr', 's'), 3}", setup: []string{"SET s x"}},
		{name: "call raises", script: "redis.call('incr', 's')\nreturn 1", setup: []string{"SET s x"}},
		{name: "call raises wrongtype", script: "return redis.call('lpush', 's', 'x')", setup: []string{"SET s x"}},
		{name: "integer args", script: "redis.call('set', 'k', 123456789012) return redis.call('get', 'k')"},
		{name: "negative integer arg", script: "redis.call('set', 'k', -5) return redis.call('get', 'k')"},
		{name: "float arg", script: "redis.call('set', 'k', 0.1) return redis.call('get', 'k')",
			want: "$3\r\n0.1\r\n", note: "7.2 prints number arguments shortest (fpconv_dtoa), 7.0 with %.17g"},
		{name: "float arg exponent", script: "redis.call('set', 'k', 1e300) return redis.call('get', 'k')",
			want: "$6\r\n1e+300\r\n", note: "7.2 prints number arguments shortest (fpconv_dtoa), 7.0 with %.17g"},
		{name: "bad arg type", script: "return redis.call('set', 'k', {})"},
		{name: "bad arg nil", script: "return redis.pcall('set', 'k', nil)"},
		{name: "bad arg boolean", script: "return redis.call('set', 'k', true)"},
		{name: "no args", script: "return redis.call()"},
		{name: "no args pcall", script: "return redis.pcall()"},
		{name: "unknown command", script: "return redis.call('nosuch', 'x')"},
		{name: "unknown command pcall", script: "return redis.pcall('nosuch')"},
		{name: "wrong arity", script: "return redis.call('get')"},
		{name: "wrong arity pcall", script: "local e = redis.pcall('get', 'a', 'b') return e.err"},
		{name: "noscript command", script: "return redis.call('multi')"},
		{name: "eval from script", script: "return redis.call('eval', 'return 1', 0)"},
		{name: "write in eval_ro", script: "return redis.call('set', 'k', 'v')", ro: true},
		{name: "read in eval_ro", script: "return redis.call('get', 'k')", ro: true, setup: []string{"SET k v"}},
		{name: "write pcall in eval_ro", script: "return redis.pcall('incr', 'k')", ro: true},
		{name: "ignore_error_stats_update", script: "local e = redis.pcall('nosuch') return tostring(e.ignore_error_stats_update)"},
		{name: "argument error has no stats flag", script: "local e = redis.pcall() return tostring(e.ignore_error_stats_update)"},

		// Errors and where they happened.
		{name: "runtime error", script: "return nil + 1"},
		{name: "runtime error line", script: "local a = 1\nlocal b = 2\nreturn a + {}"},
		{name: "error()", script: "error('boom')"},
		{name: "error level 0", script: "error('boom', 0)"},
		{name: "error table", script: "error({err='MY boom'})"},
		{name: "error number", script: "error(42)"},
		{name: "error nil", script: "error()"},
		{name: "error in function", script: "local function f()\n  error('inner')\nend\nf()"},
		{name: "call error line", script: "local x = 1\n\nredis.call('nosuch')"},
		{name: "assert", script: "assert(false, 'nope')"},
		{name: "assert default", script: "assert(1 == 2)"},
		{name: "index nil", script: nilIndex,
			want: errorAt(nilIndex, 2, "attempt to index a nil value"),
			note: "Lua 5.1 names the variable (local 't'); gopher-lua does not know it"},
		{name: "arith on local", script: arith,
			want: errorAt(arith, 2, "attempt to perform arithmetic on a nil value"),
			note: "Lua 5.1 names the variable (local 'x'); gopher-lua does not know it"},
		// A failed call names what it called, as Lua 5.1 does.
		{name: "call field", script: "local t = {}\nt.foo()"},
		{name: "call method", script: "local t = {}\nt:foo()"},
		{name: "call local", script: "local x\nx()"},
		{name: "call local number", script: "local x = 5\nx()"},
		{name: "call local table", script: "local t = setmetatable({}, {__call = 5})\nt()"},
		{name: "call upvalue", script: "local x\nlocal function f() x() end\nf()"},
		{name: "call nested field", script: "local a = {b = {}}\na.b.c()"},
		{name: "call global", script: "_VERSION()"},
		{name: "call redis field", script: "redis.nosuch()"},
		{name: "call computed key", script: "local t, k = {}, 'a'\nt[k]()"},
		{name: "call tail", script: "local t = {}\nreturn t.foo()"},
		{name: "call result of call", script: "return loadstring(string.dump(function() return 1 end))()"},
		{name: "call generator", script: "for k in 5 do end"},
		{name: "call spanning lines", script: "local t = {}\nt.foo(\n1,\n2)"},
		{name: "call after local on line", script: "local v = redis.call('get', 'k') redis.nosuch(v)"},
		{name: "call after call on line", script: "redis.call('set', 'k', 'v') redis.nosuch()"},
		{name: "call of call argument", script: "local t = {}\nreturn t.foo(redis.call('get', 'k'), unpack({1, 2}))"},
		{name: "call repeated on line", script: "local t = {}\nt.foo() t.foo()"},
		{name: "calls on line disagree", script: callsDisagree,
			want: errorAt(callsDisagree, 2, "attempt to call a nil value"),
			note: "either call on the line may have failed: gopher-lua keeps no program counter, and both hold a nil"},
		{name: "concat error", script: "return 'a' .. {}"},
		{name: "compare error", script: "return {} < {}"},
		{name: "compare mixed", script: "return 1 < 'x'"},
		{name: "compile error eof", script: "local a = "},
		{name: "compile error eof multiline", script: "local a = 1\nif a then",
			want: "-ERR Error compiling script (new function): user_script:2: unexpected symbol near '<eof>'\r\n",
			note: "gopher-lua's parser says only that the input ended; Lua 5.1 says what it expected"},
		{name: "pcall returns message", script: "return {pcall(redis.call, 'nosuch')}"},
		{name: "pcall error table", script: "local ok, e = pcall(error, {err='X y'}) return e"},
		{name: "pcall error string", script: "local ok, e = pcall(error, 'msg') return {tostring(ok), e}"},
		{name: "pcall success", script: "return {pcall(function() return 1, 2 end)}"},
		{name: "xpcall", script: "return {xpcall(function() error('e') end, function(m) return 'h:' .. m end)}"},
		{name: "pcall no args", script: "return pcall()"},

		// The sandbox.
		{name: "global write", script: "x = 1"},
		{name: "global read", script: "return y"},
		{name: "library write", script: "string.foo = 1"},
		{name: "redis write", script: "redis.call = nil"},
		{name: "_G write", script: "_G.x = 1"},
		{name: "rawset _G", script: "rawset(_G, 'a', 1)"},
		{name: "rawset library", script: "rawset(math, 'pi', 3)"},
		{name: "setmetatable _G", script: "setmetatable(_G, {})"},
		{name: "getmetatable _G", script: "return type(getmetatable(_G))"},
		{name: "getmetatable _G write", script: "getmetatable(_G).__index = nil"},
		{name: "table.insert library", script: "table.insert(string, 'x')"},
		{name: "rawget _G", script: "return {rawget(_G, 'nothing') == nil, type(rawget(_G, 'redis'))}"},
		{name: "_G is _G", script: "return {_G == _G._G, _G == getfenv(0), _G == getfenv(1)}"},
		{name: "print", script: "print('x')"},
		{name: "os", script: "return os.time()"},
		{name: "io", script: "return io"},
		{name: "require", script: "return require('os')"},
		{name: "loadfile", script: "return loadfile('/etc/passwd')"},
		{name: "dofile", script: "return dofile('/etc/passwd')"},
		{name: "debug", script: "return debug"},
		{name: "module", script: "return module"},
		{name: "_VERSION", script: "return _VERSION"},
		{name: "KEYS ARGV", script: "return {#KEYS, #ARGV, KEYS[1], ARGV[2]}", keys: []string{"a", "b"}, args: []string{"c", "d"}},
		{name: "KEYS writable", script: "KEYS[1] = 'z' return KEYS[1]", keys: []string{"a"}},
		{name: "loadstring", script: "return loadstring('return 1 + 1')()"},
		{name: "loadstring global write", script: "loadstring('y = 1')()"},
		{name: "loadstring syntax", script: "local f, e = loadstring('return +') return {tostring(f), type(e)}"},
		{name: "string metatable locked", script: "getmetatable('').__index = {}"},
		{name: "string metatable shows string", script: "return {rawequal(getmetatable('').__index, string), ('x'):rep(2)}"},
		{name: "newproxy", script: "return newproxy(true)"},
		{name: "getfenv", script: "return getfenv(0)"},
		{name: "error handler global", script: "return type(__redis__err__handler)"},
		{name: "table.foreach", script: "local s = 0 table.foreachi({4, 5}, function(i, v) s = s + i * v end) return {s, table.foreach({a=1}, function(k, v) return k .. v end)}"},
		{name: "table.setn", script: "table.setn({}, 1)"},
		{name: "table.getn", script: "return table.getn({1, 2, 3})"},
		{name: "string.gfind", script: "local r = {} for w in string.gfind('a b', '%a') do r[#r+1] = w end return r"},
		{name: "setfenv local env", script: "local function f() x = 5 return x end setfenv(f, {}) return f()"},
		{name: "setfenv C function", script: "setfenv(tostring, {})"},
		{name: "pairs over library", script: "local n = 0 for k in pairs(bit) do n = n + 1 end return n"},
		{name: "next over _G", script: "return type(next(_G))"},
		{name: "ipairs", script: "local s = 0 for i, v in ipairs({5, 6, 7}) do s = s + i * v end return s"},
		{name: "type of globals", script: "return {type(redis), type(cjson), type(bit), type(string), type(math), type(table), type(coroutine)}"},
		{name: "coroutine", script: "local co = coroutine.wrap(function() coroutine.yield(1) return 2 end) return {co(), co()}"},
		{name: "string methods", script: "return ('abc'):upper() .. string.rep('x', 3) .. string.format('%05.1f|%d|%s', 3.14159, 42, 'z')"},
		{name: "string.rep", script: "return {string.rep('ab', 3), string.rep('x', 0), string.rep('x', -1), #string.rep('', 1e12)}"},
		{name: "string.format number", script: "return string.format('%s', 12)"},
		{name: "table functions", script: "local t = {3, 1, 2} table.sort(t) table.insert(t, 4) return table.concat(t, ',')"},
		{name: "unpack select", script: "return {select('#', unpack({1, 2, 3})), select(2, 'a', 'b', 'c')}"},
		{name: "tostring numbers", script: "return {tostring(1e15), tostring(0.1), tostring(1/3), tostring(-0), tostring(2^53), tostring(1e100)}"},
		{name: "tostring others", script: "return {tostring(nil), tostring(true), tostring('s')}"},
		{name: "tonumber", script: "return {tonumber('0x10'), tonumber('  12  '), tonumber('1e2'), tonumber('z', 36), tostring(tonumber('x'))}"},
		{name: "math", script: "return {math.floor(3.7), math.max(1, 5, 3), math.fmod(7, 3), math.abs(-2)}"},
		{name: "math.random seeded", script: "math.randomseed(42) return {math.random(1000000), math.random(10, 20), math.random(1), math.floor(math.random() * 1000000)}"},
		{name: "math.random empty", script: "return math.random(0)"},
		{name: "deep recursion", script: "local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end return f(5000)"},
		{name: "stack overflow", script: "local function f() return 1 + f() end return f()",
			want: "-ERR stack overflow\r\n", note: "gopher-lua's full call stack leaves no room for the error handler, nor a position"},
		{name: "stack overflow in pcall", script: "local function f() return 1 + f() end return {pcall(f)}",
			want: "*2\r\n$-1\r\n$14\r\nstack overflow\r\n", note: "gopher-lua's full call stack leaves no position"},
		{name: "long loop", script: "local s = 0 for i = 1, 100000 do s = s + i end return s"},
		{name: "gcinfo", script: "return {gcinfo() > 0, type(collectgarbage('count'))}"},

		// redis.* helpers.
		{name: "sha1hex", script: "return {redis.sha1hex(''), redis.sha1hex('abc'), redis.sha1hex(123)}"},
		{name: "sha1hex no args", script: "return redis.sha1hex()"},
		{name: "log", script: "redis.log(redis.LOG_WARNING, 'from a script', 1) return 1"},
		{name: "log levels", script: "return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}"},
		{name: "log too few", script: "redis.log(redis.LOG_WARNING)"},
		{name: "log bad level", script: "redis.log(9, 'x')"},
		{name: "log level not a number", script: "redis.log('x', 'y')"},
		{name: "set_repl", script: "redis.set_repl(redis.REPL_ALL) return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL}"},
		{name: "set_repl bad", script: "redis.set_repl(8)"},
		{name: "set_repl no args", script: "redis.set_repl()",
			want: "-ERR redis.set_repl() requires one argument. script: " + sha("redis.set_repl()") + ", on @user_script:1.\r\n",
			note: "7.2 fixed the text's count"},
		{name: "replicate_commands", script: "return redis.replicate_commands()"},
		{name: "breakpoint", script: "return redis.breakpoint()"},
		{name: "acl_check_cmd", script: "return redis.acl_check_cmd('get', 'x')"},
		{name: "acl_check_cmd unknown", script: "return redis.acl_check_cmd('nosuch')"},
		{name: "version type", script: "return {type(redis.REDIS_VERSION), type(redis.REDIS_VERSION_NUM)}"},

		// cjson.
		{name: "cjson empty", script: "return cjson.encode({})"},
		{name: "cjson array", script: "return cjson.encode({1, 2, 3, 'x', true, false})"},
		{name: "cjson object", script: "return cjson.encode({a=1})"},
		{name: "cjson nested", script: "return cjson.encode({{1, {2}}, {x={y='z'}}})"},
		{name: "cjson numbers", script: "return cjson.encode({0.1, 1/3, 1e20, -0, 123456789012345, 1e-7, 3.0})"},
		{name: "cjson number keys", script: "return cjson.encode({[1.5]='a'})"},
		{name: "cjson holes", script: "return cjson.encode({1, nil, 3})"},
		{name: "cjson sparse ok", script: "return cjson.encode({[1]=1, [10]=2})"},
		{name: "cjson sparse error", script: "return cjson.encode({[1]=1, [20]=2})"},
		{name: "cjson mixed keys", script: "return cjson.encode({1, a=2})"},
		{name: "cjson escapes", script: "return cjson.encode('a/b\"c\\\\d\\n\\t\\1\\127\\200')"},
		{name: "cjson null", script: "return cjson.encode({cjson.null, 1})"},
		{name: "cjson nan", script: "return cjson.encode(0/0)"},
		{name: "cjson inf", script: "return cjson.encode({1/0})"},
		{name: "cjson function", script: "return cjson.encode({f=print2})"},
		{name: "cjson bad key", script: "return cjson.encode({[true]=1})"},
		{name: "cjson bad value", script: "return cjson.encode(function() end)"},
		{name: "cjson too deep", script: "local t = {} local c = t for i = 1, 1001 do c[1] = {} c = c[1] end return cjson.encode(t)"},
		{name: "cjson deep ok", script: "local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return #cjson.encode(t)"},
		{name: "cjson self reference", script: "local t = {} t[1] = t return cjson.encode(t)"},
		{name: "cjson no args", script: "return cjson.encode()"},
		{name: "cjson decode", script: "local v = cjson.decode('{\"a\":[1,2,{\"b\":null}],\"c\":\"x\\\\u00e9\\\\ud83d\\\\ude00\"}') return {v.a[1], v.a[2], v.a[3].b == cjson.null, v.c}"},
		{name: "cjson decode roundtrip", script: "return cjson.encode(cjson.decode('[1,\"a\",{},[],true,null]'))"},
		{name: "cjson decode numbers", script: "local v = cjson.decode('[0x10, 1e2, -0.5, 1E-2, 012, +3]') return {v[1], v[2], v[3] * 10, v[4] * 100, v[5], v[6]}"},
		{name: "cjson decode inf nan", script: "local v = cjson.decode('[inf, -Infinity, nan]') return {tostring(v[1]), tostring(v[2]), tostring(v[3] ~= v[3])}"},
		{name: "cjson decode scalar", script: "return {cjson.decode('\"s\"'), cjson.decode(' 5 '), tostring(cjson.decode('true'))}"},
		{name: "cjson decode error value", script: "return cjson.decode('[1,]')"},
		{name: "cjson decode error end", script: "return cjson.decode('[1] x')"},
		{name: "cjson decode error token", script: "return cjson.decode('tru')"},
		{name: "cjson decode error colon", script: "return cjson.decode('{\"a\" 1}')"},
		{name: "cjson decode error key", script: "return cjson.decode('{1:2}')"},
		{name: "cjson decode error comma", script: "return cjson.decode('{\"a\":1 \"b\":2}')"},
		{name: "cjson decode error string", script: "return cjson.decode('\"abc')"},
		{name: "cjson decode error escape", script: "return cjson.decode('\"a\\\\qb\"')"},
		{name: "cjson decode error unicode", script: "return cjson.decode('\"\\\\ud800x\"')"},
		{name: "cjson decode empty", script: "return cjson.decode('')"},
		{name: "cjson decode utf16", script: "return cjson.decode('a\\0b')"},
		{name: "cjson decode too deep", script: "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))"},
		{name: "cjson decode deep ok", script: "return type(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)))"},
		{name: "cjson decode nul ends", script: "return cjson.decode('12\\0 garbage')"},
		{name: "cjson config", script: "return {cjson.encode_max_depth(), cjson.decode_max_depth(), cjson.encode_number_precision(), tostring(cjson.encode_keep_buffer())}"},
		{name: "cjson sparse config", script: "return {cjson.encode_sparse_array()}"},
		{name: "cjson precision", script: "local c = cjson.new() c.encode_number_precision(3) return c.encode(3.14159)"},
		{name: "cjson precision bad", script: "return cjson.encode_number_precision(20)"},
		{name: "cjson invalid numbers", script: "local c = cjson.new() return {c.encode_invalid_numbers('null'), c.encode(1/0)}"},
		{name: "cjson new sparse", script: "local c = cjson.new() c.encode_sparse_array(true) return c.encode({[1]=1, [20]=2})"},
		{name: "cjson names", script: "return {cjson._NAME, cjson._VERSION}"},

		// bit.
		{name: "bit tobit", script: "return {bit.tobit(2^32 + 1), bit.tobit(-1), bit.tobit(2^31), bit.tobit(1.5), bit.tobit(2.5), bit.tobit('12')}"},
		{name: "bit tohex", script: "return {bit.tohex(-1), bit.tohex(255, -4), bit.tohex(255, 2), bit.tohex(0x12345678, 12), bit.tohex(1, 0)}"},
		{name: "bit ops", script: "return {bit.bnot(0), bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4), bit.bxor(0xf0, 0xff), bit.band()}"},
		{name: "bit shifts", script: "return {bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.lshift(1, 33), bit.rol(0x12345678, 12), bit.ror(0x12345678, 12), bit.bswap(0x12345678)}"},
		{name: "bit bad arg", script: "return bit.tobit(nil)"},
		{name: "bit bad arg table", script: "return bit.band(1, {})"},

		// Numbers of keys.
		{name: "numkeys not a number", script: "return 1", keys: nil, args: nil},
	}
}
