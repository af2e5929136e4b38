// Command compare benchmarks stampedeless against redis-server on the same
// machine with redis-benchmark, compares their memory use after loading
// the same keys, and compares them at a memory bound: what a churn of
// random writes costs and keeps, and the hit ratio of a Zipf-distributed
// read trace (bound.go).
//
// Run it from the repository root:
//
//	go run ./bench/compare            # full run, a few minutes
//	go run ./bench/compare -quick     # smoke test, seconds
//
// It builds stampedeless into a temporary directory, starts redis-server and
// stampedeless as child processes on free loopback ports, runs
// `redis-benchmark -t get,set -c 50 -d 100` against each in turn for every
// configuration of {-P 1, -P 16} x {one key, -r 1000000}, and prints Markdown
// tables of the median throughput and p99 latency with the ratios
// stampedeless/redis-server. With -floor (the default) it measures
// bench/floor, a minimal Go server, the same way, so a report shows how much
// of the gap Go's runtime and network design leave before stampedeless does
// any work. See bench/README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stampedeless/stampedeless/bench/internal/child"
)

// options are the parsed command-line flags.
type options struct {
	rounds          int
	n               int // requests per test at -P 1; -P 16 runs use n*pipelineScale
	memKeys         int
	hashKeys        int
	hashMem         bool
	zsetMem         bool
	persist         bool
	persistKeys     int
	persistRounds   int
	bgsave          bool
	zsetSize        int
	collections     bool // the collections test (collections.go)
	defaultList     bool // redis-benchmark's default list (defaults.go)
	listMem         bool
	listSize        int
	streamMem       bool
	streamSize      int
	only            string
	memory          bool
	speed           bool
	quick           bool
	raw             bool
	timeout         time.Duration
	clients         int
	dataSize        int
	random          int
	maxMem          string
	procs           int // GOMAXPROCS for stampedeless; 0 leaves Go's default
	floor           bool
	loops           int  // stampedeless --event-loops (0: its default)
	fill            bool // the read-through test (fillTest)
	shared          bool // GET hits with --redis (sharedTest)
	idle            bool // CPU at rest (idleTest)
	idleFor         time.Duration
	stampedeClients int
	// baseline is another stampedeless binary (an earlier commit's, say)
	// measured in the same rounds, to show a change did not slow it.
	baseline string

	// The bound tests.
	churn, hitRatio, scale bool
	atBound                bool // the speed test at -bound
	boundMem               string
	churnSets, churnKeys   int
	typedChurn             bool   // the typed churn (churn.go)
	churnTypes             string // its workloads
	churnBounds            string // its bounds
	zipfKeys, zipfReads    int
	hitWorkloads           string // the hit-ratio test's, by name
	scaleKeys              []int
}

