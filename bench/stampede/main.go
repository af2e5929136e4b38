// Command stampede measures cache stampedes on one hot key: naive
// cache-aside and SET NX lock-and-poll on redis-server, against stampedeless
// GETFILL (grace 0 and grace 5), all in front of the same in-process HTTP
// origin that sleeps 200 ms per call and counts its calls.
//
//	go run ./bench/stampede            # K = 100,500,1000, 30 s per run
//	go run ./bench/stampede -quick     # K = 100, 5 s per run
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/bench/internal/aside"
	"github.com/stampedeless/stampedeless/bench/internal/child"
)

type options struct {
	ks        []int
	duration  time.Duration
	ttl       time.Duration
	latency   time.Duration
	pollEvery time.Duration
	pollBound time.Duration
	timeout   time.Duration
	png       string
	quick     bool
	fleet     bool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("stampede", flag.ContinueOnError)
	kList := fs.String("k", "100,500,1000", "comma-separated numbers of concurrent clients")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long each approach runs at each K")
	fs.DurationVar(&o.ttl, "ttl", time.Second, "ttl of the hot key (whole seconds)")
	fs.DurationVar(&o.latency, "origin-latency", 200*time.Millisecond, "latency of each origin call")
	fs.DurationVar(&o.pollEvery, "poll", 10*time.Millisecond, "lock recipe: how often losers poll GET")
	fs.DurationVar(&o.pollBound, "poll-bound", 5*time.Second, "lock recipe: how long a loser polls before giving up the request")
	fs.DurationVar(&o.timeout, "timeout", 15*time.Minute, "hard limit for the whole program")
	fs.StringVar(&o.png, "png", "bench/stampede/stampede.png", "where to write the chart (empty: none)")
	fs.BoolVar(&o.quick, "quick", false, "smoke test: -duration 5s, K=100 only")
	fs.BoolVar(&o.fleet, "fleet", false, "compare one replica with three, local-only and --redis (default K = 300,1000)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	kSet, pngSet := false, false
	fs.Visit(func(f *flag.Flag) {
		kSet = kSet || f.Name == "k"
		pngSet = pngSet || f.Name == "png"
	})
	if o.fleet && !kSet {
		*kList = "300,1000"
	}
	if o.fleet && !pngSet {
		o.png = "bench/stampede/fleet.png"
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	for _, f := range strings.Split(*kList, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 20000 {
			return o, fmt.Errorf("-k: bad client count %q", f)
		}
		o.ks = append(o.ks, k)
	}
	if o.quick {
		o.duration = 5 * time.Second
		o.ks = o.ks[:1]
	}
	switch {
	case o.duration < time.Second:
		return o, errors.New("-duration must be at least 1s")
	case o.ttl < time.Second || o.ttl%time.Second != 0:
		return o, errors.New("-ttl must be a whole number of seconds")
	case o.timeout <= 0:
		return o, errors.New("-timeout must be positive")
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "stampede:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	h := &harness{opts: o, out: stdout, log: stderr, args: args}
	defer h.cleanup()
	if err := h.main(ctx); err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		fmt.Fprintln(stderr, "stampede:", err)
		return 1
	}
	return 0
}

type harness struct {
	opts    options
	out     io.Writer
	log     io.Writer
	args    []string
	tmp     string
	bin     string
	servers []*child.Server
	origin  *origin
	notes   []string
	// approaches are the ones this run compares.
	approaches []approach
	// groups are the servers of each serverGroup.
	groups map[serverGroup][]*child.Server
}

func (h *harness) logf(format string, a ...any) {
	fmt.Fprintf(h.log, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

func (h *harness) cleanup() {
	for _, s := range h.servers {
		s.Stop()
	}
	h.servers = nil
	if h.origin != nil {
		h.origin.srv.Close()
	}
	if h.tmp != "" {
		os.RemoveAll(h.tmp)
	}
}

// startServer starts a child server and keeps it for cleanup.
func (h *harness) startServer(ctx context.Context, name string, argv func(port int) (string, []string)) (*child.Server, error) {
	s, err := child.Start(ctx, h.tmp, name, argv)
	if err != nil {
		return nil, err
	}
	h.servers = append(h.servers, s)
	h.logf("started %s pid %d on %s", name, s.Pid(), s.Addr())
	return s, nil
}

// approach is one way of reading the hot key.
type approach struct {
	name    string
	read    reader
	grace   int  // GETFILL only
	hitOnly bool // GETFILL of a key that never expires: the plain-hit baseline
	// servers names the servers the clients are spread over, round robin.
	servers serverGroup
}

// reader is how an approach reads the hot key.
type reader int

const (
	readNaive   reader = iota // cache-aside on redis-server
	readLock                  // SET NX lock and poll on redis-server
	readGetFill               // GETFILL on stampedeless
)

// serverGroup names a set of servers the harness starts.
type serverGroup int

const (
	groupRedis      serverGroup = iota // one redis-server
	groupSingle                        // one stampedeless
	groupLocalFleet                    // three stampedeless, each on its own
	groupRedisFleet                    // three stampedeless sharing the redis-server (--redis)
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
}

func (r result) perExpiry() float64 { return float64(r.originCalls) / r.expiries }
func (r result) perBurst() float64 {
	if r.bursts == 0 {
		return 0
	}
	return float64(r.originCalls) / float64(r.bursts)
}
func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (h *harness) main(ctx context.Context) error {
	for _, tool := range []string{"redis-server", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found in PATH: %w", tool, err)
		}
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return errors.New("not inside a Go module: run from the stampedeless repository")
	}
	root := filepath.Dir(gomod)
	h.tmp, err = os.MkdirTemp("", "stampedeless-stampede-")
	if err != nil {
		return err
	}
	h.bin = filepath.Join(h.tmp, "stampedeless")
	h.logf("building stampedeless from %s", root)
	build := exec.CommandContext(ctx, "go", "build", "-o", h.bin, "./cmd/stampedeless")
	build.Dir = root
	build.Stdout, build.Stderr = h.log, h.log
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/stampedeless: %w", err)
	}

	h.origin, err = startOrigin(h.opts.latency)
	if err != nil {
		return err
	}
	h.logf("origin on %s (latency %v)", h.origin.base, h.opts.latency)

	redisSrv, err := h.startServer(ctx, "redis-server", func(port int) (string, []string) {
		return "redis-server", []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--maxclients", "20000"}
	})
	if err != nil {
		return err
	}
	stampede := func(name string, extra ...string) (*child.Server, error) {
		return h.startServer(ctx, name, func(port int) (string, []string) {
			return h.bin, append([]string{"--addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
				"--metrics-addr", "", "--log-level", "warn",
				"--loader", "hot:=" + h.origin.base + "/{key}"}, extra...)
		})
	}
	h.approaches = singleApproaches
	if h.opts.fleet {
		h.approaches = fleetApproaches
	}
	h.groups = map[serverGroup][]*child.Server{groupRedis: {redisSrv}}
	needed := map[serverGroup]bool{}
	for _, a := range h.approaches {
		needed[a.servers] = true
	}
	if !h.opts.fleet {
		needed[baseline.servers] = true
	}
	if needed[groupSingle] {
		srv, err := stampede("stampedeless")
		if err != nil {
			return err
		}
		h.groups[groupSingle] = []*child.Server{srv}
	}
	for i := range 3 {
		if needed[groupLocalFleet] {
			srv, err := stampede(fmt.Sprintf("stampedeless-local-%d", i+1))
			if err != nil {
				return err
			}
			h.groups[groupLocalFleet] = append(h.groups[groupLocalFleet], srv)
		}
		if needed[groupRedisFleet] {
			srv, err := stampede(fmt.Sprintf("stampedeless-redis-%d", i+1), "--redis", redisSrv.Addr())
			if err != nil {
				return err
			}
			h.groups[groupRedisFleet] = append(h.groups[groupRedisFleet], srv)
		}
	}

	h.printHeader(ctx, root)

	var results, baselines []result
	runID := 0
	for _, k := range h.opts.ks {
		for ai, a := range h.approaches {
			if err := ctx.Err(); err != nil {
				return err
			}
			runID++
			key := fmt.Sprintf("hot:run%d-k%d-a%d", runID, k, ai)
			h.logf("K=%d %s: %v on key %s", k, a.name, h.opts.duration, key)
			r, err := h.runOne(ctx, ai, a, k, key)
			if err != nil {
				return fmt.Errorf("K=%d %s: %w", k, a.name, err)
			}
			for _, srv := range h.groups[a.servers] {
				if !srv.Alive() {
					return srv.ExitError()
				}
			}
			h.logf("  origin calls %d (%.1f/expiry, %d bursts), %d requests, %.0f req/s, p50 %v p99 %v p999 %v, errors %d",
				r.originCalls, r.perExpiry(), r.bursts, r.requests, r.rps(), r.p50, r.p99, r.p999, r.errors)
			if r.errors > 0 {
				h.notes = append(h.notes, fmt.Sprintf("K=%d %s: %d failed requests (first: %s)", k, a.name, r.errors, r.firstErr))
			}
			results = append(results, r)
		}
		if h.opts.fleet {
			continue
		}
		runID++
		key := fmt.Sprintf("hot:run%d-k%d-baseline", runID, k)
		h.logf("K=%d %s: %v on key %s", k, baseline.name, h.opts.duration, key)
		r, err := h.runOne(ctx, len(h.approaches), baseline, k, key)
		if err != nil {
			return fmt.Errorf("K=%d %s: %w", k, baseline.name, err)
		}
		h.logf("  %d requests, %.0f req/s, p50 %v p99 %v p999 %v, errors %d", r.requests, r.rps(), r.p50, r.p99, r.p999, r.errors)
		baselines = append(baselines, r)
	}
	h.printTable(results)
	if !h.opts.fleet {
		h.printBaseline(results, baselines)
	} else {
		cold, err := h.runColdAll(ctx)
		if err != nil {
			return err
		}
		h.printCold(cold)
	}
	if h.opts.png != "" {
		if err := writeChart(h.opts.png, h.opts.ks, len(h.approaches), results); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		h.logf("chart written to %s", h.opts.png)
		var legend []string
		for i, a := range h.approaches {
			legend = append(legend, fmt.Sprintf("%d %s %s", i+1, barColorNames[i%len(barColorNames)], a.name))
		}
		fmt.Fprintf(h.out, "\nChart: `%s` (top: origin calls per expiry, log scale, values under 0.1 clipped; bottom: p99 latency in ms, log scale; bars grouped by K; legend boxes %s).\n",
			h.opts.png, strings.Join(legend, "; "))
	}
	if len(h.notes) > 0 {
		fmt.Fprint(h.out, "\n### Notes\n\n")
		for _, n := range h.notes {
			fmt.Fprintf(h.out, "- %s\n", n)
		}
	}
	return nil
}

func (h *harness) printHeader(ctx context.Context, root string) {
	quoted := []string{"go", "run", "./bench/stampede"}
	for _, a := range h.args {
		quoted = append(quoted, child.ShellQuote(a))
	}
	goVer := child.FirstLine(ctx, "", "go", "env", "GOVERSION")
	if goVer == "" {
		goVer = runtime.Version()
	}
	stamp := child.FirstLine(ctx, "", h.bin, "version")
	if rev := child.FirstLine(ctx, root, "git", "rev-parse", "--short", "HEAD"); rev != "" {
		stamp += ", commit " + rev
	}
	o := h.opts
	fmt.Fprintf(h.out, "## Stampede: one hot key, ttl %v, origin latency %v\n\n", o.ttl, o.latency)
	fmt.Fprintf(h.out, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(h.out, "- machine: %s cores (nproc), %s\n", child.FirstLine(ctx, "", "nproc"), child.CPUModel())
	fmt.Fprintf(h.out, "- go: %s; stampedeless: %s; %s\n", goVer, stamp, child.FirstLine(ctx, "", "redis-server", "--version"))
	fmt.Fprintf(h.out, "- command: `%s`\n", strings.Join(quoted, " "))
	fmt.Fprintf(h.out, "- each run: %v, K clients looping as fast as they can (go-redis v9, PoolSize=K); key pre-warmed just before the clients start, warm-up calls not counted; expiries = duration/ttl, but a refilled key lives ttl from the end of its ~origin-latency refill, so the key really expires about every ttl+latency and one refill per expiry shows as less than 1 call/expiry; refill bursts = groups of origin calls separated by at least ttl/2, i.e. the refills actually observed; lock recipe polls every %v for at most %v\n\n",
		o.duration, o.pollEvery, o.pollBound)
}

func (h *harness) printTable(results []result) {
	fmt.Fprintln(h.out, "| approach | K | origin calls | expiries | calls/expiry | refill bursts | calls/burst | p50 | p99 | p99.9 | req/s | errors |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(h.out, "| %s | %d | %d | %.0f | %.1f | %d | %.1f | %s | %s | %s | %.0f | %d |\n",
			h.approaches[r.approach].name, r.k, r.originCalls, r.expiries, r.perExpiry(), r.bursts, r.perBurst(),
			fmtDur(r.p50), fmtDur(r.p99), fmtDur(r.p999), r.rps(), r.errors)
	}
}

// printBaseline compares GETFILL with a grace, whose readers never wait for
// the origin, against plain cache hits at the same K: the target is
// a p99 within 2x.
func (h *harness) printBaseline(results, baselines []result) {
	fmt.Fprint(h.out, "\n### Plain cache hit baseline\n\n")
	fmt.Fprintln(h.out, "| K | plain hit p50 | plain hit p99 | plain hit req/s | GETFILL grace 5 p99 | p99 ratio (target ≤ 2) |")
	fmt.Fprintln(h.out, "|---:|---:|---:|---:|---:|---:|")
	for _, b := range baselines {
		for _, r := range results {
			if r.k != b.k || h.approaches[r.approach].grace == 0 {
				continue
			}
			fmt.Fprintf(h.out, "| %d | %s | %s | %.0f | %s | %.2f |\n", b.k, fmtDur(b.p50), fmtDur(b.p99), b.rps(),
				fmtDur(r.p99), float64(r.p99)/float64(b.p99))
		}
	}
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
}

// origin is the in-process HTTP origin: it sleeps, then answers 200 with a
// value, counting calls per key.
type origin struct {
	srv     *http.Server
	base    string
	latency time.Duration
	mu      sync.Mutex
	calls   map[string]*atomic.Int64
	times   map[string][]time.Time // start of each call, per key
}

func startOrigin(latency time.Duration) (*origin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := &origin{base: "http://" + ln.Addr().String(), latency: latency, calls: map[string]*atomic.Int64{}, times: map[string][]time.Time{}}
	o.srv = &http.Server{Handler: o, ReadHeaderTimeout: 10 * time.Second}
	go o.srv.Serve(ln)
	return o, nil
}

func (o *origin) counter(key string) *atomic.Int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.calls[key]
	if c == nil {
		c = new(atomic.Int64)
		o.calls[key] = c
	}
	return c
}

// bursts counts the groups of calls for key made after the first skip
// calls, a new group starting when a call comes gap or more after the
// previous one.
func (o *origin) bursts(key string, skip int64, gap time.Duration) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	ts := append([]time.Time(nil), o.times[key]...)
	if skip > int64(len(ts)) {
		skip = int64(len(ts))
	}
	ts = ts[skip:]
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	n := 0
	for i, t := range ts {
		if i == 0 || t.Sub(ts[i-1]) >= gap {
			n++
		}
	}
	return n
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/")
	n := o.counter(key).Add(1)
	o.mu.Lock()
	o.times[key] = append(o.times[key], time.Now())
	o.mu.Unlock()
	select {
	case <-time.After(o.latency):
	case <-r.Context().Done():
		return
	}
	fmt.Fprintf(w, "value of %s #%d", key, n)
}

