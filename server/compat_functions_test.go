package server

// Differential tests of FUNCTION and FCALL: the same commands to a real
// redis-server and to our server, reply for reply in both protocols;
// Redis's habit of running each scripting case as a function; DUMP and
// RESTORE across the two servers; a busy function, FUNCTION KILL and
// BUSY; and go-redis's helpers against both.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/scripting"
)

// lib is a library's code: the shebang naming it, then body.
func lib(name, body string) string { return "#!lua name=" + name + "\n" + body }

func compatFunctionScripts() []compatScript {
	fl := func(args ...string) compatStep { return ca(append([]string{"FUNCTION", "LOAD"}, args...)...) }
	return []compatScript{
		{name: "function-load-errors", steps: []compatStep{
			cs("FUNCTION FLUSH"),
			fl("local a = 1"),
			fl("#!lua name=x"),
			fl("#!lua\nlocal a = 1"),
			fl("#!lua name=t-9\nlocal a = 1"),
			fl("#!lua name=t9 foo=bar\nlocal a = 1"),
			fl("#!lua name=a name=b\nlocal a = 1"),
			fl("#!js name=x\nlocal a = 1"),
			fl(lib("t9", "local a = 1")),
			fl(lib("t9", "local a = ")),
			fl(lib("t9", "redis.call('set','x','1')")),
			fl(lib("t9", "local x = string.len('a')")),
			fl(lib("t9", "x = 5")),
			fl(lib("t9", "error('boom')")),
			fl(lib("t9", "redis.register_function('f', 5)")),
			fl(lib("t9", "redis.register_function(5)")),
			fl(lib("t9", "redis.register_function()")),
			fl(lib("t9", "redis.register_function({}, function() end)")),
			fl(lib("t9", "redis.register_function('f-x', function() end)")),
			fl(lib("t9", "redis.register_function('f', function() end)\nredis.register_function('f', function() end)")),
			fl(lib("t9", "redis.register_function{function_name='f', callback=function() end, foo=1}")),
			fl(lib("t9", "redis.register_function{function_name='f', callback=function() end, flags={'bad'}}")),
			fl(lib("t9", "redis.register_function{function_name='f', callback=function() end, flags='no-writes'}")),
			fl(lib("t9", "redis.register_function{function_name='f', callback=5}")),
			fl(lib("t9", "redis.register_function{function_name='f'}")),
			fl(lib("t9", "redis.register_function{callback=function() end}")),
			fl(lib("t9", "redis.register_function{function_name={}, callback=function() end}")),
			fl(lib("t9", "redis.register_function{function_name='f', callback=function() end, description=5}")),
			fl(lib("t9", "redis.register_function{function_name='f', callback=function() end, description={}}")),
			fl(lib("spin", "while true do end")), // stopped after 500 ms
			ca("EVAL", "return redis.call('function', 'list')", "0"),
			ca("EVAL", "return redis.call('fcall', 'x', 0)", "0"),
			cs("FUNCTION LOAD foo bar"),
			cs("FUNCTION LOAD replace"),
			cs("FUNCTION LIST"),
		}},
		{name: "function-load-list", steps: []compatStep{
			cs("FUNCTION FLUSH"),
			fl(lib("mylib", "redis.register_function('f1', function(keys, args) return redis.call('get', keys[1]) end)")),
			fl(lib("mylib", "redis.register_function('f2', function(keys, args) return 1 end)")),
			fl(lib("other", "redis.register_function('f1', function(keys, args) return 1 end)")),
			fl("REPLACE", lib("mylib", "redis.register_function{function_name='f1', callback=function(keys, args) return {keys[1], args[1]} end, flags={'no-writes', 'ALLOW-OOM'}, description='my desc'}")),
			cs("FUNCTION LIST"),
			cs("FUNCTION LIST WITHCODE"),
			cs("FUNCTION LIST LIBRARYNAME my*"),
			cs("FUNCTION LIST LIBRARYNAME MY* WITHCODE"),
			cs("FUNCTION LIST LIBRARYNAME nomatch"),
			cs("FUNCTION LIST LIBRARYNAME"),
			cs("FUNCTION LIST foo"),
			cs("FUNCTION LIST WITHCODE WITHCODE"),
			cs("FUNCTION STATS"),
			cs("FCALL f1 1 k a"),
			cs("FCALL_RO f1 1 k a"),
			cs("FCALL F1 0"),
			cs("FCALL nosuch 0"),
			cs("FCALL nosuch x"),
			cs("FCALL f1 x"),
			cs("FCALL f1 2 a"),
			cs("FCALL f1 -1"),
			cs("FCALL f1"),
			cs("FCALL_RO f1"),
			cs("FUNCTION DELETE nosuch"),
			cs("FUNCTION DELETE mylib"),
			cs("FCALL f1 1 k a"),
			cs("FUNCTION STATS"),
			cs("FUNCTION FLUSH x"),
			cs("FUNCTION FLUSH a b"),
			cs("FUNCTION FLUSH ASYNC"),
			cs("FUNCTION FLUSH sync"),
			cs("FUNCTION LIST"),
		}},
		{name: "function-flags", steps: []compatStep{
			cs("FUNCTION FLUSH"),
			fl(lib("flags", strings.Join([]string{
				"redis.register_function('w', function(keys, args) return redis.call('set', keys[1], args[1]) end)",
				"redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('set', keys[1], args[1]) end, flags={'no-writes'}}",
				"redis.register_function('g', function(keys, args) return KEYS end)",
				"redis.register_function('e', function(keys, args) error('oops') end)",
				"redis.register_function('setglobal', function(keys, args) x = 1 end)",
				"redis.register_function('reg', function(keys, args) return redis.register_function end)",
				"redis.register_function('v', function(keys, args) return type(redis.setresp) .. type(cjson) .. type(string) end)",
			}, "\n"))),
			fl(lib("flags2", "redis.register_function{function_name='r', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes', 'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}")),
			fl(lib("flags3", "redis.register_function('W', function(keys, args) return 1 end)")),
			cs("FCALL w 0"),
			cs("FUNCTION LIST LIBRARYNAME flags2"),
			cs("FCALL w 1 k v"),
			cs("FCALL_RO w 1 k v"),
			cs("FCALL ro 1 k v"),
			cs("FCALL_RO ro 1 k v"),
			cs("FCALL r 1 k"),
			cs("FCALL_RO r 1 k"),
			cs("FCALL g 0"),
			cs("FCALL e 0"),
			cs("FCALL setglobal 0"),
			cs("FCALL reg 0"),
			cs("FCALL v 0"),
			cs("FUNCTION STATS"),
		}},
		{name: "function-runtime-errors", steps: []compatStep{
			cs("FUNCTION FLUSH"),
			// functions.tcl's "register function inside a function": at
			// run time redis.register_function is nil, and Lua names it.
			fl(lib("lib", `
    redis.register_function(
        'f1',
        function(keys, args)
            redis.register_function(
                'f2',
                function(key, args)
                    return 2
                end
            )
            return 1
        end
    )`)),
			cs("FCALL f1 0"),
			cs("FCALL f2 0"),
			fl("REPLACE", lib("lib", strings.Join([]string{
				"redis.register_function('method', function(keys, args) local t = {} return t:nosuch() end)",
				"redis.register_function('local', function(keys, args) local f = args[1] f() end)",
			}, "\n"))),
			cs("FCALL method 0"),
			cs("FCALL local 0 x"),
		}},
		{name: "function-multi", steps: []compatStep{
			cs("FUNCTION FLUSH"),
			fl(lib("m", "redis.register_function('incr2', function(keys, args) redis.call('incr', keys[1]); return redis.call('incr', keys[1]) end)")),
			cs("MULTI"),
			cs("FCALL incr2 1 n"),
			cs("FCALL nosuch 0"),
			cs("FUNCTION LOAD x"),
			cs("GET n"),
			cs("EXEC"),
			cs("MULTI"),
			ca("FUNCTION", "LOAD", lib("m2", "redis.register_function('two', function() return 2 end)")),
			cs("FCALL two 0"),
			cs("EXEC"),
		}},
		{name: "function-acl", steps: []compatStep{
			cs("FUNCTION FLUSH"),
			fl(lib("acl", "redis.register_function('aget', function(keys, args) return redis.call('get', keys[1]) end)")),
			cs("SET app:k v"), cs("SET other v"),
			cs("ACL SETUSER fcaller on >pw ~app:* +@scripting +get"),
			cs("ACL SETUSER nofcall on >pw ~* +get -fcall"),
			cs("AUTH fcaller pw"),
			cs("FCALL aget 1 app:k"),
			cs("FCALL aget 1 other"),
			cs("FCALL_RO aget 1 other"),
			cs("FUNCTION LIST LIBRARYNAME acl"),
			cs("AUTH nofcall pw"),
			cs("FCALL aget 1 app:k"),
			cs("AUTH default x"),
			cs("ACL DELUSER fcaller nofcall"),
		}},
		{name: "function-subcommands", steps: []compatStep{
			cs("FUNCTION"),
			cs("FUNCTION nosuch"),
			cs("FUNCTION STATS x"),
			cs("FUNCTION DUMP x"),
			cs("FUNCTION KILL"),
			cs("FUNCTION KILL x"),
			cs("FUNCTION DELETE"),
			cs("FUNCTION RESTORE"),
			cs("FUNCTION RESTORE foo"),
			cs("FUNCTION RESTORE foo bar"),
			cs("FUNCTION RESTORE a b c"),
			cs("FUNCTION HELP"),
			cs("FUNCTION HELP x"),
			cs("FCALL"),
			cs("FCALL x"),
		}},
	}
}

