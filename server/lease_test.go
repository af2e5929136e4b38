package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// leaseReply is one FILL.LEASE reply: its two elements, "(nil)" for a nil,
// or the error's text.
type leaseReply struct{ value, token, err string }

// fillLease runs FILL.LEASE with args on c.
func fillLease(c *redis.Client, args ...any) leaseReply {
	v, err := c.Do(context.Background(), append([]any{"FILL.LEASE"}, args...)...).Slice()
	if err != nil {
		return leaseReply{err: err.Error()}
	}
	show := func(x any) string {
		if x == nil {
			return "(nil)"
		}
		return fmt.Sprint(x)
	}
	return leaseReply{value: show(v[0]), token: show(v[1])}
}

// leaseBurst runs n concurrent FILL.LEASEs and sends their replies.
func leaseBurst(c *redis.Client, n int, args ...any) <-chan leaseReply {
	out := make(chan leaseReply, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out <- fillLease(c, args...)
		}()
	}
	return out
}

// leaseServer starts a server and a client with room for many waiters.
func leaseServer(t *testing.T) (*testServer, *redis.Client) {
	ts := startServer(t, Options{})
	c := redis.NewClient(&redis.Options{Addr: ts.addr, Protocol: 2, PoolSize: 200})
	t.Cleanup(func() { c.Close() })
	return ts, c
}

// holderToken receives the first reply, which must be [nil token].
func holderToken(t *testing.T, replies <-chan leaseReply) string {
	t.Helper()
	r := <-replies
	if r.err != "" || r.value != "(nil)" || r.token == "(nil)" {
		t.Fatalf("first FILL.LEASE reply %+v, want [nil token]", r)
	}
	return r.token
}

func TestFillLeaseOneTokenWaitersGetTheValue(t *testing.T) {
	ts, c := leaseServer(t)
	ctx := context.Background()
	const n = 100
	replies := leaseBurst(c, n, "q:1", 60, 10)
	token := holderToken(t, replies)
	testwait.For(t, "the other callers to wait", func() bool { return ts.fill.Filler.LeaseWaiters("q:1") == n-1 })
	if got := fmt.Sprint(c.Do(ctx, "FILL.INFO", "q:1").Val()); !strings.Contains(got, "state loading") ||
		!strings.Contains(got, "loader app") || !strings.Contains(got, "in_flight 1") {
		t.Fatalf("FILL.INFO during the lease: %s", got)
	}
	if err := c.Do(ctx, "FILL.SET", "q:1", token, "computed").Err(); err != nil {
		t.Fatal(err)
	}
	for range n - 1 {
		if r := <-replies; r != (leaseReply{value: "computed", token: "(nil)"}) {
			t.Fatalf("a waiter got %+v, want [computed nil]", r)
		}
	}
	if v := c.Get(ctx, "q:1").Val(); v != "computed" {
		t.Fatalf("GET = %q", v)
	}
	if ttl := c.TTL(ctx, "q:1").Val().Seconds(); ttl <= 60 || ttl > 70 {
		t.Fatalf("TTL = %vs, want ttl + grace (about 70 s, less the jitter)", ttl)
	}
	info := c.Info(ctx, "stampede").Val()
	for _, want := range []string{"app_fills:", "leases_granted=1,", "leases_set=1,", fmt.Sprintf("answers_loaded=%d,", n-1)} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO stampede lacks %q:\n%s", want, info)
		}
	}
}

func TestFillSetLeaseLostAfterAWrite(t *testing.T) {
	_, c := leaseServer(t)
	ctx := context.Background()
	token := holderToken(t, leaseBurst(c, 1, "q:w", 60, 0))
	if err := c.Set(ctx, "q:w", "written", 0).Err(); err != nil {
		t.Fatal(err)
	}
	err := c.Do(ctx, "FILL.SET", "q:w", token, "computed").Err()
	if err == nil || err.Error() != "LEASELOST the key was written during the lease" {
		t.Fatalf("FILL.SET after a SET: %v, want -LEASELOST", err)
	}
	if v := c.Get(ctx, "q:w").Val(); v != "written" {
		t.Fatalf("GET = %q, want the client's write", v)
	}
	if err := c.Do(ctx, "FILL.SET", "q:w", "0123", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "LEASELOST no lease") {
		t.Fatalf("FILL.SET with a made-up token: %v", err)
	}
}

