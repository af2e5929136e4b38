package server

// Differential tests of EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT: the
// same commands to a real redis-server and to our server, reply for reply
// in both protocols, as compat_test.go does; then real lock libraries,
// which run their locks as scripts, against both servers with the same
// assertions; then a runaway script, BUSY and SCRIPT KILL on both.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/scripting"
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
			ca("EVAL", "return redis.call('wait', '0', '0')", "0"),
			ca("EVAL", "return redis.pcall('wait', '0', '0')", "0"),
			ca("EVAL", "return redis.call('wait', '0')", "0"),
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

// scriptDiverge is an EVAL of a one-line script without keys whose error,
// raised by redis.call, each server words its own way.
func scriptDiverge(script, redis, ours string) compatStep {
	where := " script: " + scripting.SHA1([]byte(script)) + ", on @user_script:1."
	return caDiverge("-"+redis+where, "-"+ours+where, "EVAL", script, "0")
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

// TestCompatScriptACL: a script's commands are checked against the
// permissions of the user running it. The denial's text is Redis 7.2's,
// which words it otherwise than 7.0.
func TestCompatScriptACL(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{
			name:       "script-acl",
			divergence: "Redis 7.2's texts for a denial inside a script",
			steps: []compatStep{
				cs("ACL SETUSER scripter on >pw ~app:* +@scripting +get +set -del"),
				cs("SET app:k v"), cs("SET other v"),
				cs("AUTH scripter pw"),
				ca("EVAL", "return redis.call('get', KEYS[1])", "1", "app:k"),
				// The keys EVAL declares are checked before the script runs.
				ca("EVAL", "return 1", "1", "other"),
				scriptDiverge("return redis.call('del', 'app:k')",
					"ERR The user executing the script can't run this command or subcommand",
					"ERR ACL failure in script: User scripter has no permissions to run the 'del' command"),
				scriptDiverge("return redis.call('get', 'other')",
					"ERR The user executing the script can't access at least one of the keys mentioned in the command arguments",
					"ERR ACL failure in script: No permissions to access a key"),
				ca("EVAL", "return redis.acl_check_cmd('get', 'app:x')", "0"),
				ca("EVAL", "return redis.acl_check_cmd('del', 'app:x')", "0"),
				ca("EVAL", "return redis.acl_check_cmd('get', 'other')", "0"),
				cs("GET app:k"),
				cs("AUTH default x"), // any password: the default user has none
				cs("ACL DELUSER scripter"),
			},
		})
	})
}

// TestScriptBusyAndKill runs a script that never ends on each server:
// once it is past busy-reply-threshold every other client is answered
// BUSY, a command sent while it ran included, and a transaction fails;
// SCRIPT KILL ends it, its client gets the error, and the server goes on.
func TestScriptBusyAndKill(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) { busyAndKill(t, target.addr) })
	}
}

