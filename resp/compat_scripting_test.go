package resp

// Differential tests of EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT: the
// same commands to a real redis-server and to our server, reply for reply
// in both protocols, as compat_test.go does; then real lock libraries,
// which run their locks as scripts, against both servers with the same
// assertions; then a runaway script, BUSY and SCRIPT KILL on both.

import (
	"strings"
	"testing"
)

// The digest of "return 'hi'", which SCRIPT LOAD answers.
const hiSHA = "ba3f7c0a1d2cf6a6ac4d1e7ac3a1ea9c89bc4f87"

func compatScriptingScripts() []compatScript {
	return []compatScript{
		{name: "eval-values", steps: []compatStep{
			ca("EVAL", "return 1", "0"),
			ca("EVAL", "return {1, 2, {3, 'x'}, nil, 5}", "0"),
			ca("EVAL", "return 3.99", "0"),
			ca("EVAL", "return nil", "0"),
			ca("EVAL", "return true", "0"),
			ca("EVAL", "return false", "0"),
			ca("EVAL", "return redis.status_reply('FINE')", "0"),
			ca("EVAL", "return redis.error_reply('MYERR went wrong')", "0"),
			ca("EVAL", "return {err='plain'}", "0"),
			ca("EVAL", "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #ARGV}", "2", "a", "b", "x", "y"),
			ca("EVAL", "return 'x'", "0", "extra", "args"),
		}},
		{name: "eval-calls", steps: []compatStep{
			ca("EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "k", "v"),
			cs("GET k"),
			ca("EVAL", "return redis.call('get', KEYS[1])", "1", "k"),
			ca("EVAL", "return redis.call('get', KEYS[1])", "1", "missing"),
			ca("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"),
			ca("EVAL", "return redis.call('incrbyfloat', KEYS[1], 1.5)", "1", "n"),
			ca("EVAL", "return redis.call('mget', 'k', 'missing', 'n')", "0"),
			ca("EVAL", "redis.call('set', 'a', 1); redis.call('expire', 'a', 100); return redis.call('ttl', 'a')", "0"),
			ca("EVAL", "return redis.call('exists', 'a', 'k', 'nope')", "0"),
			ca("EVAL", "return redis.call('del', 'a')", "0"),
			ca("EVAL", "return redis.call('ping')", "0"),
			ca("EVAL", "return redis.call('echo', 'hi')", "0"),
			ca("EVAL", "return redis.call('setrange', 'k', 10, 'z')", "0"),
			ca("EVAL", "return redis.call('get', 'k')", "0"),
			ca("EVAL", "return redis.call('GET', 'k')", "0"),
			ca("EVAL", "return redis.call('dbsize')", "0"),
			// Errors from the command, raised (call) or returned (pcall).
			cs("SET s text"),
			ca("EVAL", "return redis.call('incr', 's')", "0"),
			ca("EVAL", "return redis.pcall('incr', 's')", "0"),
			ca("EVAL", "local r = redis.pcall('incr', 's'); return type(r) .. ':' .. r.err", "0"),
			ca("EVAL", "return redis.call('set', 'k', 'v', 'BADOPT')", "0"),
			ca("EVAL", "return redis.pcall('set', 'k', 'v', 'EX', 0)", "0"),
		}},
		{name: "eval-refused-commands", steps: []compatStep{
			ca("EVAL", "return redis.call('nosuch')", "0"),
			ca("EVAL", "return redis.pcall('nosuch', 'x')", "0"),
			ca("EVAL", "return redis.call('get')", "0"),
			ca("EVAL", "return redis.call('get', 'a', 'b')", "0"),
			ca("EVAL", "return redis.call('subscribe', 'ch')", "0"),
			ca("EVAL", "return redis.call('psubscribe', 'ch*')", "0"),
			ca("EVAL", "return redis.call('unsubscribe')", "0"),
			ca("EVAL", "return redis.call('multi')", "0"),
			ca("EVAL", "return redis.call('exec')", "0"),
			ca("EVAL", "return redis.call('watch', 'k')", "0"),
			ca("EVAL", "return redis.call('eval', 'return 1', '0')", "0"),
			ca("EVAL", "return redis.call('evalsha', '"+hiSHA+"', '0')", "0"),
			ca("EVAL", "return redis.call('script', 'load', 'return 1')", "0"),
			ca("EVAL", "return redis.call('script', 'nosuch')", "0"),
			ca("EVAL", "return redis.call('client', 'id')", "0"),
			ca("EVAL", "return redis.call('client')", "0"),
			ca("EVAL", "return redis.call('config', 'get', 'maxmemory')", "0"),
			ca("EVAL", "return redis.call('auth', 'x')", "0"),
			ca("EVAL", "return redis.call('hello')", "0"),
			ca("EVAL", "return redis.call('acl', 'whoami')", "0"),
			ca("EVAL", "return redis.pcall('subscribe', 'ch')", "0"),
			ca("EVAL", "return redis.call()", "0"),
			ca("EVAL", "return redis.call({})", "0"),
			// A script refused a command goes on with the next.
			ca("EVAL", "redis.pcall('multi'); return redis.call('set', 'after', '1')", "0"),
			cs("GET after"),
		}},
		{name: "eval-numkeys-and-arity", steps: []compatStep{
			cs("EVAL"), ca("EVAL", "return 1"), ca("EVAL", "return 1", "abc"), ca("EVAL", "return 1", "-1"),
			ca("EVAL", "return 1", "2", "a"), ca("EVAL", "return 1", "01"), ca("EVALSHA", hiSHA),
			ca("EVAL_RO", "return 1"), ca("EVALSHA_RO", hiSHA), ca("EVAL", "return 1", " 1", "a"),
		}},
		{name: "eval-script-errors", divergence: "gopher-lua words some compile and runtime errors otherwise (scripting/doc.go)", steps: []compatStep{
			ca("EVAL", "return +", "0"),
			caDiverge("-ERR Error compiling script (new function): user_script:1: '=' expected near '1'",
				"-ERR Error compiling script (new function): user_script:1: parse error near '1'",
				"EVAL", "retrun 1", "0"),
			ca("EVAL", "error('boom')", "0"),
			ca("EVAL", "error({err='MYCODE custom'})", "0"),
			caDiverge("-ERR user_script:1: attempt to index local 't' (a nil value) script: e62b17c4a64e9b74a6f9be57909ea9e2d0e66784, on @user_script:1.",
				"-ERR user_script:1: attempt to index a nil value script: e62b17c4a64e9b74a6f9be57909ea9e2d0e66784, on @user_script:1.",
				"EVAL", "local t = nil; return t.x", "0"),
			ca("EVAL", "undefined_global()", "0"),
			ca("EVAL", "x = 1", "0"),
			ca("SCRIPT", "LOAD", "return +"),
		}},
		{name: "evalsha-and-script", steps: []compatStep{
			ca("EVALSHA", hiSHA, "0"),
			ca("SCRIPT", "LOAD", "return 'hi'"),
			ca("EVALSHA", hiSHA, "0"),
			ca("EVALSHA", strings.ToUpper(hiSHA), "0"),
			ca("EVALSHA_RO", hiSHA, "0"),
			ca("EVALSHA", "0000000000000000000000000000000000000000", "0"),
			ca("EVALSHA", "abc", "0"),
			ca("SCRIPT", "EXISTS", hiSHA, strings.ToUpper(hiSHA), "0000000000000000000000000000000000000000", "x"),
			ca("EVAL", "return 'other'", "0"),
			ca("SCRIPT", "EXISTS", "b13734fd4ee10e2a1ee6a0f3d2bf5b1bca66e0b0"),
			cs("SCRIPT FLUSH"),
			ca("SCRIPT", "EXISTS", hiSHA),
			ca("EVALSHA", hiSHA, "0"),
			cs("SCRIPT FLUSH ASYNC"), cs("SCRIPT FLUSH sync"), cs("SCRIPT FLUSH BAD"), cs("SCRIPT FLUSH SYNC ASYNC"),
			cs("SCRIPT KILL"), cs("SCRIPT KILL x"), cs("SCRIPT"), cs("SCRIPT NOSUCH"), cs("SCRIPT EXISTS"),
			cs("SCRIPT LOAD"), cs("SCRIPT LOAD a b"), cs("script load"),
		}},
		{name: "eval-ro", steps: []compatStep{
			cs("SET k v"),
			ca("EVAL_RO", "return redis.call('get', KEYS[1])", "1", "k"),
			ca("EVAL_RO", "return redis.call('set', KEYS[1], 'x')", "1", "k"),
			ca("EVAL_RO", "return redis.pcall('del', 'k')", "0"),
			ca("EVAL_RO", "return redis.call('publish', 'ch', 'm')", "0"),
			ca("EVAL_RO", "return redis.call('ping')", "0"),
			ca("SCRIPT", "LOAD", "return redis.call('incr', 'n')"),
			ca("EVALSHA_RO", "2d5e8f1af8e5f6a5fc20b59fcf44a431c4c2e36f", "0"),
			cs("GET k"), cs("EXISTS n"),
			// A shebang's flags: no-writes lets EVAL_RO run it and makes
			// EVAL read-only; without it EVAL_RO refuses the script.
			ca("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", "k"),
			ca("EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", "k"),
			ca("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'y')", "1", "k"),
			ca("EVAL_RO", "#!lua\nreturn redis.call('get', KEYS[1])", "1", "k"),
			ca("EVAL", "#!lua\nreturn redis.call('get', KEYS[1])", "1", "k"),
			ca("EVAL", "#!lua flags=bogus\nreturn 1", "0"),
			ca("EVAL", "#!python\nreturn 1", "0"),
		}},
		{name: "eval-resp3-conversions", steps: []compatStep{
			cs("SET a ohmytext"), cs("SET b mynewtext"),
			ca("EVAL", "redis.setresp(3); return redis.call('get', 'missing')", "0"),
			// A map comes back in its Lua table's order, which is the
			// interpreter's: compared one field at a time.
			ca("EVAL", "redis.setresp(3); local r = redis.call('lcs', 'a', 'b', 'IDX'); return {map={len=r.map.len}}", "0"),
			ca("EVAL", "redis.setresp(3); local r = redis.call('lcs', 'a', 'b', 'IDX'); return r.map.matches", "0"),
			ca("EVAL", "redis.setresp(2); return redis.call('lcs', 'a', 'b', 'IDX')", "0"),
			ca("EVAL", "redis.setresp(3); local r = redis.call('lcs', 'a', 'b', 'IDX'); return r.map.len", "0"),
			ca("EVAL", "redis.setresp(3); return {double=3.5}", "0"),
			ca("EVAL", "redis.setresp(3); return {map={f=1}}", "0"),
			ca("EVAL", "redis.setresp(3); return {set={x=true}}", "0"),
			ca("EVAL", "return {double=3.5}", "0"),
			ca("EVAL", "redis.setresp(4)", "0"),
			ca("EVAL", "redis.setresp(3); return redis.call('command', 'count') > 0", "0"),
		}},
		{name: "eval-inside-multi", steps: []compatStep{
			cs("MULTI"),
			ca("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"),
			ca("EVAL", "return redis.call('incr', KEYS[1])", "1", "n"),
			cs("GET n"),
			ca("EVAL", "return redis.call('nosuch')", "0"),
			cs("EXEC"),
			cs("GET n"),
			cs("MULTI"), ca("EVAL", "return 1"), cs("EXEC"),
			cs("MULTI"), ca("SCRIPT", "LOAD", "return 'hi'"), ca("EVALSHA", hiSHA, "0"), cs("SCRIPT KILL"), cs("EXEC"),
		}},
		{name: "eval-watch", steps: []compatStep{
			cs("SET w 1"), cs("WATCH w"),
			ca("EVAL", "return redis.call('incr', KEYS[1])", "1", "w"),
			cs("MULTI"), cs("GET w"), cs("EXEC"),
		}},
		{name: "eval-libraries", steps: []compatStep{
			ca("EVAL", "return cjson.encode({1, 2, 3})", "0"),
			ca("EVAL", "return cjson.decode('[1,2,{\"a\":3}]')[3].a", "0"),
			ca("EVAL", "return bit.band(12, 10)", "0"),
			ca("EVAL", "return redis.sha1hex('')", "0"),
			ca("EVAL", "return string.format('%d-%s', 7, 'x')", "0"),
			ca("EVAL", "return tostring(math.huge)", "0"),
			ca("EVAL", "return os", "0"),
			ca("EVAL", "return loadstring('return 5')()", "0"),
			ca("EVAL", "return pcall(function() error('x') end)", "0"),
			ca("EVAL", "return type(redis.REDIS_VERSION_NUM)", "0"),
		}},
		{name: "script-arity", steps: []compatStep{cs("SCRIPT HELP x"), cs("SCRIPT DEBUG NO"), cs("SCRIPT DEBUG")}},
	}
}

// caDiverge is ca for a deliberate difference: both replies are asserted,
// as rendered.
func caDiverge(redis, ours string, args ...string) compatStep {
	return compatStep{args: args, redisWant: redis, oursWant: ours}
}

func TestCompatScripting(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatScriptingScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
		// Redis 7.0's help ends "Prints this help.", 7.2's "Print this help.".
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		want := strings.Replace(p.redis.run(compatExact, []string{"SCRIPT", "HELP"}), "Prints this help", "Print this help", 1)
		if got := p.ours.run(compatExact, []string{"SCRIPT", "HELP"}); got != want {
			t.Errorf("SCRIPT HELP:\n\tredis: %s\n\tours:  %s", want, got)
		}
	})
}