// pipelineScale multiplies -n for pipelined runs so they last about as long as
// the unpipelined ones.
const pipelineScale = 10

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.IntVar(&o.rounds, "rounds", 3, "rounds of the benchmark matrix; medians are taken over rounds")
	fs.IntVar(&o.n, "n", 100000, fmt.Sprintf("requests per test at -P 1 (runs at -P 16 use %d times as many)", pipelineScale))
	fs.IntVar(&o.memKeys, "keys", 1000000, "distinct keys loaded by the memory test")
	fs.StringVar(&o.only, "only", "", "comma-separated filter of the speed matrix: tests (get, set by default; or others of redis-benchmark's: lpush, lpop, lrange_100, zadd, zpopmin...), pipelines (P1, P16), keyspaces (single, random); "+
		"tokens of one kind are OR'ed, kinds are AND'ed, e.g. -only get,P16")
	fs.BoolVar(&o.memory, "memory", true, "run the memory test")
	fs.BoolVar(&o.hashMem, "hash-memory", true, "run the memory test of small hashes (.NET IDistributedCache entries)")
	fs.IntVar(&o.hashKeys, "hash-keys", 1000000, "hashes loaded by the hash memory test")
	fs.BoolVar(&o.zsetMem, "zset-memory", true, "run the memory test of one big sorted set")
	fs.IntVar(&o.zsetSize, "zset-members", 1000000, "members of the sorted-set memory test's set, a multiple of 1000")
	fs.BoolVar(&o.collections, "collections", true, "run the collections test: LPUSH, LPOP, LRANGE_100, ZADD, ZPOPMIN and ZRANGE throughput side by side with redis-server")
	fs.BoolVar(&o.defaultList, "default-list", true, "run redis-benchmark's default list (no -t: PING_INLINE to MSET) side by side with redis-server, with each test's server CPU per request")
	fs.BoolVar(&o.listMem, "list-memory", true, "run the memory test of one big list")
	fs.IntVar(&o.listSize, "list-elements", 1000000, "elements of the list memory test's list, a multiple of 1000")
	fs.BoolVar(&o.streamMem, "stream-memory", true, "run the memory test of one big stream")
	fs.IntVar(&o.streamSize, "stream-entries", 1000000, "entries of the stream memory test's stream")
	fs.BoolVar(&o.persist, "persistence", true, "run the snapshot test: SAVE and a restart from the file, side by side with redis-server's")
	fs.IntVar(&o.persistKeys, "persist-keys", 1000000, "keys of -d bytes the snapshot test saves and loads")
	fs.IntVar(&o.persistRounds, "persist-rounds", 3, "SAVEs and restarts of each server in the snapshot test, alternating; medians are shown")
	fs.BoolVar(&o.bgsave, "bgsave", true, "run the BGSAVE test: GET p99 with -persist-keys keys, without and during back-to-back BGSAVEs")
	fs.BoolVar(&o.speed, "speed", true, "run the throughput/latency test")
	fs.BoolVar(&o.atBound, "at-bound", false, "run the speed and idle tests with both servers at -bound (redis-server allkeys-lfu): the speed test's filled past it with -r random keys before the first run and never flushed, a full cache's steady state (the event-loop floors are left out); the idle test's churned past it first")
	fs.BoolVar(&o.fill, "fill", true, "run the read-through test: GETFILL hits against GET of one key, and a stampede of -stampede-clients on one cold key")
	fs.BoolVar(&o.shared, "shared", true, "run the shared-tier test: GET hits served locally by stampedeless --redis (on a redis-server of its own) against redis-server's GET")
	fs.BoolVar(&o.idle, "idle", true, "run the idle test: each server's CPU over -idle-for holding 1,000 keys with a TTL and one silent client")
	fs.DurationVar(&o.idleFor, "idle-for", 30*time.Second, "span of the idle test")
	fs.IntVar(&o.stampedeClients, "stampede-clients", 10000, "connections of the stampede (each needs a descriptor in both processes: ulimit -n)")
	fs.BoolVar(&o.quick, "quick", false, "smoke test: tiny -n, 1 round, small memory test (explicit -n/-rounds/-keys still win)")
	fs.BoolVar(&o.raw, "raw", false, "also print every individual run")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Minute, "bound on the whole run; children are killed when it passes")
	fs.IntVar(&o.clients, "c", 50, "redis-benchmark -c (parallel connections)")
	fs.IntVar(&o.dataSize, "d", 100, "redis-benchmark -d and memory-test value size in bytes")
	fs.IntVar(&o.random, "r", 1000000, "redis-benchmark -r for the random-keyspace configurations")
	fs.StringVar(&o.maxMem, "max-memory", "4gb", "stampedeless --max-memory (large enough that nothing is evicted)")
	fs.IntVar(&o.loops, "event-loops", 0, "run stampedeless with --event-loops N (0: its default, one per CPU)")
	fs.StringVar(&o.baseline, "baseline", "", "another stampedeless binary (go build -o of an earlier commit) measured in the same rounds of the speed test, to compare builds")
	fs.BoolVar(&o.floor, "floor", true, "also measure bench/floor, a minimal Go server, as the floor Go's runtime sets on this machine")
	fs.IntVar(&o.procs, "gomaxprocs", 0, "GOMAXPROCS for stampedeless (0: Go's default, one per core); 1 matches redis-server's single thread")
	fs.BoolVar(&o.churn, "churn", true, "run the churn test: random SETs, many times what fits, at -bound")
	fs.BoolVar(&o.hitRatio, "hit-ratio", true, "run the hit-ratio test: each of -hit-workloads' traces of GETs (SET on a miss) at -bound")
	fs.StringVar(&o.hitWorkloads, "hit-workloads", "zipf-0.99,zipf-0.9,zipf-0.7,scan,loop,recency,shift", "comma-separated workloads of the hit-ratio test (bench/internal/trace)")
	fs.BoolVar(&o.scale, "scale", false, "run the GET latency test with -scale-keys keys resident (10,000,000 keys take several GiB)")
	fs.StringVar(&o.boundMem, "bound", "64mb", "memory bound of the churn and hit-ratio tests (stampedeless --max-memory, redis-server maxmemory)")
	fs.IntVar(&o.churnSets, "churn-sets", 3000000, "SETs of the churn test")
	fs.BoolVar(&o.typedChurn, "typed-churn", true, "run the typed churn: each of -churn-types, ten times what fits, at each of -churn-bounds, RSS against 1.15 × bound + 24 MiB")
	fs.StringVar(&o.churnTypes, "churn-types", "strings,sets,hashes,fields,lists,zsets,mixed", "comma-separated workloads of the typed churn")
	fs.StringVar(&o.churnBounds, "churn-bounds", "32mb,64mb", "comma-separated bounds of the typed churn")
	fs.IntVar(&o.churnKeys, "churn-keys", 10000000, "keyspace the churn test's SETs draw from")
	fs.IntVar(&o.zipfKeys, "zipf-keys", 2000000, "key space of the hit-ratio test's traces")
	fs.IntVar(&o.zipfReads, "zipf-reads", 6000000, "GETs of each hit-ratio trace")
	scaleKeys := fs.String("scale-keys", "100000,10000000", "comma-separated key counts of the -scale test")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, f := range strings.Split(*scaleKeys, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-scale-keys: bad count %q", f)
		}
		o.scaleKeys = append(o.scaleKeys, n)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if o.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["n"] {
			o.n = 2000
		}
		if !set["rounds"] {
			o.rounds = 1
		}
		if !set["stampede-clients"] {
			o.stampedeClients = 200
		}
		if !set["keys"] {
			o.memKeys = 20000
		}
		if !set["hash-keys"] {
			o.hashKeys = 20000
		}
		if !set["zset-members"] {
			o.zsetSize = 20000
		}
		if !set["list-elements"] {
			o.listSize = 20000
		}
		if !set["stream-entries"] {
			o.streamSize = 20000
		}
		if !set["persist-keys"] {
			o.persistKeys = 20000
		}
		if !set["churn-sets"] {
			o.churnSets = 300000
		}
		if !set["zipf-reads"] {
			o.zipfReads = 300000
		}
		if !set["idle-for"] {
			o.idleFor = 3 * time.Second
		}
	}
	switch {
	case o.rounds < 1:
		return o, errors.New("-rounds must be at least 1")
	case o.n < 1:
		return o, errors.New("-n must be at least 1")
	case o.idleFor < time.Second:
		return o, errors.New("-idle-for must be at least 1s")
	case o.persistKeys < 1 || o.persistKeys > 99999999:
		return o, errors.New("-persist-keys must be between 1 and 99999999")
	case o.persistRounds < 1:
		return o, errors.New("-persist-rounds must be at least 1")
	case o.hashKeys < 1 || o.hashKeys > 9999999:
		return o, errors.New("-hash-keys must be between 1 and 9999999")
	case o.zsetSize < 1000 || o.zsetSize%1000 != 0 || o.zsetSize > 9999999:
		return o, errors.New("-zset-members must be a multiple of 1000 below 10000000")
	case o.listSize < 1000 || o.listSize%1000 != 0 || o.listSize > 9999999:
		return o, errors.New("-list-elements must be a multiple of 1000 below 10000000")
	case o.streamSize < 1 || o.streamSize > 9999999:
		return o, errors.New("-stream-entries must be between 1 and 9999999")
	case o.memKeys < 1 || o.memKeys > 99999999:
		return o, errors.New("-keys must be between 1 and 99999999")
	case o.dataSize < 1:
		return o, errors.New("-d must be at least 1")
	}
	return o, nil
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run does the work; it returns only after every child process is gone.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "compare:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	if o.procs > 0 {
		// Only the children read it: this process's runtime has started.
		os.Setenv("GOMAXPROCS", strconv.Itoa(o.procs))
	}
	h := &harness{opts: o, out: stdout, log: stderr, args: args}
	defer h.cleanup()
	if err := h.main(ctx); err != nil {
		if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%v)", err, cause)
		}
		fmt.Fprintln(stderr, "compare:", err)
		return 1
	}
	if h.failed {
		fmt.Fprintln(stderr, "compare: finished with failures (see Notes)")
		return 1
	}
	return 0
}