func TestFillLeaseExpiryHandsOneNewToken(t *testing.T) {
	ts, c := leaseServer(t)
	ctx := context.Background()
	crashed := holderToken(t, leaseBurst(c, 1, "q:x", 60, 0, "LEASE", 50))
	const n = 20
	replies := leaseBurst(c, n, "q:x", 60, 0, "TIMEOUT", 60000)
	token := holderToken(t, replies)
	testwait.For(t, "the other callers to wait", func() bool { return ts.fill.Filler.LeaseWaiters("q:x") == n-1 })
	if err := c.Do(ctx, "FILL.SET", "q:x", crashed, "late").Err(); err == nil || !strings.HasPrefix(err.Error(), "LEASELOST") {
		t.Fatalf("FILL.SET with the expired token: %v", err)
	}
	if err := c.Do(ctx, "FILL.SET", "q:x", token, "v2").Err(); err != nil {
		t.Fatal(err)
	}
	for range n - 1 {
		if r := <-replies; r != (leaseReply{value: "v2", token: "(nil)"}) {
			t.Fatalf("a waiter got %+v, want [v2 nil]", r)
		}
	}
}

func TestFillAbortSharesTheFailureAndCoolsDown(t *testing.T) {
	ts, c := leaseServer(t)
	ctx := context.Background()
	const n = 10
	replies := leaseBurst(c, n, "q:a", 60, 0)
	token := holderToken(t, replies)
	testwait.For(t, "the other callers to wait", func() bool { return ts.fill.Filler.LeaseWaiters("q:a") == n-1 })
	if err := c.Do(ctx, "FILL.ABORT", "q:a", token, "db timeout").Err(); err != nil {
		t.Fatal(err)
	}
	for range n - 1 {
		if r := <-replies; r.err != "LOADERR app: db timeout" {
			t.Fatalf("a waiter got %+v, want -LOADERR app: db timeout", r)
		}
	}
	if r := fillLease(c, "q:a", 60, 0); !strings.HasPrefix(r.err, "LOADERR app: cooling down for ") || !strings.HasSuffix(r.err, " after: db timeout") {
		t.Fatalf("during the cooldown: %+v, want -LOADERR app: cooling down for ... after: db timeout", r)
	}
	if err := c.Do(ctx, "FILL.ABORT", "q:a", token).Err(); err == nil || !strings.HasPrefix(err.Error(), "LEASELOST") {
		t.Fatalf("a second FILL.ABORT: %v", err)
	}
}

func TestFillLeaseTimeoutZeroAndNotFound(t *testing.T) {
	_, c := leaseServer(t)
	ctx := context.Background()
	token := holderToken(t, leaseBurst(c, 1, "q:z", 60, 0, "TIMEOUT", 0))
	if r := fillLease(c, "q:z", 60, 0, "TIMEOUT", 0); r.err != "TIMEOUT gave up waiting for the load after 0s" {
		t.Fatalf("TIMEOUT 0 while another fills: %+v", r)
	}
	if err := c.Do(ctx, "FILL.SET", "q:z", token, "", "NOTFOUND").Err(); err != nil {
		t.Fatal(err)
	}
	if r := fillLease(c, "q:z", 60, 0, "TIMEOUT", 0); r != (leaseReply{value: "(nil)", token: "(nil)"}) {
		t.Fatalf("a remembered NOTFOUND: %+v, want [nil nil]", r)
	}
}

func TestFillLeaseStale(t *testing.T) {
	ts, c := leaseServer(t)
	ctx := context.Background()
	token := holderToken(t, leaseBurst(c, 1, "q:s", 1, 60))
	if err := c.Do(ctx, "FILL.SET", "q:s", token, "v1").Err(); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the entry to go stale", func() bool { return ts.fill.Filler.Info("q:s").State == "stale" })
	const n = 50
	replies := leaseBurst(c, n, "q:s", 1, 60)
	tokens := 0
	for range n {
		r := <-replies
		if r.value != "v1" {
			t.Fatalf("a stale read got %+v", r)
		}
		if r.token != "(nil)" {
			tokens++
		}
	}
	if tokens != 1 {
		t.Fatalf("%d stale readers got a token, want 1", tokens)
	}
}