func TestCompatFunctions(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatFunctionScripts() {
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, sc) })
		}
	})
}

// TestCompatFunctionsOneLoop: FUNCTION LOAD and RESTORE, which may wait
// for a script, and FCALL run off the loop and answer the same with one
// loop serving every connection.
func TestCompatFunctionsOneLoop(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 1})
	for _, sc := range compatFunctionScripts() {
		t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, 3, sc) })
	}
}

// TestCompatScriptingAsFunctions runs every EVAL of the scripting
// comparison as Redis's own test unit does first: the body as a function
// of a library, FCALL with the same keys and arguments, on both servers.
func TestCompatScriptingAsFunctions(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		for _, sc := range compatScriptingScripts() {
			fs := compatScript{name: sc.name, steps: []compatStep{cs("FUNCTION FLUSH")}}
			for _, st := range sc.steps {
				if st.oursWant != "" {
					continue // a deliberate difference of EVAL's
				}
				if len(st.args) < 3 || !strings.EqualFold(st.args[0], "EVAL") || strings.HasPrefix(st.args[1], "#!") {
					fs.steps = append(fs.steps, st)
					continue
				}
				code := "#!lua name=test\nredis.register_function('test', function(KEYS, ARGV)\n" + st.args[1] + "\nend)"
				fs.steps = append(fs.steps, ca("FUNCTION", "LOAD", "REPLACE", code),
					compatStep{args: append([]string{"FCALL", "test"}, st.args[2:]...), mode: st.mode})
			}
			t.Run(sc.name, func(t *testing.T) { runCompatScript(t, redisAddr, ts.addr, proto, fs) })
		}
	})
}