func busyAndKill(t *testing.T, addr string) {
	admin := dialCompat(t, addr)
	do := func(c *compatConn, args ...string) string {
		t.Helper()
		return c.run(compatExact, args)
	}
	expect := func(c *compatConn, want string, args ...string) {
		t.Helper()
		if got := do(c, args...); got != want {
			t.Fatalf("%s: %s, want %s", showArgs(args), got, want)
		}
	}
	busy := "-" + string(scripting.ErrBusy)
	expect(admin, "+OK", "CONFIG", "SET", "busy-reply-threshold", "300")
	t.Cleanup(func() { admin.do("CONFIG", "SET", "busy-reply-threshold", "5000") })
	expect(admin, "+OK", "SET", "k", "v")
	expect(admin, "+OK", "SCRIPT", "FLUSH")

	// The script tells a subscriber it has started, with PUBLISH, which
	// does not write: the script stays killable.
	sub := dialCompat(t, addr)
	expect(sub, `["subscribe" "started" :1]`, "SUBSCRIBE", "started")
	runner := dialCompat(t, addr)
	if err := runner.send(encodeCommand("EVAL", "redis.call('publish', 'started', 'yes'); while true do end", "0")); err != nil {
		t.Fatal(err)
	}
	if r, err := sub.read(); err != nil || r.String() != `["message" "started" "yes"]` {
		t.Fatalf("subscriber: %v %v", r, err)
	}
	// Sent while the script runs: answered BUSY once it is past the
	// threshold, not when the script ends.
	waiter := dialCompat(t, addr)
	expect(waiter, busy, "GET", "k")
	expect(waiter, busy, "PING")
	expect(waiter, busy, "SET", "k", "other")
	expect(waiter, busy, "EVAL", "return 1", "0")
	expect(waiter, busy, "SCRIPT", "LOAD", "return 1")
	expect(waiter, busy, "CONFIG", "SET", "busy-reply-threshold", "100")
	// MULTI is allowed, the commands queued are refused, and EXEC is
	// refused too, ending the transaction.
	execBusy := "-EXECABORT Transaction discarded because of: " + string(scripting.ErrBusy)
	expect(waiter, "+OK", "MULTI")
	expect(waiter, busy, "INCR", "n")
	expect(waiter, execBusy, "EXEC")
	expect(waiter, "+OK", "MULTI")
	expect(waiter, execBusy, "EXEC")
	expect(waiter, execBusy, "EXEC") // refused before it could say there is no MULTI

	expect(admin, "+OK", "SCRIPT", "KILL")
	r, err := runner.read()
	if err != nil || !strings.HasPrefix(r.String(), "-ERR Script killed by user with SCRIPT KILL... script: ") {
		t.Fatalf("the killed script's client: %v %v", r, err)
	}
	expect(admin, "-NOTBUSY No scripts in execution right now.", "SCRIPT", "KILL")
	expect(waiter, `"v"`, "GET", "k")
	expect(runner, "+PONG", "PING")
	expect(runner, ":1", "EVAL", "return redis.call('incr', KEYS[1])", "1", "n")

	// A script that has written cannot be killed; it runs to its end.
	if err := runner.send(encodeCommand("EVAL", "redis.call('publish', 'started', 'again'); redis.call('set', 'w', '1'); local t = redis.call('time'); while true do local n = redis.call('time'); if (n[1] - t[1]) * 1000000 + n[2] - t[2] > 600000 then return 'done' end end", "0")); err != nil {
		t.Fatal(err)
	}
	if r, err := sub.read(); err != nil || r.String() != `["message" "started" "again"]` {
		t.Fatalf("subscriber: %v %v", r, err)
	}
	expect(waiter, busy, "GET", "k")
	expect(admin, "-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.", "SCRIPT", "KILL")
	if r, err := runner.read(); err != nil || r.String() != `"done"` {
		t.Fatalf("the unkillable script's client: %v %v", r, err)
	}
	expect(waiter, `"1"`, "GET", "w")
}

// lockContenders is how many clients contend for one lock at once.
const lockContenders = 8

// incrementUnderLock has each of lockContenders clients read a counter,
// and write it back plus one, holding a lock that lock takes and unlock
// releases: only mutual exclusion makes the total lockContenders.
func incrementUnderLock(t *testing.T, rdb *redis.Client, key string, lock func(i int) (unlock func() error, err error)) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, lockContenders)
	for i := range lockContenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := lock(i)
			if err != nil {
				errs <- fmt.Errorf("contender %d: lock: %w", i, err)
				return
			}
			n, err := rdb.Get(ctx, key).Int()
			if err != nil && !errors.Is(err, redis.Nil) {
				errs <- err
			}
			if err := rdb.Set(ctx, key, n+1, 0).Err(); err != nil {
				errs <- err
			}
			if err := unlock(); err != nil {
				errs <- fmt.Errorf("contender %d: unlock: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n, err := rdb.Get(ctx, key).Int(); err != nil || n != lockContenders {
		t.Errorf("counter %d (%v), want %d: the lock let two contenders in", n, err, lockContenders)
	}
}

// flushedClient is a go-redis client in its default configuration, to a
// server it has just emptied.
func flushedClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return rdb
}

