package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/bench/internal/aside"
	"github.com/stampedeless/stampedeless/bench/internal/child"
	"github.com/stampedeless/stampedeless/examples/go/lease"
)

// approach is one way of reading the hot key.
type approach struct {
	name    string
	read    reader
	grace   int  // GETFILL and the lease helper only
	early   int  // GETFILL's EARLY beta; 0: none given
	hitOnly bool // GETFILL of a key that never expires: the plain-hit baseline
	// servers names the servers the clients are spread over, round robin.
	servers serverGroup
}

// reader is how an approach reads the hot key.
type reader int

const (
	readNaive        reader = iota // cache-aside on redis-server
	readLock                       // SET NX lock and poll on redis-server
	readGetFill                    // GETFILL on stampedeless
	readAsideCompute               // cache-aside on redis-server, the value computed in the client
	readLease                      // the FILL.LEASE get-or-compute helper on stampedeless
)

// serverGroup names a set of servers the harness starts.
type serverGroup int

const (
	groupRedis      serverGroup = iota // one redis-server
	groupSingle                        // one stampedeless
	groupLocalFleet                    // three stampedeless, each on its own
	groupRedisFleet                    // three stampedeless sharing the redis-server (--redis)
	groupEarly                         // one stampedeless with --early-refresh 1
)

// baseline is the plain cache hit the grace approach is compared with:
// GETFILL of a key whose ttl outlasts the run, so every read is a hit.
var baseline = approach{name: "GETFILL plain hit, never expires (stampedeless)", read: readGetFill, hitOnly: true, servers: groupSingle}

// singleApproaches are compared by default: the recipes clients use on
// Redis, and GETFILL on one stampedeless.
var singleApproaches = []approach{
	{name: "naive cache-aside (redis)", read: readNaive, servers: groupRedis},
	{name: "SET NX lock + poll (redis)", read: readLock, servers: groupRedis},
	{name: "GETFILL grace 0 (stampedeless)", read: readGetFill, grace: 0, servers: groupSingle},
	{name: "GETFILL grace 5 (stampedeless)", read: readGetFill, grace: 5, servers: groupSingle},
}

// fleetApproaches are compared with -fleet: GETFILL on one replica, and on
// three behind a client-side round robin, alone and sharing a Redis.
var fleetApproaches = []approach{
	{name: "GETFILL grace 0, 1 replica", read: readGetFill, grace: 0, servers: groupSingle},
	{name: "GETFILL grace 0, 3 replicas, local only", read: readGetFill, grace: 0, servers: groupLocalFleet},
	{name: "GETFILL grace 0, 3 replicas, --redis", read: readGetFill, grace: 0, servers: groupRedisFleet},
	{name: "GETFILL grace 5, 3 replicas, --redis", read: readGetFill, grace: 5, servers: groupRedisFleet},
}

// leaseApproaches are compared with -lease: the value is computed in the
// client process (the origin's latency and counting, no HTTP), by
// cache-aside on Redis or under the lease of examples/go/lease's helper.
var leaseApproaches = []approach{
	{name: "cache-aside, computed in the client (redis)", read: readAsideCompute, servers: groupRedis},
	{name: "FILL.LEASE helper grace 0 (stampedeless)", read: readLease, grace: 0, servers: groupSingle},
	{name: "FILL.LEASE helper grace 5 (stampedeless)", read: readLease, grace: 5, servers: groupSingle},
}

// earlyApproaches are compared with -early: GETFILL of a hot key without
// early refresh, with EARLY 1 on every read, and on a server started with
// --early-refresh 1.
var earlyApproaches = []approach{
	{name: "GETFILL grace 0", read: readGetFill, grace: 0, servers: groupSingle},
	{name: "GETFILL grace 0, EARLY 1", read: readGetFill, grace: 0, early: 1, servers: groupSingle},
	{name: "GETFILL grace 0, --early-refresh 1", read: readGetFill, grace: 0, servers: groupEarly},
	{name: "GETFILL grace 5", read: readGetFill, grace: 5, servers: groupSingle},
	{name: "GETFILL grace 5, EARLY 1", read: readGetFill, grace: 5, early: 1, servers: groupSingle},
}

// approachesOf are the approaches each mode compares.
var approachesOf = map[mode][]approach{
	modeSingle: singleApproaches,
	modeFleet:  fleetApproaches,
	modeLease:  leaseApproaches,
	modeEarly:  earlyApproaches,
}