// TestCompatFunctionDumpRestore restores each server's FUNCTION DUMP on
// the other, with every policy, and compares what the libraries then do.
func TestCompatFunctionDumpRestore(t *testing.T) {
	ctx := context.Background()
	redisC, ours := goRedisPair(t)
	long := strings.Repeat("-- a comment long enough for Redis to compress it with LZF\n", 20)
	code := lib("dumped", long+"redis.register_function('d1', function(keys, args) return 'd1' end)")
	for _, pair := range []struct {
		name     string
		from, to *redis.Client
	}{{"redis-to-ours", redisC, ours}, {"ours-to-redis", ours, redisC}} {
		t.Run(pair.name, func(t *testing.T) {
			for _, c := range []*redis.Client{pair.from, pair.to} {
				if err := c.FunctionFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if err := pair.from.FunctionLoad(ctx, code).Err(); err != nil {
				t.Fatal(err)
			}
			payload, err := pair.from.FunctionDump(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			expect := func(want string, args ...any) {
				t.Helper()
				got := fmtReply(pair.to.Do(ctx, args...))
				if got != want {
					t.Fatalf("%v: %s, want %s", args, got, want)
				}
			}
			expect("OK", "FUNCTION", "RESTORE", payload)
			expect("d1", "FCALL", "d1", "0")
			expect("ERR Library dumped already exists", "FUNCTION", "RESTORE", payload)
			expect("ERR Library dumped already exists", "FUNCTION", "RESTORE", payload, "APPEND")
			expect("OK", "FUNCTION", "RESTORE", payload, "REPLACE")
			expect("OK", "FUNCTION", "RESTORE", payload, "FLUSH")
			expect("ERR DUMP payload version or checksum are wrong", "FUNCTION", "RESTORE", payload[:len(payload)-1]+"x")
			expect("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.", "FUNCTION", "RESTORE", payload, "MERGE")
			libs, err := pair.to.FunctionList(ctx, redis.FunctionListQuery{WithCode: true}).Result()
			if err != nil || len(libs) != 1 || libs[0].Code != code || libs[0].Name != "dumped" {
				t.Fatalf("FUNCTION LIST after RESTORE: %+v %v", libs, err)
			}
		})
	}
}

// TestCompatFunctionDumpBytes: FUNCTION DUMP of the same library is
// redis-server's payload byte for byte, LZF compression included.
func TestCompatFunctionDumpBytes(t *testing.T) {
	ctx := context.Background()
	redisC, ours := goRedisPair(t)
	var noisy strings.Builder
	for i := range 400 {
		fmt.Fprintf(&noisy, "-- %d %x %d\n", i*7919%1000, i*i, i%13)
	}
	for _, code := range []string{
		lib("short", "redis.register_function('s', function() return 1 end)"),
		lib("repeats", strings.Repeat("-- the same line over and over again\n", 300)+"redis.register_function('r', function() return 1 end)"),
		lib("noisy", noisy.String()+"redis.register_function('n', function() return 1 end)"),
		lib("aaaa", strings.Repeat("--"+strings.Repeat("a", 300)+"\n", 3)+"redis.register_function('a', function() return 1 end)"),
	} {
		var dumps [2]string
		for i, c := range []*redis.Client{redisC, ours} {
			if err := c.FunctionLoad(ctx, code).Err(); err != nil {
				t.Fatal(err)
			}
			d, err := c.FunctionDump(ctx).Result()
			if err != nil {
				t.Fatal(err)
			}
			dumps[i] = d
			if err := c.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if dumps[0] != dumps[1] {
			t.Errorf("FUNCTION DUMP of %.30q:\n\tredis: %q\n\tours:  %q", code, dumps[0], dumps[1])
		}
	}
}

// goRedisPair is a go-redis client of a real redis-server and one of our
// server, in their default settings.
func goRedisPair(t *testing.T) (theirs, ours *redis.Client) {
	theirs = redis.NewClient(&redis.Options{Addr: startRedis(t)})
	ours = redis.NewClient(&redis.Options{Addr: startServer(t, Options{}).addr})
	t.Cleanup(func() { theirs.Close(); ours.Close() })
	return theirs, ours
}

func fmtReply(cmd *redis.Cmd) string {
	v, err := cmd.Result()
	if err != nil {
		return err.Error()
	}
	if s, ok := v.(string); ok {
		return s
	}
	return "unexpected reply"
}

// TestFunctionGoRedis uses go-redis's function helpers in their default
// settings on both servers with the same assertions.
func TestFunctionGoRedis(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := redis.NewClient(&redis.Options{Addr: target.addr})
			t.Cleanup(func() { rdb.Close() })
			if err := rdb.FunctionFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			code := lib("golib", "redis.register_function('gset', function(keys, args) return redis.call('set', keys[1], args[1]) end)\n"+
				"redis.register_function{function_name='gget', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}")
			if name, err := rdb.FunctionLoad(ctx, code).Result(); err != nil || name != "golib" {
				t.Fatalf("FunctionLoad: %q %v", name, err)
			}
			if err := rdb.FunctionLoad(ctx, code).Err(); err == nil || err.Error() != "ERR Library 'golib' already exists" {
				t.Fatalf("FunctionLoad again: %v", err)
			}
			if err := rdb.FunctionLoadReplace(ctx, code).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := rdb.FCall(ctx, "gset", []string{"gk"}, "gv").Result(); err != nil || v != "OK" {
				t.Fatalf("FCall gset: %v %v", v, err)
			}
			if v, err := rdb.FCallRO(ctx, "gget", []string{"gk"}).Result(); err != nil || v != "gv" {
				t.Fatalf("FCallRO gget: %v %v", v, err)
			}
			if err := rdb.FCallRO(ctx, "gset", []string{"gk"}, "x").Err(); err == nil || err.Error() != string(scripting.ErrROWithWriteFlag) {
				t.Fatalf("FCallRO gset: %v", err)
			}
			if err := rdb.FCall(ctx, "nosuch", nil).Err(); err == nil || err.Error() != "ERR Function not found" {
				t.Fatalf("FCall nosuch: %v", err)
			}
			libs, err := rdb.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "go*"}).Result()
			if err != nil || len(libs) != 1 || libs[0].Name != "golib" || libs[0].Engine != "LUA" || len(libs[0].Functions) != 2 {
				t.Fatalf("FunctionList: %+v %v", libs, err)
			}
			for _, f := range libs[0].Functions {
				if f.Name == "gget" && (f.Description != "reads" || len(f.Flags) != 1 || f.Flags[0] != "no-writes") {
					t.Fatalf("FunctionList gget: %+v", f)
				}
			}
			if err := rdb.FunctionDelete(ctx, "golib").Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestFunctionBusyAndKill runs a function that never ends on each
// server: past busy-reply-threshold other clients are answered BUSY
// naming FUNCTION KILL, SCRIPT KILL refuses to stop a function, FUNCTION
// STATS shows it, and FUNCTION KILL ends it; then FUNCTION KILL refuses
// to stop a busy EVAL.
func TestFunctionBusyAndKill(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) { functionBusyAndKill(t, target.addr) })
	}
}

