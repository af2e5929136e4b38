package server

import (
	"context"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"
)

// libraryMonitorLine matches a MONITOR line as a client library hands it over,
// without the "+": its timestamp and the client's port vary.
var libraryMonitorLine = regexp.MustCompile(`^\d+\.\d{6} \[0 (127\.0\.0\.1:\d+|lua)\] `)

// TestMonitorClients reads MONITOR through redigo, in its default
// settings, from redis-server and from stampedeless while go-redis, in
// its default settings, sends the commands, and asserts the same lines of
// both. Not go-redis's own Monitor helper: under the race detector its
// v9.23 reports a race of its own (the pool peeks at the connection its
// helper's goroutine reads), and on RESP3 its pool drops the monitoring
// connection, against either server.
func TestMonitorClients(t *testing.T) {
	ctx := context.Background()
	var got [][]string
	for _, pt := range pubsubTargets(t, Options{}) {
		pt.run(t, func(t *testing.T, pt pubsubTarget) {
			mon, err := redigo.Dial("tcp", pt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer mon.Close()
			driver := redis.NewClient(&redis.Options{Addr: pt.addr})
			defer driver.Close()
			if err := driver.Ping(ctx).Err(); err != nil { // its handshake before the monitor starts
				t.Fatal(err)
			}
			if err := mon.Send("MONITOR"); err != nil {
				t.Fatal(err)
			}
			if err := mon.Flush(); err != nil {
				t.Fatal(err)
			}
			next := func() string {
				line, err := redigo.String(redigo.ReceiveWithTimeout(mon, 10*time.Second))
				if err != nil {
					t.Fatalf("no MONITOR line within 10s: %v", err)
				}
				return line
			}
			if line := next(); line != "OK" {
				t.Fatalf("MONITOR answered %q", line)
			}
			driver.Set(ctx, "user:1", "ada \"lovelace\"\n", time.Minute)
			driver.Get(ctx, "user:1")
			driver.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Incr(ctx, "visits")
				p.Expire(ctx, "visits", time.Hour)
				return nil
			})
			driver.Eval(ctx, "return redis.call('get', KEYS[1])", []string{"user:1"})
			driver.FunctionLoadReplace(ctx, "#!lua name=mon\nredis.register_function('mf', function(k) return redis.call('get', k[1]) end)")
			driver.FCall(ctx, "mf", []string{"user:1"})
			driver.Echo(ctx, "end")
			var lines []string
			for {
				line := next()
				m := libraryMonitorLine.FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("not a MONITOR line: %q", line)
				}
				who, args := "", line[len(m[0]):]
				if m[1] == "lua" {
					who = "lua "
				}
				// A new connection's handshake (go-redis may open one for
				// the transaction): CLIENT SETINFO is 7.2's, refused by 7.0.
				if !strings.HasPrefix(args, `"hello" `) && !strings.HasPrefix(args, `"client" "setinfo" `) {
					lines = append(lines, who+args)
				}
				if strings.HasSuffix(line, `"end"`) {
					break
				}
			}
			got = append(got, lines)
		})
	}
	want := []string{
		`"set" "user:1" "ada \"lovelace\"\n" "ex" "60"`, `"get" "user:1"`,
		`"multi"`, `"incr" "visits"`, `"expire" "visits" "3600"`, `"exec"`,
		`"eval" "return redis.call('get', KEYS[1])" "1" "user:1"`, `lua "get" "user:1"`,
		`"function" "load" "replace" "#!lua name=mon\nredis.register_function('mf', function(k) return redis.call('get', k[1]) end)"`,
		`"fcall" "mf" "1" "user:1"`, `lua "get" "user:1"`,
		`"echo" "end"`,
	}
	for i, lines := range got {
		if !slices.Equal(lines, want) {
			t.Errorf("server %d: MONITOR lines\n\tgot  %q\n\twant %q", i, lines, want)
		}
	}
}

// TestMonitorSlowReader: a MONITOR client that never reads is closed at
// the pubsub output buffer limit while another client writes, which is
// served throughout and after.
func TestMonitorSlowReader(t *testing.T) {
	ctx := context.Background()
	ts := startServer(t, Options{})
	rdb := ts.clientRESP2(t)
	if err := rdb.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 512kb 60").Err(); err != nil {
		t.Fatal(err)
	}
	slow := dialCompat(t, ts.addr)
	if r, err := slow.do("MONITOR"); err != nil || r.String() != "+OK" {
		t.Fatalf("MONITOR: %s %v", r, err)
	}
	value := strings.Repeat("v", 64<<10)
	monitored := func() bool {
		list, err := rdb.ClientList(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(list, "flags=O ")
	}
	if !monitored() {
		t.Fatal("CLIENT LIST shows no monitor (flags=O)")
	}
	// 2000 SETs of 64 KiB are 128 MiB of lines: far past the limit and
	// the socket buffers of the monitor that does not read.
	sent, closed := 0, false
	for sent < 2000 && !closed {
		if err := rdb.Set(ctx, "k", value, 0).Err(); err != nil {
			t.Fatalf("SET %d: %v", sent, err)
		}
		sent++
		if sent%8 == 0 {
			closed = !monitored()
		}
	}
	if !closed {
		t.Fatalf("the monitor that does not read is still there after %d commands of %d bytes", sent, len(value))
	}
	slow.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := io.Copy(io.Discard, slow.nc); isTimeout(err) {
		t.Fatalf("the slow monitor's connection is still open (read %d bytes)", n)
	}
	if got := infoField(t, rdb, "stats", "client_output_buffer_limit_disconnections"); got != "1" {
		t.Errorf("client_output_buffer_limit_disconnections = %s, want 1", got)
	}
	if v, err := rdb.Get(ctx, "k").Result(); err != nil || len(v) != len(value) {
		t.Fatalf("GET after the monitor closed: %d bytes, %v", len(v), err)
	}
}