// result is what one approach did at one K.
type result struct {
	approach    int
	k           int
	originCalls int64
	expiries    float64
	bursts      int
	requests    int64
	errors      int64
	elapsed     time.Duration
	p50, p99    time.Duration
	p999        time.Duration
	firstErr    string
	// counts are the servers' INFO stampede counters of the run (their
	// change over it), by name: the "hot:" loader's line with -early
	// (answers_<kind>, refreshes_<result>), app_fills with -lease
	// (leases_<result>, answers_<kind>); nil otherwise.
	counts map[string]int64
}

func (r result) perExpiry() float64 { return float64(r.originCalls) / r.expiries }
func (r result) perBurst() float64 {
	if r.bursts == 0 {
		return 0
	}
	return float64(r.originCalls) / float64(r.bursts)
}
func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// runAll runs every approach at every K, each on a key of its own, and
// without -fleet the plain-hit baseline after each K's approaches.
func (h *harness) runAll(ctx context.Context) (results, baselines []result, err error) {
	runID := 0
	for _, k := range h.opts.ks {
		for ai, a := range h.approaches {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			runID++
			// The helper fills its keys itself: no loader's prefix.
			prefix := "hot"
			if a.read == readLease {
				prefix = "app"
			}
			key := fmt.Sprintf("%s:run%d-k%d-a%d", prefix, runID, k, ai)
			h.logf("K=%d %s: %v on key %s", k, a.name, h.opts.duration, key)
			r, err := h.runOne(ctx, ai, a, k, key)
			if err != nil {
				return nil, nil, fmt.Errorf("K=%d %s: %w", k, a.name, err)
			}
			for _, srv := range h.groups[a.servers] {
				if !srv.Alive() {
					return nil, nil, srv.ExitError()
				}
			}
			h.logf("  origin calls %d (%.1f/expiry, %d bursts), %d requests, %.0f req/s, p50 %v p99 %v p999 %v, errors %d",
				r.originCalls, r.perExpiry(), r.bursts, r.requests, r.rps(), r.p50, r.p99, r.p999, r.errors)
			if r.errors > 0 {
				h.notes = append(h.notes, fmt.Sprintf("K=%d %s: %d failed requests (first: %s)", k, a.name, r.errors, r.firstErr))
			}
			results = append(results, r)
		}
		if h.opts.mode != modeSingle {
			continue
		}
		runID++
		key := fmt.Sprintf("hot:run%d-k%d-baseline", runID, k)
		h.logf("K=%d %s: %v on key %s", k, baseline.name, h.opts.duration, key)
		r, err := h.runOne(ctx, len(h.approaches), baseline, k, key)
		if err != nil {
			return nil, nil, fmt.Errorf("K=%d %s: %w", k, baseline.name, err)
		}
		h.logf("  %d requests, %.0f req/s, p50 %v p99 %v p999 %v, errors %d", r.requests, r.rps(), r.p50, r.p99, r.p999, r.errors)
		baselines = append(baselines, r)
	}
	return results, baselines, nil
}

// runOne runs one approach with k clients for the configured duration,
// spread round robin over the approach's servers.
func (h *harness) runOne(parent context.Context, ai int, a approach, k int, key string) (result, error) {
	o := h.opts
	// Hard deadline for this run: the duration plus room for the slowest
	// in-flight request and teardown.
	ctx, cancel := context.WithTimeout(parent, o.duration+o.pollBound+30*time.Second)
	defer cancel()

	rdbs := newClients(h.groups[a.servers], k)
	defer closeClients(rdbs)
	org := aside.NewOrigin(h.origin.base, k)
	defer org.Close()
	ttlSecs := strconv.Itoa(int(o.ttl / time.Second))
	if a.hitOnly {
		ttlSecs = strconv.Itoa(int((o.duration + time.Hour) / time.Second))
	}

	if err := h.warmUp(ctx, a, rdbs, org, key, ttlSecs); err != nil {
		return result{}, err
	}
	counter := h.origin.counter(key)
	before := counter.Load()
	line := h.countedLine(a)
	var countsBefore map[string]int64
	if line != "" {
		var err error
		if countsBefore, err = infoCounts(ctx, rdbs, line); err != nil {
			return result{}, err
		}
	}

	l := drive(ctx, k, o.duration, rdbs, h.readFunc(a, org, key, ttlSecs))
	if err := parent.Err(); err != nil {
		return result{}, err
	}
	if ctx.Err() != nil {
		return result{}, fmt.Errorf("run exceeded its hard deadline")
	}
	r := result{
		approach:    ai,
		k:           k,
		originCalls: counter.Load() - before,
		bursts:      h.origin.bursts(key, before, o.ttl/2),
		expiries:    o.duration.Seconds() / o.ttl.Seconds(),
		requests:    l.requests,
		errors:      l.errors,
		elapsed:     l.elapsed,
		firstErr:    l.firstErr,
	}
	q := quantiles(l.hists, 0.5, 0.99, 0.999)
	r.p50, r.p99, r.p999 = q[0], q[1], q[2]
	if countsBefore != nil {
		after, err := infoCounts(ctx, rdbs, line)
		if err != nil {
			return result{}, err
		}
		for name, n := range after {
			after[name] = n - countsBefore[name]
		}
		r.counts = after
	}
	return r, nil
}