func functionBusyAndKill(t *testing.T, addr string) {
	admin := dialCompat(t, addr)
	expect := func(c *compatConn, want string, args ...string) {
		t.Helper()
		if got := c.run(compatExact, args); got != want {
			t.Fatalf("%s: %s, want %s", showArgs(args), got, want)
		}
	}
	expect(admin, "+OK", "CONFIG", "SET", "busy-reply-threshold", "300")
	t.Cleanup(func() { admin.do("CONFIG", "SET", "busy-reply-threshold", "5000") })
	expect(admin, "+OK", "FUNCTION", "FLUSH")
	expect(admin, `"spin"`, "FUNCTION", "LOAD", lib("spin",
		"redis.register_function('spin', function(keys, args) redis.call('publish', 'started', keys[1]); while true do end end)"))
	sub := dialCompat(t, addr)
	expect(sub, `["subscribe" "started" :1]`, "SUBSCRIBE", "started")
	runner := dialCompat(t, addr)
	if err := runner.send(encodeCommand("FCALL", "spin", "1", "k")); err != nil {
		t.Fatal(err)
	}
	if r, err := sub.read(); err != nil || r.String() != `["message" "started" "k"]` {
		t.Fatalf("subscriber: %v %v", r, err)
	}
	busyFunction := "-" + string(scripting.ErrBusyFunction)
	waiter := dialCompat(t, addr)
	expect(waiter, busyFunction, "GET", "k")
	expect(waiter, busyFunction, "FCALL", "spin", "0")
	expect(waiter, busyFunction, "FUNCTION", "LOAD", lib("other", "redis.register_function('o', function() return 1 end)"))
	expect(admin, busyFunction, "SCRIPT", "KILL")
	stats := admin.run(compatExact, []string{"FUNCTION", "STATS"})
	if !strings.HasPrefix(stats, `["running_script" ["name" "spin" "command" ["FCALL" "spin" "1" "k"] "duration_ms" :`) {
		t.Fatalf("FUNCTION STATS: %s", stats)
	}
	expect(admin, "+OK", "FUNCTION", "KILL")
	r, err := runner.read()
	if err != nil || r.String() != "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2." {
		t.Fatalf("the killed function's client: %v %v", r, err)
	}
	expect(admin, "-NOTBUSY No scripts in execution right now.", "FUNCTION", "KILL")
	expect(waiter, "(nil)", "GET", "k")

	// A busy EVAL: FUNCTION KILL does not stop it, SCRIPT KILL does.
	if err := runner.send(encodeCommand("EVAL", "redis.call('publish', 'started', 'eval'); while true do end", "0")); err != nil {
		t.Fatal(err)
	}
	if r, err := sub.read(); err != nil || r.String() != `["message" "started" "eval"]` {
		t.Fatalf("subscriber: %v %v", r, err)
	}
	busy := "-" + string(scripting.ErrBusy)
	expect(waiter, busy, "GET", "k")
	expect(admin, busy, "FUNCTION", "KILL")
	expect(admin, busy, "FUNCTION", "STATS")
	expect(admin, "+OK", "SCRIPT", "KILL")
	if r, err := runner.read(); err != nil || !strings.HasPrefix(r.String(), "-ERR Script killed by user with SCRIPT KILL...") {
		t.Fatalf("the killed script's client: %v %v", r, err)
	}
	expect(runner, "+PONG", "PING")
}