// hist is a log-linear latency histogram (64 sub-buckets per power of two,
// under 1.6% error).
type hist [64 * 64]uint32

func bucketOf(ns int64) int {
	if ns < 64 {
		if ns < 0 {
			return 0
		}
		return int(ns)
	}
	e := bits.Len64(uint64(ns)) - 7
	return (e+1)*64 + int(uint64(ns)>>e) - 64
}

func valueOf(b int) time.Duration {
	if b < 64 {
		return time.Duration(b)
	}
	e := b/64 - 1
	return time.Duration(uint64(b%64+64) << e)
}

func (h *hist) add(d time.Duration) { h[bucketOf(int64(d))]++ }

func quantiles(hs []*hist, qs ...float64) []time.Duration {
	var total uint64
	var sum hist
	for _, h := range hs {
		for i, c := range h {
			sum[i] += c
			total += uint64(c)
		}
	}
	out := make([]time.Duration, len(qs))
	if total == 0 {
		return out
	}
	for qi, q := range qs {
		rank := uint64(q * float64(total))
		if rank >= total {
			rank = total - 1
		}
		var seen uint64
		for i, c := range sum {
			seen += uint64(c)
			if seen > rank {
				out[qi] = valueOf(i)
				break
			}
		}
	}
	return out
}

// runOne runs one approach with k clients for the configured duration,
// spread round robin over the approach's servers.
func (h *harness) runOne(parent context.Context, ai int, a approach, k int, key string) (result, error) {
	o := h.opts
	// Hard deadline for this run: the duration plus room for the slowest
	// in-flight request and teardown.
	ctx, cancel := context.WithTimeout(parent, o.duration+o.pollBound+30*time.Second)
	defer cancel()

	srvs := h.groups[a.servers]
	rdbs := make([]*redis.Client, len(srvs))
	for i, srv := range srvs {
		per := (k + len(srvs) - 1) / len(srvs)
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
		defer rdbs[i].Close()
	}
	rdb := rdbs[0]
	org := aside.NewOrigin(h.origin.base, k)
	defer org.Close()
	ttlSecs := strconv.Itoa(int(o.ttl / time.Second))
	if a.hitOnly {
		ttlSecs = strconv.Itoa(int((o.duration + time.Hour) / time.Second))
	}
	lockKey := key + ":lock"

	// Warm up: the key holds a value on every server when the clients start,
	// and the origin calls made so far are not counted.
	if a.read != readGetFill {
		if err := rdb.FlushAll(ctx).Err(); err != nil {
			return result{}, fmt.Errorf("FLUSHALL: %w", err)
		}
		v, err := org.Fetch(ctx, key)
		if err != nil {
			return result{}, err
		}
		if err := rdb.Set(ctx, key, v, o.ttl).Err(); err != nil {
			return result{}, err
		}
	} else {
		for _, r := range rdbs {
			if err := r.Do(ctx, "GETFILL", key, ttlSecs, strconv.Itoa(a.grace)).Err(); err != nil {
				return result{}, fmt.Errorf("warm-up GETFILL: %w", err)
			}
		}
	}
	counter := h.origin.counter(key)
	before := counter.Load()

	var one func(ctx context.Context, rdb *redis.Client) error
	switch a.read {
	case readNaive:
		one = func(ctx context.Context, rdb *redis.Client) error {
			_, err := aside.Read(ctx, rdb, org, key, o.ttl)
			return err
		}
	case readLock:
		one = func(ctx context.Context, rdb *redis.Client) error {
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
	default:
		grace := strconv.Itoa(a.grace)
		one = func(ctx context.Context, rdb *redis.Client) error {
			_, err := rdb.Do(ctx, "GETFILL", key, ttlSecs, grace).Text()
			return err
		}
	}

	hists := make([]*hist, k)
	var requests, errCount atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(o.duration)
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
	elapsed := time.Since(start)
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
		requests:    requests.Load(),
		errors:      errCount.Load(),
		elapsed:     elapsed,
	}
	if s, ok := firstErr.Load().(string); ok {
		r.firstErr = s
	}
	q := quantiles(hists, 0.5, 0.99, 0.999)
	r.p50, r.p99, r.p999 = q[0], q[1], q[2]
	return r, nil
}
