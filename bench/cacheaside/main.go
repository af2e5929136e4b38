// Command cacheaside is redis-benchmark for the approach redis-benchmark
// cannot drive: C clients read one key cache-aside (GET; on a miss call the
// origin and SET) against any Redis-protocol server, N reads in all. Every
// client that misses calls the origin, so a cold key is a stampede: compare
// the origin's call count with that of GETFILL's one call.
//
//	go run ./bench/cacheaside -addr 127.0.0.1:6380 -origin http://127.0.0.1:8080 -key plain:key
//
// scripts/demo.sh runs it against the demo origin (`stampedeless origin`).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/bench/internal/aside"
)

type options struct {
	addr, origin, key string
	clients, requests int
	ttl, timeout      time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("cacheaside", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:6380", "Redis-protocol server")
	fs.StringVar(&o.origin, "origin", "http://127.0.0.1:8080", "origin base URL; a miss GETs <origin>/<key>")
	fs.StringVar(&o.key, "key", "plain:key", "the key every client reads")
	fs.IntVar(&o.clients, "c", 500, "concurrent clients, one connection each")
	fs.IntVar(&o.requests, "n", 10000, "reads in all, shared among the clients")
	fs.DurationVar(&o.ttl, "ttl", time.Minute, "expiry of the value a miss SETs")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound on the whole run")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	case o.clients < 1 || o.requests < o.clients:
		return o, errors.New("want -c ≥ 1 and -n ≥ -c")
	case o.ttl < time.Millisecond:
		return o, errors.New("-ttl must be at least 1ms")
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "cacheaside:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	s, err := stampede(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "cacheaside:", err)
		return 1
	}
	fmt.Fprintf(stdout, "cache-aside: %d reads of %s by %d clients in %v: %d misses called the origin, %d errors\n",
		s.reads, o.key, o.clients, s.elapsed.Round(time.Millisecond), s.misses, s.errors)
	if s.errors > 0 {
		fmt.Fprintln(stderr, "cacheaside: first error:", s.firstErr)
		return 1
	}
	return 0
}

type summary struct {
	reads, misses, errors int64
	firstErr              error
	elapsed               time.Duration
}

// stampede opens every client's connection first, then releases all the
// clients at once, as a key expiring under steady load does.
func stampede(ctx context.Context, o options) (summary, error) {
	rdb := redis.NewClient(&redis.Options{
		Addr: o.addr, PoolSize: o.clients, PoolTimeout: 30 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, MaxRetries: -1,
	})
	defer rdb.Close()
	org := aside.NewOrigin(o.origin, o.clients)
	defer org.Close()

	conns := make([]*redis.Conn, o.clients)
	defer func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range conns {
		conns[i] = rdb.Conn()
		if err := conns[i].Ping(ctx).Err(); err != nil {
			return summary{}, fmt.Errorf("connecting client %d to %s: %w", i, o.addr, err)
		}
	}
	// Each client returns its dedicated connection to the pool before it
	// starts, so that Read, which takes a *redis.Client, finds one idle
	// connection per client.
	for i, c := range conns {
		c.Close()
		conns[i] = nil
	}

	var s summary
	var reads, misses, errCount atomic.Int64
	var firstErr atomic.Pointer[error]
	var wg sync.WaitGroup
	release := make(chan struct{})
	for i := range o.clients {
		n := o.requests / o.clients
		if i < o.requests%o.clients {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			for range n {
				if ctx.Err() != nil {
					return
				}
				missed, err := aside.Read(ctx, rdb, org, o.key, o.ttl)
				reads.Add(1)
				if missed {
					misses.Add(1)
				}
				if err != nil {
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	start := time.Now()
	close(release)
	wg.Wait()
	s.elapsed = time.Since(start)
	if err := ctx.Err(); err != nil {
		return s, fmt.Errorf("run did not finish: %w", err)
	}
	s.reads, s.misses, s.errors = reads.Load(), misses.Load(), errCount.Load()
	if p := firstErr.Load(); p != nil {
		s.firstErr = *p
	}
	return s, nil
}
