package scripting

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCompatScriptCommand(t *testing.T) {
	addr := startRedis(t)
	conn := dialRaw(t, addr, 2)
	e := New(Options{})
	for _, line := range [][]string{
		{"SCRIPT"},
		{"SCRIPT", "HELP"},
		{"SCRIPT", "help", "x"},
		{"SCRIPT", "NOSUCH"},
		{"SCRIPT", "no\r\nsuch"},
		{"SCRIPT", "LOAD", "return 1"},
		{"SCRIPT", "LOAD", "return 1 +"},
		{"SCRIPT", "LOAD", "#!lua flags=no-writes,allow-oom\nreturn 1"},
		{"SCRIPT", "LOAD", "#!lua flags=nonsense\nreturn 1"},
		{"SCRIPT", "LOAD", "#!lua\treturn 1"},
		{"SCRIPT", "LOAD", "#!lua name=x\nreturn 1"},
		{"SCRIPT", "LOAD", "#!python\nreturn 1"},
		{"SCRIPT", "LOAD", "#!\"lua\nreturn 1"},
		{"SCRIPT", "LOAD"},
		{"SCRIPT", "LOAD", "a", "b"},
		{"SCRIPT", "EXISTS", SHA1([]byte("return 1")), strings.ToUpper(SHA1([]byte("return 1"))), "nosuch"},
		{"SCRIPT", "EXISTS"},
		{"SCRIPT", "KILL"},
		{"SCRIPT", "KILL", "x"},
		{"SCRIPT", "FLUSH", "bogus"},
		{"SCRIPT", "FLUSH", "SYNC", "x"},
		{"SCRIPT", "DEBUG", "maybe"},
		{"SCRIPT", "DEBUG", "NO"},
		{"SCRIPT", "FLUSH", "ASYNC"},
		{"SCRIPT", "EXISTS", SHA1([]byte("return 1"))},
		{"SCRIPT", "FLUSH"},
	} {
		theirs := conn.do(line...)
		// Redis 7.2 words the last help line "Print", 7.0 "Prints".
		theirs = bytes.Replace(theirs, []byte("+    Prints this help.\r\n"), []byte("+    Print this help.\r\n"), 1)
		if ours := e.Script(byteArgs(line[1:])); !bytes.Equal(ours, theirs) {
			t.Errorf("%q\nours:   %q\nredis: %q", line, ours, theirs)
		}
	}
}

func TestCompatEvalArguments(t *testing.T) {
	addr := startRedis(t)
	conn := dialRaw(t, addr, 2)
	e := New(Options{})
	for _, line := range [][]string{
		{"EVAL", "return 1", "x"},
		{"EVAL", "return 1", "-1"},
		{"EVAL", "return 1", "2", "a"},
		{"EVAL", "return 1", " 1", "a"},
		{"EVAL", "return {KEYS[1], ARGV[1]}", "1", "a", "b"},
		{"EVALSHA", "abc", "0"},
		{"EVALSHA", "abc", "x"},
		{"EVALSHA", strings.Repeat("a", 40), "x"},
		{"EVALSHA", strings.Repeat("a", 40), "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'k', 'v')", "0"},
		{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'k')", "0"},
		{"EVAL", "#!lua\nreturn redis.call('set', 'k', 'v')", "0"},
		{"EVAL_RO", "#!lua\nreturn 1", "0"},
		{"EVAL_RO", "#!lua flags=no-writes\nreturn 2", "0"},
		{"EVAL", "#!lua\nreturn nil + 1", "0"},
		{"EVAL", "#!lua", "0"},
		{"EVAL", "return 1", "0"},
		{"EVALSHA", SHA1([]byte("return 1")), "0"},
		{"EVALSHA", strings.ToUpper(SHA1([]byte("return 1"))), "0"},
		{"EVALSHA_RO", SHA1([]byte("return 1")), "0"},
		{"EVALSHA_RO", SHA1([]byte("#!lua\nreturn redis.call('set', 'k', 'v')")), "0"},
	} {
		theirs := conn.do(line...)
		cmd := strings.ToUpper(line[0])
		inv := Invocation{Args: byteArgs(line[1:]), SHA: strings.HasPrefix(cmd, "EVALSHA"), ReadOnly: strings.HasSuffix(cmd, "_RO"),
			Caller: newRedisCaller(t, addr)}
		ours, err := e.Eval(context.Background(), inv)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ours, theirs) {
			t.Errorf("%q\nours:   %q\nredis: %q", line, ours, theirs)
		}
	}
}

