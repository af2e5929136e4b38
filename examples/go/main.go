// Command example reads through stampedeless from Go with go-redis: GETFILL
// has no typed method, so it goes through Do. Then it computes values in the
// application, once per key however many goroutines want them, with the
// get-or-compute helper of package lease (FILL.LEASE, FILL.SET, FILL.ABORT).
//
// Start the demo origin and a server whose loader for "demo:" points at it,
// then run the example:
//
//	go run ./cmd/stampedeless origin --not-found-prefix demo:missing: &
//	go run ./cmd/stampedeless --loader 'demo:=http://127.0.0.1:8080/{key}' &
//	go run ./examples/go -addr 127.0.0.1:6380
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/examples/go/lease"
)

// ErrNotFound is GETFILL's nil reply: the origin answered 404 or 410.
var ErrNotFound = errors.New("not found at the origin")

// getFill returns key's value: from the cache while it is fresh (ttl) or
// stale (grace more, while one refresh runs); else from the key's one origin
// call, however many callers wait for it, waiting at most timeout. Errors
// are replies such as "LOADERR demo: status 503" (the origin failed),
// "TIMEOUT ..." (timeout passed first) or "NOLOADER ..." (no loader for
// the key's prefix).
func getFill(ctx context.Context, rdb *redis.Client, key string, ttl, grace, timeout time.Duration) (string, error) {
	v, err := rdb.Do(ctx, "GETFILL", key, int(ttl/time.Second), int(grace/time.Second),
		"TIMEOUT", timeout.Milliseconds()).Text()
	if errors.Is(err, redis.Nil) {
		return "", ErrNotFound
	}
	return v, err
}

func main() {
	addr := flag.String("addr", "127.0.0.1:6380", "stampedeless address")
	flag.Parse()
	if err := run(context.Background(), *addr); err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	const ttl, grace, timeout = time.Minute, 30 * time.Second, 2 * time.Second

	// A miss: the value comes from the origin, and is then cached.
	v, err := getFill(ctx, rdb, "demo:user:42", ttl, grace, timeout)
	if err != nil {
		return fmt.Errorf("demo:user:42: %w", err)
	}
	fmt.Printf("demo:user:42 = %s\n", v)

	// 100 goroutines read a cold key at once: one origin call serves them
	// all, so they all get the same value.
	const readers = 100
	values, errs := concurrently(readers, func() (string, error) {
		return getFill(ctx, rdb, "demo:hot", ttl, grace, timeout)
	})
	distinct := map[string]bool{}
	for i := range readers {
		if errs[i] != nil {
			return fmt.Errorf("demo:hot, reader %d: %w", i, errs[i])
		}
		distinct[values[i]] = true
	}
	fmt.Printf("%d concurrent reads of demo:hot: %d distinct value(s)\n", readers, len(distinct))

	// A key the origin does not have is nil (remembered for --negative-ttl).
	if _, err := getFill(ctx, rdb, "demo:missing:1", ttl, grace, timeout); errors.Is(err, ErrNotFound) {
		fmt.Println("demo:missing:1: not found at the origin")
	} else {
		fmt.Printf("demo:missing:1: %v (want not found: start the origin with --not-found-prefix demo:missing:)\n", err)
	}

	// Errors are replies; their first word says which.
	_, err = getFill(ctx, rdb, "nowhere:1", ttl, grace, timeout)
	var rerr redis.Error
	if errors.As(err, &rerr) {
		kind, _, _ := strings.Cut(rerr.Error(), " ")
		fmt.Printf("nowhere:1: %s error: %v\n", kind, err)
	}
	return runLease(ctx, rdb)
}

// runLease has 100 goroutines want a value nobody has computed yet, then
// 10 want one whose computation fails; it prints how many computations ran
// and what the goroutines got.
func runLease(ctx context.Context, rdb *redis.Client) error {
	const ttl, grace = time.Minute, 30 * time.Second
	var computations atomic.Int64
	report := func(ctx context.Context) (string, error) {
		computations.Add(1)
		time.Sleep(100 * time.Millisecond) // a slow query
		return "42 rows", nil
	}
	const callers = 100
	values, errs := concurrently(callers, func() (string, error) {
		return lease.GetOrCompute(ctx, rdb, "lease:report", ttl, grace, report)
	})
	for i := range callers {
		if errs[i] != nil || values[i] != "42 rows" {
			return fmt.Errorf("lease:report, caller %d: %q, %v; want 42 rows", i, values[i], errs[i])
		}
	}
	fmt.Printf("%d concurrent computes of lease:report: %d computation(s), all got %q\n", callers, computations.Load(), values[0])

	// The computation fails: its caller gets its error, the waiters get it
	// as LOADERR app: ..., and the next caller, without computing, gets
	// LOADERR app: cooling down for ... after: ... while the key cools down.
	computations.Store(0)
	broken := func(ctx context.Context) (string, error) {
		computations.Add(1)
		time.Sleep(100 * time.Millisecond)
		return "", errors.New("database down")
	}
	const failing = 10
	_, errs = concurrently(failing, func() (string, error) {
		return lease.GetOrCompute(ctx, rdb, "lease:broken", ttl, grace, broken)
	})
	// A waiter that asks after the abort is told of the cooldown instead:
	// LOADERR app: cooling down for ... after: database down.
	own, shared := 0, 0
	for _, err := range errs {
		switch m := fmt.Sprint(err); {
		case m == "database down":
			own++
		case strings.HasPrefix(m, "LOADERR app: ") && strings.HasSuffix(m, "database down"):
			shared++
		}
	}
	fmt.Printf("%d concurrent computes of lease:broken: %d computation(s), %d got %q, %d got %q\n", failing,
		computations.Load(), own, "database down", shared, "LOADERR app: ...database down")
	_, err := lease.GetOrCompute(ctx, rdb, "lease:broken", ttl, grace, broken)
	fmt.Printf("lease:broken again: %v (%d computation(s) in all)\n", err, computations.Load())
	return nil
}

// concurrently calls f from n goroutines at once and returns what each got.
func concurrently(n int, f func() (string, error)) ([]string, []error) {
	values := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			values[i], errs[i] = f()
		}()
	}
	wg.Wait()
	return values, errs
}
