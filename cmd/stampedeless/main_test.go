package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/logtest"
	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// binary is the stampedeless binary built once for these tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stampedeless-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "stampedeless")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startBinary runs the server with the given environment and waits until
// it logs that it is ready.
func startBinary(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	return startLogged(t, env, nil, args...)
}

// startLogged is startBinary, also copying the server's log lines to logs
// if it is not nil.
func startLogged(t *testing.T, env []string, logs io.Writer, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			if logs != nil {
				io.WriteString(logs, sc.Text()+"\n")
			}
			if !signalled && strings.Contains(sc.Text(), "stampedeless ready") {
				close(ready)
				signalled = true
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("server did not become ready")
	}
	return cmd
}

// TestServeFromEnvironmentAndSIGTERM configures the server only through
// STAMPEDELESS_* variables, uses it, and stops it with SIGTERM while a
// client is connected: it must exit 0 within a few seconds.
func TestServeFromEnvironmentAndSIGTERM(t *testing.T) {
	addr, metricsAddr := redistest.FreeAddr(t), redistest.FreeAddr(t)
	cmd := startBinary(t, []string{
		"STAMPEDELESS_ADDR=" + addr,
		"STAMPEDELESS_METRICS_ADDR=" + metricsAddr,
		"STAMPEDELESS_REQUIREPASS=pw",
		"STAMPEDELESS_MAX_MEMORY=64mb",
		"STAMPEDELESS_LOG_FORMAT=json",
	})
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, Password: "pw"})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := c.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; got != "67108864" {
		t.Fatalf("maxmemory from STAMPEDELESS_MAX_MEMORY = %q", got)
	}

	body := metricsText(t, metricsAddr)
	for _, want := range []string{`stampedeless_commands_total{command="set",result="ok"} 1`,
		"stampedeless_keys 1", "stampedeless_connected_clients 1", "stampedeless_memory_max_bytes 6.7108864e+07",
		"stampedeless_evicted_keys_total 0", "stampedeless_keyspace_hits_total", "process_resident_memory_bytes"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, "SIGTERM")
	if d := time.Since(start); d > 6*time.Second {
		t.Fatalf("took %v to stop", d)
	}
}

// TestShutdownCommand: SHUTDOWN's argument errors are Redis's and leave the
// server serving; inside MULTI it is refused; then SHUTDOWN NOSAVE closes
// the asking client's connection without a reply and the process exits 0,
// as after SIGTERM.
func TestShutdownCommand(t *testing.T) {
	addr := redistest.FreeAddr(t)
	cmd := startBinary(t, []string{"STAMPEDELESS_ADDR=" + addr, "STAMPEDELESS_METRICS_ADDR=" + redistest.FreeAddr(t)})
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	for args, want := range map[string]string{
		"SHUTDOWN ABORT":       "ERR No shutdown in progress.",
		"SHUTDOWN NOSAVE SAVE": "ERR syntax error",
		"SHUTDOWN ABORT NOW":   "ERR syntax error",
		"SHUTDOWN LATER":       "ERR syntax error",
	} {
		var a []any
		for _, f := range strings.Fields(args) {
			a = append(a, f)
		}
		if err := c.Do(ctx, a...).Err(); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Do(ctx, "SHUTDOWN", "NOSAVE")
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "EXECABORT") {
		t.Fatalf("SHUTDOWN inside MULTI: %v, want EXECABORT", err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("serving after SHUTDOWN's errors: %v", err)
	}
	if err := c.Do(ctx, "SHUTDOWN", "NOSAVE").Err(); err == nil || !errors.Is(err, io.EOF) {
		t.Fatalf("SHUTDOWN NOSAVE: %v, want the connection closed without a reply (EOF)", err)
	}
	waitExit(t, cmd, "SHUTDOWN")
}

// waitExit requires cmd to exit with status 0 within 10 s of what asked it
// to stop.
func waitExit(t *testing.T, cmd *exec.Cmd, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after %s: %v", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("still running 10s after %s", what)
	}
}