func TestFillLeaseArgumentErrors(t *testing.T) {
	ts, _ := leaseServer(t)
	r := dialRaw(t, ts.addr)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"FILL.LEASE", "q:e", "0", "0"}, "-ERR ttl must be a positive integer number of seconds"},
		{[]string{"FILL.LEASE", "q:e", "60", "0", "TIMEOUT", "-1"}, "-ERR invalid TIMEOUT in 'fill.lease' command"},
		{[]string{"FILL.LEASE", "q:e", "60", "0", "LEASE", "0"}, "-ERR invalid LEASE in 'fill.lease' command"},
		{[]string{"FILL.LEASE", "q:e", "60", "0", "LEASE"}, "-ERR syntax error"},
		{[]string{"FILL.LEASE", "q:e", "60"}, "-ERR wrong number of arguments for 'fill.lease' command"},
		{[]string{"FILL.SET", "q:e", "t"}, "-ERR wrong number of arguments for 'fill.set' command"},
		{[]string{"FILL.SET", "q:e", "t", "v", "NOTFOUND"}, "-ERR NOTFOUND takes an empty value in 'fill.set' command"},
		{[]string{"FILL.SET", "q:e", "t", "", "MISSING"}, "-ERR syntax error"},
		{[]string{"FILL.ABORT", "q:e", "t", "m", "extra"}, "-ERR syntax error"},
		{[]string{"FILL.ABORT", "q:e", "t"}, "-LEASELOST no lease with this token (it expired, was superseded, or was settled)"},
		{[]string{"GETFILL", "q:e", "60", "0", "EARLY", "-1"}, "-ERR invalid EARLY in 'getfill' command"},
		{[]string{"GETFILL", "q:e", "60", "0", "EARLY", "x"}, "-ERR invalid EARLY in 'getfill' command"},
		{[]string{"GETFILL", "q:e", "60", "0", "EARLY", "nan"}, "-ERR invalid EARLY in 'getfill' command"},
		{[]string{"GETFILL", "q:e", "60", "0", "EARLY", "inf"}, "-ERR invalid EARLY in 'getfill' command"},
		{[]string{"GETFILL", "q:e", "60", "0", "EARLY", "1.5", "TIMEOUT", "10"}, "-NOLOADER"},
		{[]string{"GETFILL", "q:e", "60", "0", "TIMEOUT"}, "-ERR syntax error"},
		// The reply's shape: a two-element array.
		{[]string{"FILL.LEASE", "q:e", "60", "0", "TIMEOUT", "0"}, "[(nil) "},
	} {
		if got := r.do(tc.args...); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v = %s, want %s", tc.args, got, tc.want)
		}
	}
}

// A pipeline of FILL.LEASEs on one connection, as ioredis and node-redis
// send concurrent calls: the first reply (the token) must reach the client
// while the second waits for the fill that token makes.
func TestFillLeasePipelinedRepliesBeforeWaiting(t *testing.T) {
	ts := startServer(t, Options{})
	waiter := dialRaw(t, ts.addr)
	lease := encodeCommand("FILL.LEASE", "p:1", "60", "10", "TIMEOUT", "10000")
	waiter.send(lease + lease)
	first := make(chan string, 1)
	go func() {
		s, err := readReply(waiter.br)
		if err != nil {
			s = err.Error()
		}
		first <- s
	}()
	var reply string
	select {
	case reply = <-first:
	case <-time.After(5 * time.Second):
		t.Fatal("the holder's [nil token] reply was held back behind the waiting FILL.LEASE")
	}
	parts := strings.Fields(strings.Trim(reply, "[]"))
	if len(parts) != 2 || parts[0] != "(nil)" {
		t.Fatalf("first reply %s, want [(nil) token]", reply)
	}
	token, _ := strconv.Unquote(parts[1])
	if got := dialRaw(t, ts.addr).do("FILL.SET", "p:1", token, "v"); got != "+OK" {
		t.Fatalf("FILL.SET: %s", got)
	}
	if got := waiter.reply(); got != `["v" (nil)]` {
		t.Fatalf("second reply %s, want [\"v\" (nil)]", got)
	}
}
