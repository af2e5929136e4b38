// Command stampede measures cache stampedes on one hot key: naive
// cache-aside and SET NX lock-and-poll on redis-server, against stampedeless
// GETFILL (grace 0 and grace 5), all in front of the same in-process HTTP
// origin that sleeps 200 ms per call and counts its calls. -fleet compares
// one replica with three; -lease compares the get-or-compute helper on
// FILL.LEASE (examples/go/lease) with cache-aside, both computing the value
// in the client process; -early measures early refresh (XFetch) on GETFILL.
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
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stampedeless/stampedeless/bench/internal/child"
)

// options are the command line's.
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
	mode      mode
}

// mode is what a run compares.
type mode int

const (
	modeSingle mode = iota // the recipes on Redis against GETFILL on one stampedeless
	modeFleet              // -fleet: one replica against three
	modeLease              // -lease: the FILL.LEASE helper against cache-aside, computing in the client
	modeEarly              // -early: GETFILL with and without early refresh
)

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
	fleet := fs.Bool("fleet", false, "compare one replica with three, local-only and --redis (default K = 300,1000)")
	lease := fs.Bool("lease", false, "compare the FILL.LEASE get-or-compute helper with cache-aside, both computing the value in the client (no chart unless -png)")
	early := fs.Bool("early", false, "compare GETFILL with and without early refresh (EARLY, --early-refresh): share of reads served stale or waiting (default K = 100; no chart unless -png)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	kSet, pngSet := false, false
	fs.Visit(func(f *flag.Flag) {
		kSet = kSet || f.Name == "k"
		pngSet = pngSet || f.Name == "png"
	})
	switch {
	case *fleet && (*lease || *early) || *lease && *early:
		return o, errors.New("-fleet, -lease and -early are exclusive")
	case *fleet:
		o.mode = modeFleet
		if !kSet {
			*kList = "300,1000"
		}
		if !pngSet {
			o.png = "bench/stampede/fleet.png"
		}
	case *lease, *early:
		o.mode = modeLease
		if *early {
			o.mode = modeEarly
			if !kSet {
				*kList = "100"
			}
		}
		if !pngSet {
			o.png = ""
		}
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

// harness is one run of the program: the servers it started, and what it
// prints.
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

// main builds the server, starts everything, runs every approach at every K
// and prints the report.
func (h *harness) main(ctx context.Context) error {
	root, err := h.build(ctx)
	if err != nil {
		return err
	}
	if err := h.startServers(ctx); err != nil {
		return err
	}
	h.printHeader(ctx, root)
	results, baselines, err := h.runAll(ctx)
	if err != nil {
		return err
	}
	switch h.opts.mode {
	case modeSingle:
		h.printTable(results)
		h.printBaseline(results, baselines)
	case modeFleet:
		h.printTable(results)
		cold, err := h.runColdAll(ctx)
		if err != nil {
			return err
		}
		h.printCold(cold)
	case modeLease:
		h.printTable(results)
		h.printLeases(results)
	case modeEarly:
		h.printEarly(results)
	}
	if h.opts.png != "" {
		if err := writeChart(h.opts.png, h.opts.ks, len(h.approaches), results); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		h.logf("chart written to %s", h.opts.png)
		h.printChartLegend()
	}
	h.printNotes()
	return nil
}

// build checks the tools the run needs and builds ./cmd/stampedeless into a
// temporary directory; it returns the module's root.
func (h *harness) build(ctx context.Context) (string, error) {
	for _, tool := range []string{"redis-server", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%s not found in PATH: %w", tool, err)
		}
	}
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run from the stampedeless repository")
	}
	root := filepath.Dir(gomod)
	h.tmp, err = os.MkdirTemp("", "stampedeless-stampede-")
	if err != nil {
		return "", err
	}
	h.bin = filepath.Join(h.tmp, "stampedeless")
	h.logf("building stampedeless from %s", root)
	build := exec.CommandContext(ctx, "go", "build", "-o", h.bin, "./cmd/stampedeless")
	build.Dir = root
	build.Stdout, build.Stderr = h.log, h.log
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/stampedeless: %w", err)
	}
	return root, nil
}

// startServers starts the origin, the redis-server, and the stampedeless
// servers of every group the compared approaches use.
func (h *harness) startServers(ctx context.Context) error {
	var err error
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
	h.approaches = approachesOf[h.opts.mode]
	h.groups = map[serverGroup][]*child.Server{groupRedis: {redisSrv}}
	needed := map[serverGroup]bool{}
	for _, a := range h.approaches {
		needed[a.servers] = true
	}
	if h.opts.mode == modeSingle {
		needed[baseline.servers] = true
	}
	if needed[groupSingle] {
		srv, err := stampede("stampedeless")
		if err != nil {
			return err
		}
		h.groups[groupSingle] = []*child.Server{srv}
	}
	if needed[groupEarly] {
		srv, err := stampede("stampedeless-early", "--early-refresh", "1")
		if err != nil {
			return err
		}
		h.groups[groupEarly] = []*child.Server{srv}
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
	return nil
}
