package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// opDeadline bounds each command of the section tests: far past what one
// takes on a loaded machine, so a command that runs out of it found a
// server that stopped answering.
const opDeadline = 20 * time.Second

// startInProcess runs the server in this test process with args, and
// returns a client of it; it stops at the
// test's end. In this process, so that a hung server's goroutines are the
// test binary's to print (testwait.Hung).
func startInProcess(t *testing.T, args ...string) *redis.Client {
	t.Helper()
	addr := redistest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	argv := append([]string{"stampedeless", "--addr", addr, "--metrics-addr", "", "--log-level", "error"}, args...)
	go func() { done <- newApp().RunContext(ctx, argv) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the server in process: %v", err)
		}
	})
	// Default settings but the read timeout (3 s), which a command slowed
	// by the race detector on a loaded machine may pass without hanging.
	rdb := redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: opDeadline})
	t.Cleanup(func() { rdb.Close() })
	testwait.For(t, "the server in process to answer", func() bool {
		return rdb.Ping(context.Background()).Err() == nil
	})
	return rdb
}

// taggedOrigin is an origin whose values carry one of three Surrogate-Key
// tags and take up to 3 ms, so that fills overlap the other commands.
func taggedOrigin(t *testing.T) string {
	t.Helper()
	var n sync.Mutex
	calls := 0
	o := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Lock()
		calls++
		c := calls
		n.Unlock()
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		w.Header().Set("Surrogate-Key", "t"+strconv.Itoa(c%3))
		fmt.Fprintf(w, "%s@%d", r.URL.Path, c)
	}))
	t.Cleanup(o.Close)
	return o.URL
}

// TestSectionNeverHangs mixes every path that writes the store, from many
// clients at once: plain writes, deletes, expiry and FLUSHALL; read-through
// fills and refills of a short ttl; leases set and aborted; hard and soft
// tag purges; transactions, scripts and functions, which hold the atomic
// section exclusively, with read-through commands inside them; MIGRATE,
// to the server itself or to the other replica; a tracking client;
// and, in fleet mode, two replicas sharing a real redis-server. No
// command may wait past opDeadline: one that does ends the test binary
// with every goroutine's stack (testwait.Hung). Errors the commands
// answer (a lost lease, a timeout, WRONGTYPE) are not failures here; only
// a server that stops answering is.
func TestSectionNeverHangs(t *testing.T) {
	modes := []struct {
		name     string
		replicas int
		args     []string
	}{
		{"default", 1, nil},
		{"one-loop", 1, []string{"--event-loops", "1"}},
		{"fleet", 2, nil},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			// Every keyspace event is published, from handlers inside and
			// outside the section and from the store's listener under a
			// key's lock, to a subscriber per replica.
			args := append([]string{"--notify-keyspace-events", "KEA"}, mode.args...)
			if mode.replicas > 1 {
				args = append(args, "--redis", redistest.Start(t).Addr(), "--redis-timeout", "2s")
			}
			origin := taggedOrigin(t)
			var clients []*redis.Client
			for range mode.replicas {
				rdb := startInProcess(t, args...)
				if err := rdb.Do(context.Background(), "LOADER.REGISTER", "k:", origin+"/{key}").Err(); err != nil {
					t.Fatal(err)
				}
				if err := rdb.Do(context.Background(), "FUNCTION", "LOAD", "REPLACE", sectionLibrary).Err(); err != nil {
					t.Fatal(err)
				}
				clients = append(clients, rdb)
			}
			stop := make(chan struct{})
			var tracking sync.WaitGroup
			for _, rdb := range clients {
				tracking.Go(func() { trackingReader(t, rdb, stop) })
				tracking.Go(func() { keyspaceSubscriber(t, rdb, stop) })
			}
			var wg sync.WaitGroup
			for w := range 8 {
				rdb := clients[w%len(clients)]
				// MIGRATE's target: the other replica, or the same server.
				target := clients[(w+1)%len(clients)].Options().Addr
				wg.Go(func() { sectionWorker(rdb, target, rand.New(rand.NewPCG(uint64(w), 7)), 400) })
			}
			wg.Wait()
			close(stop)
			tracking.Wait()
		})
	}
}