// countedLine is how the INFO stampede line whose counters a run of a
// keeps begins ("" for none): the "hot:" loader's with -early, app_fills
// for the lease helper.
func (h *harness) countedLine(a approach) string {
	switch {
	case h.opts.mode == modeEarly:
		return "prefix=hot:,"
	case a.read == readLease:
		return "app_fills:"
	}
	return ""
}

// infoCounts sums the counters (name=number, comma-separated) of the INFO
// stampede line beginning with begin, or whose value does, over every
// server of rdbs.
func infoCounts(ctx context.Context, rdbs []*redis.Client, begin string) (map[string]int64, error) {
	sum := map[string]int64{}
	for _, rdb := range rdbs {
		info, err := rdb.Info(ctx, "stampede").Result()
		if err != nil {
			return nil, fmt.Errorf("INFO stampede: %w", err)
		}
		for _, line := range strings.Split(info, "\n") {
			line = strings.TrimSpace(line)
			_, fields, _ := strings.Cut(line, ":")
			if !strings.HasPrefix(line, begin) && !strings.HasPrefix(fields, begin) {
				continue
			}
			for _, f := range strings.Split(fields, ",") {
				name, v, _ := strings.Cut(f, "=")
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					sum[name] += n
				}
			}
		}
	}
	return sum, nil
}

// newClients opens a client to each server, with room in each pool for its
// share of k clients; the caller closes them with closeClients.
func newClients(srvs []*child.Server, k int) []*redis.Client {
	rdbs := make([]*redis.Client, len(srvs))
	per := (k + len(srvs) - 1) / len(srvs)
	for i, srv := range srvs {
		rdbs[i] = redis.NewClient(&redis.Options{
			Addr:         srv.Addr(),
			PoolSize:     per,
			MinIdleConns: per,
			PoolTimeout:  10 * time.Second,
			DialTimeout:  5 * time.Second,
			ReadTimeout:  10 * time.Second,
			WriteTimeout: 10 * time.Second,
			MaxRetries:   -1,
		})
	}
	return rdbs
}

func closeClients(rdbs []*redis.Client) {
	for _, r := range rdbs {
		r.Close()
	}
}

// warmUp leaves the key holding a value on every server before the clients
// start, so the origin calls it makes are not counted.
func (h *harness) warmUp(ctx context.Context, a approach, rdbs []*redis.Client, org aside.Origin, key, ttlSecs string) error {
	switch a.read {
	case readGetFill:
		for _, r := range rdbs {
			if err := r.Do(ctx, "GETFILL", key, ttlSecs, strconv.Itoa(a.grace)).Err(); err != nil {
				return fmt.Errorf("warm-up GETFILL: %w", err)
			}
		}
		return nil
	case readLease:
		for _, r := range rdbs {
			if _, err := h.leaseRead(ctx, r, a, key); err != nil {
				return fmt.Errorf("warm-up FILL.LEASE: %w", err)
			}
		}
		return nil
	}
	rdb := rdbs[0]
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("FLUSHALL: %w", err)
	}
	v, err := h.fetchFunc(a, org)(ctx, key)
	if err != nil {
		return err
	}
	return rdb.Set(ctx, key, v, h.opts.ttl).Err()
}