// TestScriptLockRedislock runs bsm/redislock, whose refresh and release
// are scripts, in its default configuration against both servers.
func TestScriptLockRedislock(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := flushedClient(t, target.addr)
			locker := redislock.New(rdb)
			lock, err := locker.Obtain(ctx, "lock:a", time.Minute, nil)
			if err != nil {
				t.Fatalf("obtain: %v", err)
			}
			if v, err := rdb.Get(ctx, "lock:a").Result(); err != nil || v != lock.Token() {
				t.Fatalf("the lock's key holds %q (%v), want its token %q", v, err, lock.Token())
			}
			if ttl, err := lock.TTL(ctx); err != nil || ttl <= 0 || ttl > time.Minute {
				t.Fatalf("TTL %v (%v)", ttl, err)
			}
			// Another client is refused while it is held.
			other := redislock.New(redis.NewClient(&redis.Options{Addr: target.addr}))
			if _, err := other.Obtain(ctx, "lock:a", time.Minute, nil); !errors.Is(err, redislock.ErrNotObtained) {
				t.Fatalf("second obtain: %v, want ErrNotObtained", err)
			}
			if err := lock.Refresh(ctx, 2*time.Minute, nil); err != nil {
				t.Fatalf("refresh: %v", err)
			}
			if ttl, err := rdb.PTTL(ctx, "lock:a").Result(); err != nil || ttl <= time.Minute {
				t.Fatalf("PTTL after refresh %v (%v)", ttl, err)
			}
			if err := lock.Release(ctx); err != nil {
				t.Fatalf("release: %v", err)
			}
			if n, _ := rdb.Exists(ctx, "lock:a").Result(); n != 0 {
				t.Fatal("the lock's key outlived its release")
			}
			if err := lock.Release(ctx); !errors.Is(err, redislock.ErrLockNotHeld) {
				t.Fatalf("second release: %v, want ErrLockNotHeld", err)
			}
			if err := lock.Refresh(ctx, time.Minute, nil); !errors.Is(err, redislock.ErrNotObtained) {
				t.Fatalf("refresh after release: %v, want ErrNotObtained", err)
			}
			relock, err := other.Obtain(ctx, "lock:a", time.Minute, nil)
			if err != nil {
				t.Fatalf("obtain after release: %v", err)
			}
			if err := relock.Release(ctx); err != nil {
				t.Fatal(err)
			}

			incrementUnderLock(t, rdb, "counter", func(int) (func() error, error) {
				c := redis.NewClient(&redis.Options{Addr: target.addr})
				l, err := redislock.New(c).Obtain(ctx, "lock:counter", 10*time.Second,
					&redislock.Options{RetryStrategy: redislock.LinearBackoff(2 * time.Millisecond)})
				if err != nil {
					c.Close()
					return nil, err
				}
				return func() error { defer c.Close(); return l.Release(ctx) }, nil
			})
		})
	}
}

// TestScriptLockRedsync runs go-redsync/redsync with its go-redis v9 pool
// in its default configuration against both servers.
func TestScriptLockRedsync(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := flushedClient(t, target.addr)
			rs := redsync.New(goredis.NewPool(rdb))
			m := rs.NewMutex("lock:b")
			if err := m.Lock(); err != nil {
				t.Fatalf("lock: %v", err)
			}
			if v, err := rdb.Get(ctx, "lock:b").Result(); err != nil || v != m.Value() {
				t.Fatalf("the lock's key holds %q (%v), want %q", v, err, m.Value())
			}
			taken := rs.NewMutex("lock:b", redsync.WithTries(1))
			var errTaken *redsync.ErrTaken
			if err := taken.Lock(); !errors.As(err, &errTaken) {
				t.Fatalf("second lock: %v, want ErrTaken", err)
			}
			if ok, err := m.Extend(); !ok || err != nil {
				t.Fatalf("extend: %v %v", ok, err)
			}
			if ok, err := m.Unlock(); !ok || err != nil {
				t.Fatalf("unlock: %v %v", ok, err)
			}
			if n, _ := rdb.Exists(ctx, "lock:b").Result(); n != 0 {
				t.Fatal("the lock's key outlived its unlock")
			}
			if ok, err := m.Unlock(); ok || err == nil {
				t.Fatalf("second unlock: %v %v, want a failure", ok, err)
			}
			if ok, err := m.Extend(); ok || err == nil {
				t.Fatalf("extend after unlock: %v %v, want a failure", ok, err)
			}

			incrementUnderLock(t, rdb, "counter", func(int) (func() error, error) {
				m := rs.NewMutex("lock:counter", redsync.WithRetryDelay(2*time.Millisecond), redsync.WithTries(1000))
				if err := m.Lock(); err != nil {
					return nil, err
				}
				return func() error {
					if ok, err := m.Unlock(); !ok {
						return fmt.Errorf("not unlocked: %v", err)
					}
					return nil
				}, nil
			})
		})
	}
}