// sectionLibrary is a function library the workers call with FCALL.
const sectionLibrary = "#!lua name=section\n" +
	"redis.register_function('section_set', function(keys, args) " +
	"redis.call('SET', keys[1], args[1]) return redis.call('GET', keys[1]) end)"

// sectionWorker sends n random commands of every kind that writes the
// store; its MIGRATEs go to target, which may be rdb's own server: one
// that held the section while its target answered would wait for itself
// there, behind a transaction waiting for the section.
func sectionWorker(rdb *redis.Client, target string, rng *rand.Rand, n int) {
	host, port, _ := strings.Cut(target, ":")
	key := func() string { return "k:" + strconv.Itoa(rng.IntN(12)) }
	appKey := func() string { return "a:" + strconv.Itoa(rng.IntN(6)) }
	tag := func() string { return "t" + strconv.Itoa(rng.IntN(3)) }
	for range n {
		switch rng.IntN(14) {
		case 0:
			do(rdb, "SET", key(), "v", "EX", 1+rng.IntN(3))
		case 1:
			do(rdb, "DEL", key(), appKey())
		case 2:
			do(rdb, "EXPIRE", key(), 1)
		case 3:
			if rng.IntN(10) == 0 {
				do(rdb, "FLUSHALL")
			}
		case 4, 5:
			do(rdb, "GETFILL", key(), 1, 5, "TIMEOUT", 500)
		case 6:
			lease(rdb, rng, appKey())
		case 7:
			if rng.IntN(2) == 0 {
				do(rdb, "PURGE.TAG", "SOFT", tag())
			} else {
				do(rdb, "PURGE.TAG", tag())
			}
		case 8:
			runTx(rdb, func(p redis.Pipeliner, ctx context.Context) {
				p.Do(ctx, "SET", key(), "x")
				p.Do(ctx, "GETFILL", key(), 1, 5)
				p.Do(ctx, "PURGE.TAG", "SOFT", tag())
				// Never set: its term, short here, ends it.
				p.Do(ctx, "FILL.LEASE", appKey(), 1, 5, "LEASE", 100)
				p.Do(ctx, "FILL.SET", appKey(), "notatoken", "v")
				p.Do(ctx, "DEL", key())
			})
		case 9:
			// A lease taken outside and set inside a transaction.
			if token := takeLease(rdb, appKey()); token.key != "" {
				runTx(rdb, func(p redis.Pipeliner, ctx context.Context) {
					p.Do(ctx, "FILL.SET", token.key, token.token, "in-exec")
					p.Do(ctx, "EXPIRE", token.key, 2)
				})
			}
		case 10:
			do(rdb, "EVAL", "redis.call('SET', KEYS[1], ARGV[1]) return redis.call('GET', KEYS[1])", 1, key(), "s")
		case 11:
			do(rdb, "EVAL", "return redis.call('FILL.SET', KEYS[1], 'notatoken', 'v')", 1, appKey())
		case 12:
			do(rdb, "FCALL", "section_set", 1, key(), "f")
		case 13:
			do(rdb, "MIGRATE", host, port, "", rng.IntN(2), 5000, "REPLACE", "KEYS", key(), key())
		}
	}
}

// do sends one command, with opDeadline.
func do(rdb *redis.Client, args ...any) {
	ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
	defer cancel()
	checkAnswered(fmt.Sprint(args...), rdb.Do(ctx, args...).Err())
}

// runTx runs queue's commands in MULTI/EXEC, with opDeadline.
func runTx(rdb *redis.Client, queue func(p redis.Pipeliner, ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
	defer cancel()
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		queue(p, ctx)
		return nil
	})
	checkAnswered("MULTI ... EXEC", err)
}

// heldLease is a lease a worker holds.
type heldLease struct{ key, token string }

// takeLease asks for key's lease, and returns it if this caller got it.
func takeLease(rdb *redis.Client, key string) heldLease {
	ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
	defer cancel()
	reply, err := rdb.Do(ctx, "FILL.LEASE", key, 1, 5, "TIMEOUT", 500).Slice()
	checkAnswered("FILL.LEASE "+key, err)
	if err != nil || len(reply) != 2 || reply[1] == nil {
		return heldLease{}
	}
	return heldLease{key: key, token: reply[1].(string)}
}