// fetchFunc is how cache-aside approach a gets a value on a miss: from the
// HTTP origin, or computed in the client.
func (h *harness) fetchFunc(a approach, org aside.Origin) func(context.Context, string) (string, error) {
	if a.read == readAsideCompute {
		return h.origin.compute
	}
	return org.Fetch
}

// leaseRead is one read of key through the FILL.LEASE helper, computing the
// value in the client when it holds the lease.
func (h *harness) leaseRead(ctx context.Context, rdb *redis.Client, a approach, key string) (string, error) {
	return lease.GetOrCompute(ctx, rdb, key, h.opts.ttl, time.Duration(a.grace)*time.Second,
		func(ctx context.Context) (string, error) { return h.origin.compute(ctx, key) })
}

// readFunc is one client request of approach a: a read of the hot key.
func (h *harness) readFunc(a approach, org aside.Origin, key, ttlSecs string) func(context.Context, *redis.Client) error {
	switch a.read {
	case readNaive, readAsideCompute:
		fetch := h.fetchFunc(a, org)
		return func(ctx context.Context, rdb *redis.Client) error {
			_, err := aside.ReadWith(ctx, rdb, fetch, key, h.opts.ttl)
			return err
		}
	case readLock:
		return func(ctx context.Context, rdb *redis.Client) error {
			return h.lockRead(ctx, rdb, org, key)
		}
	case readLease:
		return func(ctx context.Context, rdb *redis.Client) error {
			_, err := h.leaseRead(ctx, rdb, a, key)
			return err
		}
	default:
		args := []any{"GETFILL", key, ttlSecs, strconv.Itoa(a.grace)}
		if a.early != 0 {
			args = append(args, "EARLY", strconv.Itoa(a.early))
		}
		return func(ctx context.Context, rdb *redis.Client) error {
			_, err := rdb.Do(ctx, args...).Text()
			return err
		}
	}
}

// lockRead is the SET NX lock-and-poll recipe: on a miss the client that
// takes the lock fills the key, and the others poll GET until the value
// appears or -poll-bound passes.
func (h *harness) lockRead(ctx context.Context, rdb *redis.Client, org aside.Origin, key string) error {
	o := h.opts
	lockKey := key + ":lock"
	_, err := rdb.Get(ctx, key).Result()
	if !errors.Is(err, redis.Nil) {
		return err
	}
	err = rdb.Do(ctx, "SET", lockKey, "1", "NX", "PX", "5000").Err()
	switch {
	case err == nil: // we hold the lock
		v, err := org.Fetch(ctx, key)
		if err != nil {
			rdb.Del(ctx, lockKey)
			return err
		}
		if err := rdb.Set(ctx, key, v, o.ttl).Err(); err != nil {
			return err
		}
		return rdb.Del(ctx, lockKey).Err()
	case !errors.Is(err, redis.Nil):
		return err
	}
	deadline := time.Now().Add(o.pollBound)
	for {
		select {
		case <-time.After(o.pollEvery):
		case <-ctx.Done():
			return ctx.Err()
		}
		_, err := rdb.Get(ctx, key).Result()
		if !errors.Is(err, redis.Nil) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("value did not appear within %v of polling", o.pollBound)
		}
	}
}

// load is what k clients looping on one request did.
type load struct {
	hists            []*hist // one per client
	requests, errors int64
	firstErr         string
	elapsed          time.Duration
}

// drive runs k clients, spread round robin over rdbs, each calling one in a
// loop until d has passed or ctx ends; a request cut short by ctx is not
// counted.
func drive(ctx context.Context, k int, d time.Duration, rdbs []*redis.Client, one func(context.Context, *redis.Client) error) load {
	hists := make([]*hist, k)
	var requests, errCount atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for i := 0; i < k; i++ {
		hists[i] = new(hist)
		wg.Add(1)
		go func(hs *hist, rdb *redis.Client) {
			defer wg.Done()
			var n int64
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(end) {
					break
				}
				err := one(ctx, rdb)
				if ctx.Err() != nil {
					break
				}
				hs.add(time.Since(t0))
				n++
				if err != nil {
					errCount.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
			}
			requests.Add(n)
		}(hists[i], rdbs[i%len(rdbs)])
	}
	wg.Wait()
	l := load{hists: hists, requests: requests.Load(), errors: errCount.Load(), elapsed: time.Since(start)}
	if s, ok := firstErr.Load().(string); ok {
		l.firstErr = s
	}
	return l
}