// Cache-aside with a placeholder, as rueidisaside does it: the first
// caller of a missing key sets a placeholder and fills the key; the
// others see the placeholder and wait. Both steps are scripts that
// rueidis sends as EVALSHA, and as EVAL after NOSCRIPT.
var (
	asideAcquire = rueidis.NewLuaScript(`
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return ARGV[1] .. ':mine'`)
	asideFill = rueidis.NewLuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 0`)
	asidePeek = rueidis.NewLuaScriptReadOnly(`return redis.call('GET', KEYS[1])`)
)

// asideGet reads key, filling it with fill when it is missing, as one of
// many callers at once.
func asideGet(ctx context.Context, c rueidis.Client, key, placeholder string, fill func() string) (string, error) {
	for {
		v, err := asideAcquire.Exec(ctx, c, []string{key}, []string{placeholder, "10000"}).ToString()
		switch {
		case err != nil:
			return "", err
		case v == placeholder+":mine":
			value := fill()
			if err := asideFill.Exec(ctx, c, []string{key}, []string{placeholder, value, "60000"}).Error(); err != nil {
				return "", err
			}
			return value, nil
		case strings.HasPrefix(v, "placeholder:"):
			select { // another caller fills it
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(2 * time.Millisecond):
			}
		default:
			return v, nil
		}
	}
}

// TestScriptCacheAsideRueidis: K concurrent rueidis callers of a missing
// key, in RESP2 and in RESP3, fill it once and leave no placeholder
// behind, on both servers. (The rueidisaside module itself is not served
// by the Go module proxy this project is built from.)
func TestScriptCacheAsideRueidis(t *testing.T) {
	for _, target := range clientTargets(t) {
		for _, mode := range []struct {
			name string
			opt  rueidis.ClientOption
		}{
			{"RESP2", rueidis.ClientOption{AlwaysRESP2: true, DisableCache: true}},
			{"RESP3", rueidis.ClientOption{DisableCache: true}},
		} {
			t.Run(target.name+"/"+mode.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				opt := mode.opt
				opt.InitAddress = []string{target.addr}
				c, err := rueidis.NewClient(opt)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				for _, cmd := range []rueidis.Completed{c.B().Flushall().Build(), c.B().ScriptFlush().Build()} {
					if err := c.Do(ctx, cmd).Error(); err != nil {
						t.Fatal(err)
					}
				}
				var fills atomic.Int32
				var wg sync.WaitGroup
				got := make([]string, lockContenders)
				errs := make([]error, lockContenders)
				for i := range lockContenders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						got[i], errs[i] = asideGet(ctx, c, "aside:k", fmt.Sprintf("placeholder:%d", i), func() string {
							fills.Add(1)
							return "computed"
						})
					}()
				}
				wg.Wait()
				for i := range lockContenders {
					if errs[i] != nil || got[i] != "computed" {
						t.Errorf("caller %d: %q %v", i, got[i], errs[i])
					}
				}
				if n := fills.Load(); n != 1 {
					t.Errorf("%d fills, want 1", n)
				}
				if v, err := asidePeek.Exec(ctx, c, []string{"aside:k"}, nil).ToString(); err != nil || v != "computed" {
					t.Errorf("the key holds %q (%v), want the value and no placeholder", v, err)
				}
			})
		}
	}
}

// TestCompatScriptHoldsTheClock: a script's and a transaction's keys
// expire by the time they started, as Redis 7's (scriptTimeSnapshot,
// fixed_time_expire): a key set to live 1 ms is still there at the end
// of a script or transaction that ran 20 ms (DEBUG SLEEP inside them
// sleeps holding the store, as Redis's), beside redis-server; and here,
// once it ended, the key is gone. (When redis-server removes it after
// the script depends on its cached time, so that is not compared.)
func TestCompatScriptHoldsTheClock(t *testing.T) {
	redisAddr := redistest.Start(t, "--enable-debug-command", "yes").Addr()
	ts := startServer(t, Options{EnableDebugCommand: ProtectedYes, EventLoops: 4})
	forEachProtocol(t, func(t *testing.T, proto int) {
		runCompatScript(t, redisAddr, ts.addr, proto, compatScript{name: "held clock", steps: []compatStep{
			// DEBUG is refused from scripts unless this says otherwise.
			cs("DEBUG SET-DISABLE-DENY-SCRIPTS 1"),
			ca("EVAL", "redis.call('SET', 'key', 'value', 'PX', '1'); redis.call('DEBUG', 'SLEEP', 0.02); return redis.call('EXISTS', 'key')", "0"),
			ca("FUNCTION", "LOAD", "REPLACE", "#!lua name=held\nredis.register_function('held', function() redis.call('SET', 'k2', 'v', 'PX', '1'); redis.call('DEBUG', 'SLEEP', 0.02); return redis.call('EXISTS', 'k2') end)"),
			cs("FCALL held 0"),
			cs("MULTI"), cs("SET k3 v PX 1"), cs("DEBUG SLEEP 0.02"), cs("EXISTS k3"), cs("EXEC"),
			cs("FUNCTION FLUSH"), cs("DEBUG SET-DISABLE-DENY-SCRIPTS 0"),
		}})
	})
	c := dialCompat(t, ts.addr)
	for _, args := range [][]string{
		{"DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"},
		{"EVAL", "redis.call('SET', 'gone', 'v', 'PX', '1'); redis.call('DEBUG', 'SLEEP', 0.02); return 1", "0"},
		{"EXISTS", "gone"},
		{"DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"},
	} {
		r, err := c.do(args...)
		if err != nil || r.kind == '-' {
			t.Fatalf("%v: %s %v", args, r, err)
		}
		if args[0] == "EXISTS" && r.String() != ":0" {
			t.Errorf("EXISTS after the script that set it to live 1 ms and ran 20 ms: %s, want :0", r)
		}
	}
}