// harness holds what one invocation shares: the temporary directory, the
// stampedeless binary, the running servers and the anomalies seen.
type harness struct {
	opts options
	out  io.Writer
	log  io.Writer
	args []string

	cpu      cpuAccount
	tmp      string
	bin      string
	floorBin string // bench/floor, when -floor
	servers  []*server
	notes    []string
	failed   bool
}

func (h *harness) logf(format string, a ...any) {
	fmt.Fprintf(h.log, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// note records an anomaly for the Notes section; fail also makes the exit
// status non-zero.
func (h *harness) note(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	for _, n := range h.notes {
		if n == msg {
			return
		}
	}
	h.notes = append(h.notes, msg)
	h.logf("note: %s", msg)
}

func (h *harness) fail(format string, a ...any) {
	h.failed = true
	h.note("FAIL: "+format, a...)
}

// cleanup kills every server still running and removes the temporary
// directory.
func (h *harness) cleanup() {
	for _, s := range h.servers {
		s.Stop()
	}
	h.servers = nil
	if h.tmp != "" {
		os.RemoveAll(h.tmp)
	}
}

func (h *harness) main(ctx context.Context) error {
	for _, tool := range []string{"redis-server", "redis-benchmark", "redis-cli", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found in PATH: %w", tool, err)
		}
	}
	root, err := child.ModuleRoot(ctx)
	if err != nil {
		return err
	}
	h.tmp, err = os.MkdirTemp("", "stampedeless-bench-")
	if err != nil {
		return err
	}
	h.bin = filepath.Join(h.tmp, "stampedeless")
	if err := h.build(ctx, root, h.bin, "./cmd/stampedeless"); err != nil {
		return err
	}
	if h.opts.floor {
		h.floorBin = filepath.Join(h.tmp, "floor")
		if err := h.build(ctx, root, h.floorBin, "./bench/floor"); err != nil {
			return err
		}
	}

	env := describeEnvironment(ctx, root, h.bin, h.args)
	fmt.Fprint(h.out, env.markdown())

	h.cpu = startCPUAccount()
	if l := loadAverage(); l > float64(runtime.NumCPU())/2 {
		h.note("load average at the start was %.2f on %d cores: other processes may have skewed the numbers", l, runtime.NumCPU())
	}
	if h.opts.speed {
		if err := h.speedTest(ctx); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		on  bool
		run func(context.Context) error
	}{{h.opts.fill, h.fillTest}, {h.opts.shared, h.sharedTest}, {h.opts.idle, h.idleTest}, {h.opts.memory, h.memoryTest}, {h.opts.hashMem, h.hashMemoryTest}, {h.opts.collections, h.collectionsTest}, {h.opts.defaultList, h.defaultListTest}, {h.opts.zsetMem, h.zsetMemoryTest}, {h.opts.listMem, h.listMemoryTest}, {h.opts.streamMem, h.streamMemoryTest}, {h.opts.persist, h.persistTest}, {h.opts.bgsave, h.bgsaveTest}, {h.opts.churn, h.churnTest}, {h.opts.typedChurn, h.typedChurnTest}, {h.opts.hitRatio, h.hitRatioTest}, {h.opts.scale, h.scaleTest}} {
		if t.on && ctx.Err() == nil {
			if err := t.run(ctx); err != nil {
				return err
			}
		}
	}
	if u, ok := h.cpu.foreignShare(); ok {
		msg := fmt.Sprintf("other processes used %.0f%% of the machine's CPU during the run", 100*u)
		if u > 0.1 {
			h.note("%s: they may have skewed the numbers", msg)
		} else {
			h.logf("%s", msg)
			fmt.Fprintf(h.out, "\n%s.\n", strings.ToUpper(msg[:1])+msg[1:])
		}
	}
	if len(h.notes) > 0 {
		fmt.Fprintln(h.out, "\n### Notes")
		fmt.Fprintln(h.out)
		for _, n := range h.notes {
			fmt.Fprintf(h.out, "- %s\n", n)
		}
	}
	return nil
}

// build compiles the command in pkg, relative to the module root, into bin.
func (h *harness) build(ctx context.Context, root, bin, pkg string) error {
	h.logf("building %s from %s", pkg, root)
	return child.Build(ctx, root, bin, pkg, h.log)
}

// environment is the header describing where and how the numbers were taken.
type environment struct {
	date, cpus, cpuModel, goVersion, redisVersion, benchVersion string
	stampedeless, commandLine, load                             string
}

func describeEnvironment(ctx context.Context, root, bin string, args []string) environment {
	e := environment{
		date:      time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		cpus:      child.FirstLine(ctx, "", "nproc"),
		cpuModel:  child.CPUModel(),
		goVersion: runtime.Version(),
		load:      strconv.FormatFloat(loadAverage(), 'f', 2, 64),
	}
	if v := child.FirstLine(ctx, "", "go", "env", "GOVERSION"); v != "" {
		e.goVersion = v
	}
	e.redisVersion = child.FirstLine(ctx, "", "redis-server", "--version")
	e.benchVersion = child.FirstLine(ctx, "", "redis-benchmark", "--version")
	e.stampedeless = child.FirstLine(ctx, "", bin, "version")
	if rev := child.FirstLine(ctx, root, "git", "rev-parse", "--short", "HEAD"); rev != "" {
		if dirty := child.FirstLine(ctx, root, "git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench"); dirty != "" {
			rev += " (uncommitted changes outside bench/)"
		}
		e.stampedeless += ", commit " + rev
	}
	quoted := []string{"go", "run", "./bench/compare"}
	for _, a := range args {
		quoted = append(quoted, child.ShellQuote(a))
	}
	e.commandLine = strings.Join(quoted, " ")
	return e
}

func (e environment) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## stampedeless vs redis-server\n\n")
	fmt.Fprintf(&b, "- date: %s\n", e.date)
	fmt.Fprintf(&b, "- machine: %s cores (nproc), %s; load average at start %s\n", e.cpus, e.cpuModel, e.load)
	fmt.Fprintf(&b, "- go: %s; stampedeless: %s\n", e.goVersion, e.stampedeless)
	fmt.Fprintf(&b, "- %s; %s\n", e.redisVersion, e.benchVersion)
	fmt.Fprintf(&b, "- command: `%s`\n", e.commandLine)
	return b.String()
}

// loadAverage is the 1-minute load average, or 0 when unknown.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	l, _ := strconv.ParseFloat(f[0], 64)
	return l
}
