package migrate

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// payload is DUMP's payload of the string "v", as Redis 7.0 writes it.
const payload = "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"

// do sends one command to addr on a connection of its own and returns its
// reply line.
func do(t *testing.T, addr string, args ...string) string {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var b []byte
	bs := make([][]byte, len(args))
	for i, a := range args {
		bs[i] = []byte(a)
	}
	if _, err := nc.Write(appendCommand(b, bs...)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(nc).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(line, "\r\n")
}

func transfer(addr string, keys ...string) *Transfer {
	host, port, _ := strings.Cut(addr, ":")
	tr := &Transfer{Host: host, Port: port, Timeout: 5 * time.Second, Replace: true}
	for _, k := range keys {
		tr.Keys, tr.Payloads, tr.TTLs = append(tr.Keys, []byte(k)), append(tr.Payloads, []byte(payload)), append(tr.TTLs, 0)
	}
	return tr
}

// TestCacheKeepsThenClosesIdleConnections: a transfer leaves its
// connection cached, the next one to the same target reuses it (the
// target sees one connection), and once idle past the cache's time it is
// closed, on our side and the target's.
func TestCacheKeepsThenClosesIdleConnections(t *testing.T) {
	target := redistest.Start(t).Addr()
	targets := New(200 * time.Millisecond)
	defer targets.Close()
	for _, k := range []string{"a", "b"} {
		if out := targets.Run(transfer(target, k)); out.Refused || out.Failure != None || !out.Taken[0] {
			t.Fatalf("transfer of %s: %+v", k, out)
		}
	}
	if n := targets.Len(); n != 1 {
		t.Fatalf("Len = %d after two transfers to one target, want 1", n)
	}
	clients := func() string {
		nc, _ := net.Dial("tcp", target)
		defer nc.Close()
		nc.Write([]byte("INFO clients\r\n"))
		br := bufio.NewReader(nc)
		br.ReadString('\n')
		for {
			line, err := br.ReadString('\n')
			if err != nil || strings.HasPrefix(line, "connected_clients:") {
				return strings.TrimSpace(line)
			}
		}
	}
	// The migrating connection, and the one asking.
	if c := clients(); c != "connected_clients:2" {
		t.Fatalf("the target sees %s while cached", c)
	}
	testwait.For(t, "the idle connection to close", func() bool { return targets.Len() == 0 })
	testwait.For(t, "the target to see it closed", func() bool { return clients() == "connected_clients:1" })
}

// TestRetriesAConnectionTheTargetClosed: a cached connection the target
// closed meanwhile fails before its first reply, and the transfer is made
// again on a new one.
func TestRetriesAConnectionTheTargetClosed(t *testing.T) {
	target := redistest.Start(t).Addr()
	targets := New(time.Minute)
	defer targets.Close()
	if out := targets.Run(transfer(target, "a")); out.Failure != None || out.Refused {
		t.Fatalf("first transfer: %+v", out)
	}
	if r := do(t, target, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); r != ":1" {
		t.Fatalf("CLIENT KILL: %s", r)
	}
	out := targets.Run(transfer(target, "b", "c"))
	if out.Failure != None || out.Refused || !out.Taken[0] || !out.Taken[1] {
		t.Fatalf("transfer on a closed connection: %+v", out)
	}
	if r := do(t, target, "EXISTS", "b", "c"); r != ":2" {
		t.Errorf("EXISTS b c on the target: %s", r)
	}
}

// TestConcurrentTransfersToOneTarget: transfers to one target at once
// each get a connection; one stays cached; all their keys arrive.
func TestConcurrentTransfersToOneTarget(t *testing.T) {
	target := redistest.Start(t).Addr()
	targets := New(time.Minute)
	var wg sync.WaitGroup
	outs := make([]Outcome, 8)
	for i := range outs {
		wg.Go(func() { outs[i] = targets.Run(transfer(target, "k"+string(rune('a'+i)))) })
	}
	wg.Wait()
	for i, out := range outs {
		if out.Failure != None || out.Refused || !out.Taken[0] {
			t.Errorf("transfer %d: %+v", i, out)
		}
	}
	if n := targets.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
	if r := do(t, target, "DBSIZE"); r != ":8" {
		t.Errorf("DBSIZE on the target: %s", r)
	}
	targets.Close()
	if n := targets.Len(); n != 0 {
		t.Errorf("Len = %d after Close", n)
	}
	if out := targets.Run(transfer(target, "after")); out.Failure != None || targets.Len() != 0 {
		t.Errorf("a transfer after Close: %+v, %d cached", out, targets.Len())
	}
}

// TestLongReplyLinesAsRedisReadsThem: a reply line longer than Redis's
// buffer is read as two replies, as Redis's syncReadLine reads it; a bare
// newline is a failure (tried again on a new connection, which fails
// too). The target is a listener that answers what the test says.
func TestLongReplyLinesAsRedisReadsThem(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want         Outcome
	}{
		{"long error", "-" + strings.Repeat("e", 1500) + "\r\n", Outcome{Taken: []bool{false, true}, Refused: true, TargetError: strings.Repeat("e", 1022)}},
		{"bare newline", "\n+OK\r\n", Outcome{Taken: []bool{false, false}, Failure: Reading}},
		{"empty line", "\r\n+OK\r\n", Outcome{Taken: []bool{true, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for {
					nc, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer nc.Close()
						nc.Write([]byte("+OK\r\n" + tc.answer)) // SELECT's, then the RESTOREs'
						io.Copy(io.Discard, nc)                 // until the transfer closes it
					}()
				}
			}()
			targets := New(time.Minute)
			defer targets.Close()
			tr := transfer(ln.Addr().String(), "a", "b")
			tr.Timeout = 10 * time.Second
			out := targets.Run(tr)
			if out.Refused != tc.want.Refused || out.TargetError != tc.want.TargetError || out.Failure != tc.want.Failure ||
				len(out.Taken) != 2 || out.Taken[0] != tc.want.Taken[0] || out.Taken[1] != tc.want.Taken[1] {
				t.Errorf("got %+v\nwant %+v", out, tc.want)
			}
		})
	}
}

// TestAtoiAsC: a port is read as C's atoi reads it.
func TestAtoiAsC(t *testing.T) {
	for in, want := range map[string]int{"6379": 6379, " 42x": 42, "+7": 7, "-3": -3, "abc": 0, "": 0} {
		if got := atoi(in); got != want {
			t.Errorf("atoi(%q) = %d, want %d", in, got, want)
		}
	}
}