// blockingCaller holds a script inside redis.call until released, so a
// test knows the script is running without timing it.
type blockingCaller struct {
	entered chan struct{}
	release chan struct{}
	wrote   bool
}

func newBlockingCaller(wrote bool) *blockingCaller {
	return &blockingCaller{entered: make(chan struct{}, 1), release: make(chan struct{}), wrote: wrote}
}

func (b *blockingCaller) Call(cmd Command) ([]byte, bool) {
	b.entered <- struct{}{}
	<-b.release
	return []byte("+OK\r\n"), b.wrote
}

// waitBusy waits until the engine reports a busy script.
func waitBusy(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !e.Busy() {
		if time.Now().After(deadline) {
			t.Fatal("script never became busy")
		}
		time.Sleep(time.Millisecond)
	}
}

type evalResult struct {
	reply []byte
	err   error
}

func evalAsync(e *Engine, ctx context.Context, script string, c Caller) chan evalResult {
	ch := make(chan evalResult, 1)
	go func() {
		r, err := e.Eval(ctx, Invocation{Args: [][]byte{[]byte(script), []byte("0")}, Caller: c})
		ch <- evalResult{r, err}
	}()
	return ch
}

func TestKillBusyScript(t *testing.T) {
	var logs []string
	var mu sync.Mutex
	e := New(Options{BusyThreshold: 10 * time.Millisecond, Log: func(l LogLevel, msg string) {
		mu.Lock()
		logs = append(logs, fmt.Sprint(l, " ", msg))
		mu.Unlock()
	}})
	if got := string(e.Kill()); got != "-"+string(ErrNotBusy)+"\r\n" {
		t.Fatalf("kill with nothing running: %q", got)
	}
	script := "local i = 0\nwhile true do i = i + 1 end"
	done := evalAsync(e, context.Background(), script, nil)
	waitBusy(t, e)
	// Another script meets BUSY, as every command does.
	if r, err := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte("return 1"), []byte("0")}}); err != nil || string(r) != "-"+string(ErrBusy)+"\r\n" {
		t.Fatalf("eval while busy: %q %v", r, err)
	}
	if got := string(e.Kill()); got != "+OK\r\n" {
		t.Fatalf("kill: %q", got)
	}
	res := <-done
	want := fmt.Sprintf("-ERR Script killed by user with SCRIPT KILL... script: %s, on @user_script:2.\r\n", SHA1([]byte(script)))
	if res.err != nil || string(res.reply) != want {
		t.Fatalf("killed script's reply: %q %v, want %q", res.reply, res.err, want)
	}
	if e.Busy() {
		t.Fatal("still busy after the script ended")
	}
	// The interpreter goes on serving scripts.
	if r, _ := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte("return 7"), []byte("0")}}); string(r) != ":7\r\n" {
		t.Fatalf("after kill: %q", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 2 || !strings.HasPrefix(logs[0], "3 Slow script detected: still in execution after ") ||
		!strings.HasSuffix(logs[0], "Script name is: "+SHA1([]byte(script))+".") || logs[1] != "2 Lua script killed by user with SCRIPT KILL." {
		t.Fatalf("logs: %q", logs)
	}
}

func TestKillCannotBeCaught(t *testing.T) {
	e := New(Options{BusyThreshold: 10 * time.Millisecond})
	// pcall catches the kill's error; the next instruction raises it again.
	script := "while true do pcall(function() while true do end end) end"
	done := evalAsync(e, context.Background(), script, nil)
	waitBusy(t, e)
	e.Kill()
	if res := <-done; !bytes.HasPrefix(res.reply, []byte("-"+string(ErrKilled)+" script: ")) {
		t.Fatalf("reply: %q", res.reply)
	}
}

func TestKillInCoroutine(t *testing.T) {
	e := New(Options{BusyThreshold: 10 * time.Millisecond})
	script := "redis.call('ping')\nlocal co = coroutine.wrap(function() while true do end end)\nco()"
	done := evalAsync(e, context.Background(), script, newRedisCaller(t, startRedis(t)))
	waitBusy(t, e)
	if got := string(e.Kill()); got != "+OK\r\n" {
		t.Fatalf("kill: %q", got)
	}
	if res := <-done; !bytes.HasPrefix(res.reply, []byte("-"+string(ErrKilled)+" script: ")) {
		t.Fatalf("reply: %q", res.reply)
	}
}

func TestUnkillableAfterWrite(t *testing.T) {
	e := New(Options{BusyThreshold: 10 * time.Millisecond})
	script := "redis.call('set', 'k', 'v')\nwhile true do end"
	done := evalAsync(e, context.Background(), script, newRedisCaller(t, startRedis(t)))
	waitBusy(t, e)
	if got := string(e.Kill()); got != "-"+string(ErrUnkillable)+"\r\n" {
		t.Fatalf("kill after a write: %q", got)
	}
	// SHUTDOWN NOSAVE stops it anyway.
	e.Close()
	if res := <-done; !bytes.HasPrefix(res.reply, []byte("-"+string(ErrKilled))) {
		t.Fatalf("reply after Close: %q", res.reply)
	}
	if _, err := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte("return 1"), []byte("0")}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("eval after Close: %v", err)
	}
}