// TestCompatFunctionLoadWhenOOM: FUNCTION LOAD and RESTORE are refused at
// the memory bound as Redis refuses a deny-oom command; the other
// subcommands run.
func TestCompatFunctionLoadWhenOOM(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	lib := "#!lua name=oomlib\nredis.register_function('oomf', function() return 1 end)"
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "function-oom", steps: []compatStep{
			cs("CONFIG SET maxmemory-policy noeviction"), cs("SET x value"),
			ca("FUNCTION", "LOAD", "REPLACE", lib), cs("CONFIG SET maxmemory 1"),
			ca("FUNCTION", "LOAD", "REPLACE", lib), ca("FUNCTION", "RESTORE", "nonsense"),
			cs("FUNCTION DELETE oomlib"), ca("FUNCTION", "LOAD", lib),
			cs("CONFIG SET maxmemory 0"), ca("FUNCTION", "LOAD", lib), cs("FCALL oomf 0"),
			cs("FUNCTION FLUSH"), cs("CONFIG SET maxmemory-policy allkeys-lfu"),
		}})
	})
}

// TestCompatScriptFlagsWhenOOM: at the memory bound, a script or function
// that declares flags but neither no-writes nor allow-oom is refused before
// it runs, one with allow-oom writes past the bound, and a script without
// a shebang has its writes refused, as in Redis's scriptPrepareForRun.
func TestCompatScriptFlagsWhenOOM(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{EventLoops: 4})
	lib := "#!lua name=oomflags\n" +
		"redis.register_function('fw', function() return 1 end)\n" +
		"redis.register_function{function_name='fr', callback=function() return 2 end, flags={'no-writes'}}\n" +
		"redis.register_function{function_name='fo', callback=function(k) return redis.call('set', k[1], 'o') end, flags={'allow-oom'}}"
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "script-flags-oom", steps: []compatStep{
			cs("CONFIG SET maxmemory-policy noeviction"), cs("SET x 123"), ca("FUNCTION", "LOAD", "REPLACE", lib),
			cs("CONFIG SET maxmemory 1"),
			ca("EVAL", "redis.call('set','x',1) return 1", "1", "x"),
			ca("EVAL", "return redis.call('get','x')", "1", "x"),
			ca("EVAL", "#!lua flags=\nreturn 1", "0"),
			ca("EVAL", "#!lua\nreturn 1", "0"),
			ca("EVAL", "#!lua flags=allow-oom\nredis.call('set','x',1)\nreturn 1", "1", "x"),
			cs("GET x"),
			ca("EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x"),
			cs("FCALL fw 0"), cs("FCALL fr 0"), cs("FCALL fo 1 x"), cs("GET x"), cs("SET y 1"),
			cs("CONFIG SET maxmemory 0"), cs("FUNCTION FLUSH"), cs("EVAL return(1) 0"),
		}})
	})
}