// TestBadFlagsFail: a bad flag ends the process with exit status 1 and one
// line saying what was wrong, not a panic (status 2 and a stack trace) or a
// failure somewhere later.
func TestBadFlagsFail(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-memory", "lots"}, "stampedeless: --max-memory: argument must be a memory value, got \"lots\" (bytes, or with a unit: 512mb, 2gb)\n"},
		{[]string{"--log-format", "xml"}, "stampedeless: --log-format: want text or json, got \"xml\"\n"},
		{[]string{"--early-refresh", "-1"}, "stampedeless: --early-refresh: want a finite beta of 0 or more, got -1\n"},
		{[]string{"--early-refresh", "NaN"}, "stampedeless: --early-refresh: want a finite beta of 0 or more, got NaN\n"},
		{[]string{"--early-refresh", "Inf"}, "stampedeless: --early-refresh: want a finite beta of 0 or more, got +Inf\n"},
		{[]string{"--addr", "127.0.0.1:notaport"}, "stampedeless: listen tcp: lookup tcp/notaport: unknown port\n"},
		{[]string{"--addr", "127.0.0.1:70000"}, "stampedeless: listen tcp: address 70000: invalid port\n"},
		{[]string{"--databases", "17"}, "stampedeless: --databases: want 1 to 16, got 17\n"},
		{[]string{"--databases", "0"}, "stampedeless: --databases: want 1 to 16, got 0\n"},
	} {
		// No metrics listener: a taken default port must not change the error.
		cmd := exec.Command(binary, append([]string{"--metrics-addr", ""}, tc.args...)...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if exitStatus(err) != 1 {
			t.Errorf("%v: exit %v, want exit status 1; stderr %s", tc.args, err, stderr.String())
			continue
		}
		if stderr.String() != tc.want || stdout.Len() != 0 {
			t.Errorf("%v: stderr %q, stdout %q; want stderr %q and nothing on stdout", tc.args, stderr.String(), stdout.String(), tc.want)
		}
	}
}

// exitStatus is a finished process's exit status: 0 for a nil error, -1
// when err is not an exit (the process did not start, or a signal killed it).
func exitStatus(err error) int {
	if err == nil {
		return 0
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return -1
	}
	return exit.ExitCode()
}

// TestVersion: --version and -v, which a redis-server user types, print
// what the version command prints.
func TestVersion(t *testing.T) {
	out, err := exec.Command(binary, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "stampedeless ") {
		t.Fatalf("version: %q, %v", out, err)
	}
	for _, flag := range []string{"--version", "-v"} {
		got, err := exec.Command(binary, flag).Output()
		if err != nil || string(got) != string(out) {
			t.Errorf("%s: %q, %v; want %q as the version command prints", flag, got, err, out)
		}
	}
}

// TestLoaderFlag registers a loader from the command line and fills a key
// through it from a real HTTP origin.
func TestLoaderFlag(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "from origin: "+r.Header.Get("X-Stampedeless-Key"))
	}))
	defer origin.Close()
	addr := redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--loader", "user:="+origin.URL+"/users/{key}")
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	v, err := c.Do(context.Background(), "GETFILL", "user:42", 60, 10).Text()
	if err != nil || v != "from origin: user:42" {
		t.Fatalf("GETFILL = %q, %v", v, err)
	}
	if ttl := c.TTL(context.Background(), "user:42").Val(); ttl <= 60*time.Second || ttl > 70*time.Second {
		t.Fatalf("TTL = %v, want the stale deadline, ttl (jittered down) + grace", ttl)
	}
}

// TestMaxMemoryZero: --max-memory 0 is Redis's maxmemory 0, no bound
// (CONFIG GET and INFO answer 0), and the log warns that nothing bounds
// the cache.
func TestMaxMemoryZero(t *testing.T) {
	addr := redistest.FreeAddr(t)
	var logs logBuffer
	startLogged(t, nil, &logs, "--addr", addr, "--metrics-addr", "", "--max-memory", "0", "--log-format", "json")
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if got := c.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; got != "0" {
		t.Errorf("CONFIG GET maxmemory with --max-memory 0 = %q, want 0", got)
	}
	if info := c.Info(ctx, "memory").Val(); !strings.Contains(info, "\r\nmaxmemory:0\r\n") {
		t.Errorf("INFO memory with --max-memory 0 lacks maxmemory:0:\n%s", info)
	}
	warned := false
	for _, line := range jsonLines(t, &logs) {
		if line["level"] == "WARN" && strings.Contains(fmt.Sprint(line["msg"]), "no memory bound") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no startup warning of an unbounded cache; log:\n%s", logs.String())
	}
}

// jsonLines parses a --log-format json log, one object per line; a line
// that is not JSON (another logger's plain text) fails the test.
func jsonLines(t *testing.T, log *logBuffer) []map[string]any { return log.Lines(t) }

// logBuffer collects a server's log lines.
type logBuffer = logtest.Buffer