// A SCRIPT KILL that arrives while the script is inside a command is
// decided when the command returns, as Redis decides it between
// commands.
func TestKillWaitsForCommand(t *testing.T) {
	for _, wrote := range []bool{true, false} {
		e := New(Options{BusyThreshold: 10 * time.Millisecond})
		waiting := make(chan struct{})
		e.killWaits = func() { close(waiting) }
		c := newBlockingCaller(wrote)
		done := evalAsync(e, context.Background(), "redis.call('set', 'k', 'v')\nwhile true do end", c)
		<-c.entered
		waitBusy(t, e)
		killed := make(chan []byte)
		go func() { killed <- e.Kill() }()
		<-waiting
		close(c.release)
		got := string(<-killed)
		if wrote {
			if got != "-"+string(ErrUnkillable)+"\r\n" {
				t.Fatalf("kill during a write: %q", got)
			}
			e.Close()
		} else if got != "+OK\r\n" {
			t.Fatalf("kill during a read: %q", got)
		}
		if res := <-done; !bytes.HasPrefix(res.reply, []byte("-"+string(ErrKilled))) {
			t.Fatalf("script: %q", res.reply)
		}
	}
}

func TestWaitingEvalGetsBusyLater(t *testing.T) {
	e := New(Options{BusyThreshold: 50 * time.Millisecond})
	c := newBlockingCaller(false)
	first := evalAsync(e, context.Background(), "redis.call('ping') while true do end", c)
	<-c.entered
	// Not busy yet: a second script waits for the first, then meets BUSY
	// when the first goes past the threshold, as Redis answers commands
	// queued behind a script once it is busy.
	second := evalAsync(e, context.Background(), "return 2", nil)
	if res := <-second; string(res.reply) != "-"+string(ErrBusy)+"\r\n" {
		t.Fatalf("waiting eval: %q %v", res.reply, res.err)
	}
	close(c.release)
	e.Kill()
	<-first
}