// lease takes key's lease and sets or aborts it.
func lease(rdb *redis.Client, rng *rand.Rand, key string) {
	l := takeLease(rdb, key)
	switch {
	case l.key == "":
	case rng.IntN(4) == 0:
		do(rdb, "FILL.ABORT", l.key, l.token, "gave up")
	default:
		do(rdb, "FILL.SET", l.key, l.token, "filled")
	}
}

// checkAnswered ends the test binary if err says the server did not
// answer within opDeadline; any reply, an error reply too, is an answer.
func checkAnswered(what string, err error) {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		testwait.Hung(fmt.Sprintf("%s: %v", what, err))
	}
}

// trackingReader reads keys with client-side caching on until stop is
// closed, so that every write above also has invalidations to send.
func trackingReader(t *testing.T, rdb *redis.Client, stop <-chan struct{}) {
	ctx := context.Background()
	conn := rdb.Conn()
	defer conn.Close()
	if err := conn.Do(ctx, "CLIENT", "TRACKING", "ON").Err(); err != nil {
		t.Errorf("CLIENT TRACKING ON: %v", err)
		return
	}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		dctx, cancel := context.WithTimeout(ctx, opDeadline)
		err := conn.Do(dctx, "GET", "k:"+strconv.Itoa(i%12)).Err()
		cancel()
		checkAnswered("a tracking client's GET", err)
	}
}

// keyspaceSubscriber reads every keyspace event until stop, and fails the
// test if none came.
func keyspaceSubscriber(t *testing.T, rdb *redis.Client, stop <-chan struct{}) {
	ctx := context.Background()
	sub := rdb.PSubscribe(ctx, "__key*__:*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Errorf("PSUBSCRIBE: %v", err)
		return
	}
	n := 0
	for {
		select {
		case <-stop:
			if n == 0 {
				t.Error("no keyspace event arrived")
			}
			return
		case _, ok := <-sub.Channel():
			if !ok {
				t.Error("the keyspace subscription closed")
				return
			}
			n++
		}
	}
}

// TestFleetLeaseInsideExec: FILL.LEASE inside MULTI on a replica that does
// not have the key, which another replica filled. Asking the fleet is I/O,
// which must not happen inside the section EXEC holds: the key is copied
// from the shared tier before EXEC takes it, and a key the fleet has not
// got is -TIMEOUT at once rather than a lease. The replica used to hang
// there, and every keyspace command with it.
func TestFleetLeaseInsideExec(t *testing.T) {
	spec := []string{"--redis", redistest.Start(t).Addr(), "--redis-timeout", "2s"}
	a, b := startInProcess(t, spec...), startInProcess(t, spec...)
	ctx := context.Background()
	reply, err := a.Do(ctx, "FILL.LEASE", "a:x", 60, 10).Slice()
	if err != nil || len(reply) != 2 || reply[1] == nil {
		t.Fatalf("FILL.LEASE on a: %v %v", reply, err)
	}
	if err := a.Do(ctx, "FILL.SET", "a:x", reply[1], "filled").Err(); err != nil {
		t.Fatal(err)
	}
	var lease, fresh *redis.Cmd
	_, err = b.TxPipelined(ctx, func(p redis.Pipeliner) error {
		lease = p.Do(ctx, "FILL.LEASE", "a:x", 60, 10)
		fresh = p.Do(ctx, "FILL.LEASE", "a:new", 60, 10)
		return nil
	})
	checkAnswered("MULTI FILL.LEASE EXEC on b", err)
	if got, err := lease.Slice(); err != nil || len(got) != 2 || got[0] != "filled" || got[1] != nil {
		t.Fatalf("FILL.LEASE a:x inside EXEC on b = %v %v, want [filled <nil>]", got, err)
	}
	if err := fresh.Err(); err == nil || !strings.HasPrefix(err.Error(), "TIMEOUT") {
		t.Fatalf("FILL.LEASE a:new inside EXEC on b: %v, want -TIMEOUT", err)
	}
	// The round EXEC could not claim is gone: the next caller gets the lease.
	if got, err := b.Do(ctx, "FILL.LEASE", "a:new", 60, 10).Slice(); err != nil || len(got) != 2 || got[1] == nil {
		t.Fatalf("FILL.LEASE a:new after EXEC = %v %v, want a token", got, err)
	}
}