// TestRedisClientLogsAreOurs: with the shared Redis unreachable, the Redis
// client library's own lines go through the server's logger (JSON with
// --log-format json, at debug level), and the server says once that Redis
// does not answer, naming why.
func TestRedisClientLogsAreOurs(t *testing.T) {
	addr := redistest.FreeAddr(t)
	var logs logBuffer
	startLogged(t, nil, &logs, "--addr", addr, "--metrics-addr", "", "--redis", "redis://"+redistest.FreeAddr(t),
		"--redis-timeout", "200ms", "--log-format", "json", "--log-level", "debug")
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	testwait.For(t, "a line of the Redis client library", func() bool {
		c.Ping(context.Background())
		return strings.Contains(logs.String(), `"msg":"redis client: `)
	})
	down := 0
	for _, l := range jsonLines(t, &logs) {
		if strings.HasPrefix(fmt.Sprint(l["msg"]), "the shared Redis does not answer") {
			down++
			// The cause, not the deadline the client library's retries ran into.
			if err := fmt.Sprint(l["err"]); !strings.Contains(err, "connection refused") {
				t.Errorf("the shared Redis does not answer: err %q, want the dial's connection refused", err)
			}
		}
	}
	if down != 1 {
		t.Errorf("%d lines say the shared Redis does not answer, want 1:\n%s", down, logs.String())
	}
}

// TestUsageErrors: a mistyped subcommand or flag is refused with a
// suggestion and exit status 2, before anything starts; a far-off name
// gets no suggestion.
func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"orign", "--addr", "127.0.0.1:8081"}, "stampedeless: unknown command 'orign'; did you mean 'origin'? (stampedeless --help lists the commands)\n"},
		{[]string{"zzzzzz"}, "stampedeless: unknown command 'zzzzzz' (stampedeless --help lists the commands)\n"},
		{[]string{"--max-memroy", "1gb"}, "stampedeless: unknown flag --max-memroy; did you mean '--max-memory'?\n"},
		{[]string{"origin", "--adr", "127.0.0.1:8081"}, "stampedeless: unknown flag --adr; did you mean '--addr'?\n"},
		{[]string{"serve", "--metrics-adr", ""}, "stampedeless: unknown flag --metrics-adr; did you mean '--metrics-addr'?\n"},
		{[]string{"serve", "extra"}, "stampedeless: serve takes no arguments, got 'extra'\n"},
		// What a Redis user types first gets the exact replacement.
		{[]string{"--port", "6381"}, "stampedeless: unknown flag --port; stampedeless listens where --addr says: use --addr 127.0.0.1:6381\n"},
		{[]string{"-p", "6381"}, "stampedeless: unknown flag -p; stampedeless listens where --addr says: use --addr 127.0.0.1:6381\n"},
		{[]string{"--port=6381"}, "stampedeless: unknown flag --port; stampedeless listens where --addr says: use --addr 127.0.0.1:6381\n"},
		{[]string{"--port", "x"}, "stampedeless: unknown flag --port; stampedeless listens where --addr says: use --addr 127.0.0.1:<port>\n"},
		{[]string{"serve", "--version"}, "stampedeless: unknown flag --version; use 'stampedeless --version' or 'stampedeless version'\n"},
	} {
		cmd := exec.Command(binary, tc.args...)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if exitStatus(err) != 2 || stderr.String() != tc.want || stdout.Len() != 0 {
			t.Errorf("%v: exit %v, stderr %q, stdout %q; want exit status 2, stderr %q and nothing on stdout",
				tc.args, err, stderr.String(), stdout.String(), tc.want)
		}
	}
}

// TestPortInUseNamesTheFlag: an address another process holds is refused
// naming the flag that picks another one; when a second server collides on
// both its addresses, one message names both flags.
func TestPortInUseNamesTheFlag(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	takenMetrics, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer takenMetrics.Close()
	metrics := takenMetrics.Addr().String()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", addr, "--metrics-addr", ""}, "--addr " + addr + " is in use: .* \\(use --addr to pick another\\)"},
		{[]string{"--addr", redistest.FreeAddr(t), "--metrics-addr", addr},
			"--metrics-addr " + addr + " is in use: .* \\(use --metrics-addr to pick another, or --metrics-addr '' for no metrics\\)"},
		{[]string{"--addr", addr, "--metrics-addr", metrics},
			"--addr " + addr + " and --metrics-addr " + metrics + " are in use \\(another stampedeless running\\?\\): " +
				"pick others with --addr and --metrics-addr, or --metrics-addr '' for no metrics"},
		{[]string{"origin", "--addr", addr}, "origin: --addr " + addr + " is in use: .* \\(use --addr to pick another\\)"},
	} {
		cmd := exec.Command(binary, tc.args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		want := regexp.MustCompile("^stampedeless: " + tc.want + "\n$")
		if exitStatus(err) != 1 || !want.MatchString(stderr.String()) {
			t.Errorf("%v: exit %v, stderr %q; want exit status 1 and %s", tc.args, err, stderr.String(), want)
		}
	}
}