func TestWaitingEvalRunsAfterAndHonoursContext(t *testing.T) {
	e := New(Options{BusyThreshold: -1})
	c := newBlockingCaller(false)
	first := evalAsync(e, context.Background(), "return redis.call('ping')", c)
	<-c.entered
	ctx, cancel := context.WithCancel(context.Background())
	abandoned := evalAsync(e, ctx, "return 3", nil)
	waiting := evalAsync(e, context.Background(), "return 4", nil)
	cancel()
	if res := <-abandoned; !errors.Is(res.err, context.Canceled) {
		t.Fatalf("abandoned eval: %q %v", res.reply, res.err)
	}
	if e.Busy() {
		t.Fatal("busy with a negative threshold")
	}
	close(c.release)
	if res := <-first; string(res.reply) != "+OK\r\n" {
		t.Fatalf("first: %q", res.reply)
	}
	if res := <-waiting; string(res.reply) != ":4\r\n" {
		t.Fatalf("waiting: %q", res.reply)
	}
}

func TestCacheBounds(t *testing.T) {
	e := New(Options{MaxScripts: 3})
	var shas []string
	for i := range 5 {
		sha, err := e.Load([]byte(fmt.Sprintf("return %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
		if i == 2 {
			// Running script 0 makes it the most recently used.
			if r, _ := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte(shas[0]), []byte("0")}, SHA: true}); string(r) != ":0\r\n" {
				t.Fatalf("evalsha: %q", r)
			}
		}
	}
	if e.Len() != 3 || e.Evicted() != 2 {
		t.Fatalf("len %d evicted %d", e.Len(), e.Evicted())
	}
	for i, want := range []bool{true, false, false, true, true} {
		if got := e.Exists([]byte(strings.ToUpper(shas[i]))); got != want {
			t.Errorf("script %d cached: %v", i, got)
		}
	}
	r, _ := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte(shas[1]), []byte("0")}, SHA: true})
	if string(r) != "-"+string(ErrNoScript)+"\r\n" {
		t.Fatalf("evicted script: %q", r)
	}

	// The byte bound: each script is counted at its body plus its
	// compiled form.
	probe := New(Options{})
	probe.Load([]byte("return 'a'"))
	size := probe.Bytes()
	if size <= int64(len("return 'a'")) {
		t.Fatalf("a script counts %d bytes", size)
	}
	e = New(Options{MaxBytes: 2*size + size/2})
	for _, s := range []string{"return 'a'", "return 'b'", "return 'c'"} {
		e.Load([]byte(s))
	}
	if e.Len() != 2 || e.Bytes() != 2*size || e.Evicted() != 1 {
		t.Fatalf("len %d bytes %d evicted %d (one is %d)", e.Len(), e.Bytes(), e.Evicted(), size)
	}
	e.Flush()
	if e.Len() != 0 || e.Bytes() != 0 {
		t.Fatalf("after flush: len %d bytes %d", e.Len(), e.Bytes())
	}
}

func TestFlushResetsInterpreter(t *testing.T) {
	e := New(Options{})
	run := func(script string) string {
		r, _ := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte(script), []byte("0")}})
		return string(r)
	}
	run("cjson.encode_max_depth(3)")
	if got := run("return cjson.encode_max_depth()"); got != ":3\r\n" {
		t.Fatalf("cjson setting kept across scripts as in Redis: %q", got)
	}
	e.Flush()
	if got := run("return cjson.encode_max_depth()"); got != ":1000\r\n" {
		t.Fatalf("after SCRIPT FLUSH: %q", got)
	}
}

func TestRedisLogAndVersion(t *testing.T) {
	type entry struct {
		level LogLevel
		msg   string
	}
	var got []entry
	e := New(Options{Version: "7.2.4", Log: func(l LogLevel, msg string) { got = append(got, entry{l, msg}) }})
	r, _ := e.Eval(context.Background(), Invocation{Args: [][]byte{[]byte(
		"redis.log(redis.LOG_DEBUG, 'a', 1.5, {}, 'b') redis.log(redis.LOG_WARNING, 'w') return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM}"), []byte("0")}})
	if string(r) != "*2\r\n$5\r\n7.2.4\r\n:459268\r\n" {
		t.Fatalf("reply %q", r)
	}
	if len(got) != 2 || got[0] != (entry{LogDebug, "a 1.5 b"}) || got[1] != (entry{LogWarning, "w"}) {
		t.Fatalf("logged %v", got)
	}
}

func TestSplitKeys(t *testing.T) {
	for _, c := range []struct {
		in         []string
		keys, argv int
		err        error
	}{
		{[]string{"0"}, 0, 0, nil},
		{[]string{"2", "a", "b", "c"}, 2, 1, nil},
		{[]string{"3", "a", "b"}, 0, 0, ErrNumKeysTooMany},
		{[]string{"-1"}, 0, 0, ErrNumKeysNegative},
		{[]string{"01", "a"}, 0, 0, ErrNotInteger},
		{[]string{"+1", "a"}, 0, 0, ErrNotInteger},
		{[]string{"99999999999999999999"}, 0, 0, ErrNotInteger},
		{[]string{"-9223372036854775808"}, 0, 0, ErrNumKeysNegative},
	} {
		keys, argv, err := SplitKeys(byteArgs(c.in))
		if err != c.err || len(keys) != c.keys || len(argv) != c.argv {
			t.Errorf("%q: %d keys %d args %v", c.in, len(keys), len(argv), err)
		}
	}
}

func TestCallerPanicIsScriptError(t *testing.T) {
	e := New(Options{BusyThreshold: 10 * time.Millisecond})
	var c panickingCaller
	got := evalWith(t, e, "return redis.pcall('get', 'k')", 2, c)
	if !strings.HasPrefix(got, "-ERR caller broke") {
		t.Fatalf("reply: %q", got)
	}
	// The engine is not left thinking a command is under way: a busy
	// script after it is killed at once.
	done := evalAsync(e, context.Background(), "pcall(redis.call, 'get', 'k') while true do end", c)
	waitBusy(t, e)
	if r := string(e.Kill()); r != "+OK\r\n" {
		t.Fatalf("kill: %q", r)
	}
	<-done
	if got := evalWith(t, e, "return redis.pcall('get', 'k')", 2, nil); got != "-"+string(ErrUnknownCommand)+"\r\n" {
		t.Fatalf("no caller: %q", got)
	}
}

// panickingCaller is a Caller with a bug: its Call panics.
type panickingCaller struct{}

func (panickingCaller) Call(Command) ([]byte, bool) { panic("caller broke") }

// string.rep refuses what would exhaust memory; Redis would try, and
// fail with the whole server.
func TestStringRepBounded(t *testing.T) {
	e := New(Options{})
	script := "return #string.rep('x', 1e10)"
	want := "-ERR user_script:1: resulting string too large script: " + SHA1([]byte(script)) + ", on @user_script:1.\r\n"
	if got := evalWith(t, e, script, 2, nil); got != want {
		t.Fatalf("got %q", got)
	}
}

// TestOnBusyAndSetBusyThreshold: OnBusy is called once a script turns
// busy, when Busy already reports it; a threshold set at run time applies
// to the scripts that start after; zero or negative is never busy.
func TestOnBusyAndSetBusyThreshold(t *testing.T) {
	turned := make(chan bool, 1)
	var e *Engine
	e = New(Options{BusyThreshold: -1, OnBusy: func() { turned <- e.Busy() }})
	if e.BusyThreshold() >= 0 {
		t.Fatalf("BusyThreshold %v, want never", e.BusyThreshold())
	}
	// Never busy: the script ends by itself with the engine never busy.
	res := <-evalAsync(e, context.Background(), "for i = 1, 100000 do end return 1", nil)
	if string(res.reply) != ":1\r\n" || e.Busy() {
		t.Fatalf("reply %q, busy %v", res.reply, e.Busy())
	}
	e.SetBusyThreshold(10 * time.Millisecond)
	done := evalAsync(e, context.Background(), "while true do end", nil)
	if busy := <-turned; !busy {
		t.Fatal("OnBusy was called before Busy reported it")
	}
	e.Kill()
	<-done
	if e.Busy() {
		t.Fatal("still busy after the script ended")
	}
}
