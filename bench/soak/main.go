// Command soak runs stampedeless for as long as asked under mixed client
// load and injected faults, then checks what must hold and prints a table.
//
// It builds ./cmd/stampedeless and starts it as child processes on free
// loopback ports: one server (or, with -redis, -replicas servers sharing a
// real redis-server) that takes the mixed load, and a separate churn server
// with a small --max-memory. Clients are go-redis in its default
// configuration. The origin is an HTTP server in this process that spikes,
// fails, resets and hangs.
//
//	go run ./bench/soak -duration 60s
//	go run ./bench/soak -duration 10m -redis -replicas 3
//
// The exit status is 1 when a must-hold check fails (or the run could not
// be made), 2 for bad flags.
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stampedeless/stampedeless/bench/internal/child"
	"github.com/stampedeless/stampedeless/internal/memsize"
)

// options are the command line's.
type options struct {
	duration       time.Duration
	redis          bool
	replicas       int
	eventLoops     int
	maxMemory      int64
	churnMaxMemory int64
	fillKeys       int
	clients        int
	rawEvery       time.Duration
	killEvery      time.Duration
	redisEvery     time.Duration
	redisKill      bool // kill and restart Redis among its faults
	redisStop      bool // stop and continue Redis among its faults
	loaderTimeout  time.Duration
	pace           time.Duration
	keep           bool
	verbose        bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "how long to drive load and faults")
	fs.BoolVar(&o.redis, "redis", false, "fleet mode: -replicas servers sharing a real redis-server, which is killed and stopped")
	fs.IntVar(&o.replicas, "replicas", 3, "with -redis: how many servers share the redis-server")
	fs.IntVar(&o.eventLoops, "event-loops", 0, "run the servers with --event-loops N (0: their default, one per CPU)")
	maxMem := fs.String("max-memory", "256mb", "--max-memory of the servers that take the mixed load (far above what it stores)")
	churnMem := fs.String("churn-max-memory", "32mb", "--max-memory of the churn server, which lives at its bound")
	fs.IntVar(&o.fillKeys, "fill-keys", 200, "distinct GETFILL keys")
	fs.IntVar(&o.clients, "clients", 2, "goroutines of each client kind per server")
	fs.DurationVar(&o.rawEvery, "raw-fault-every", 100*time.Millisecond, "mean interval between connections cut mid-command")
	fs.DurationVar(&o.killEvery, "kill-every", 500*time.Millisecond, "mean interval between CLIENT KILLs")
	fs.DurationVar(&o.redisEvery, "redis-fault-every", 10*time.Second, "with -redis: mean interval between redis-server kills and stops")
	redisKinds := fs.String("redis-faults", "kill,stop", "with -redis: which faults to inject, kill (SIGKILL, restart empty) and/or stop (SIGSTOP, SIGCONT)")
	fs.DurationVar(&o.loaderTimeout, "loader-timeout", time.Second, "the loader's TIMEOUT (a hanging origin call lasts this long)")
	fs.DurationVar(&o.pace, "pace", time.Millisecond, "pause between one client's commands (0: as fast as answers come); the churn writer pauses 5 times as long")
	fs.BoolVar(&o.keep, "keep", false, "keep the servers' logs (the directory is printed)")
	fs.BoolVar(&o.verbose, "v", false, "log go-redis's own messages too")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	var err error
	if o.maxMemory, err = memsize.Parse(*maxMem); err != nil {
		return o, fmt.Errorf("-max-memory: %w", err)
	}
	if o.churnMaxMemory, err = memsize.Parse(*churnMem); err != nil {
		return o, fmt.Errorf("-churn-max-memory: %w", err)
	}
	for _, k := range strings.Split(*redisKinds, ",") {
		switch strings.TrimSpace(k) {
		case "kill":
			o.redisKill = true
		case "stop":
			o.redisStop = true
		case "":
		default:
			return o, fmt.Errorf("-redis-faults: unknown fault %q (want kill, stop)", k)
		}
	}
	switch {
	case o.duration < 5*time.Second:
		return o, errors.New("-duration must be at least 5s")
	case o.redis && o.replicas < 1:
		return o, errors.New("-replicas must be at least 1")
	case o.fillKeys < 1 || o.clients < 1:
		return o, errors.New("-fill-keys and -clients must be at least 1")
	case o.loaderTimeout < 100*time.Millisecond:
		return o, errors.New("-loader-timeout must be at least 100ms")
	}
	return o, nil
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "soak:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The run ends after -duration; setting up, the final reads and the
	// wait for goroutines get a few minutes more.
	ctx, cancel := context.WithTimeout(ctx, o.duration+5*time.Minute)
	defer cancel()

	h := &harness{o: o, out: stdout, log: stderr, args: args}
	redis.SetLogger(goRedisLog{h})
	defer h.cleanup()
	ok, err := h.main(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "soak:", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// harness is one run: the processes it started, the clients' tallies and
// the faults injected.
type harness struct {
	o    options
	out  io.Writer
	log  io.Writer
	args []string
	tmp  string
	bin  string

	origin *faultyOrigin
	redis  *child.Server
	mains  []*server // take the mixed load
	churn  *server   // lives at its memory bound

	t      tally
	f      faultCounts
	stalls stallMonitor
	rw     rwResult
	win    windows

	// redisErrWindows counts the windows opened by a replica's Redis
	// errors (those of injected faults included); takeoverWindows, by a
	// replica taking over an expired lease or loading after --lease-wait.
	redisErrWindows, takeoverWindows atomic.Int64

	multi     bool
	multiNote string
	redisErr  error // why the Redis faults stopped early, if they did
}

func (h *harness) logf(format string, a ...any) {
	fmt.Fprintf(h.log, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// goRedisLog sends go-redis's own log lines (reconnects after a killed
// connection, mostly) to the progress log with -v, else drops them.
type goRedisLog struct{ h *harness }

func (l goRedisLog) Printf(_ context.Context, format string, v ...any) {
	if l.h.o.verbose {
		l.h.logf("go-redis: "+format, v...)
	}
}

func (h *harness) cleanup() {
	for _, s := range h.servers() {
		s.closeAdmin()
		s.Stop()
	}
	if h.redis != nil {
		h.redis.Signal(syscall.SIGCONT) // in case the run ended inside a SIGSTOP
		h.redis.Stop()
	}
	if h.origin != nil {
		h.origin.Close()
	}
	if h.tmp != "" && h.o.keep {
		h.logf("logs kept in %s", h.tmp)
	} else if h.tmp != "" {
		os.RemoveAll(h.tmp)
	}
}

// servers are every stampedeless process of the run.
func (h *harness) servers() []*server {
	all := append([]*server(nil), h.mains...)
	if h.churn != nil {
		all = append(all, h.churn)
	}
	return all
}

// main sets up, drives the load and the faults for the duration, checks and
// reports. It reports whether every must-hold check passed.
func (h *harness) main(ctx context.Context) (bool, error) {
	root, err := child.ModuleRoot(ctx)
	if err != nil {
		return false, err
	}
	if h.o.redis {
		if _, err := exec.LookPath("redis-server"); err != nil {
			return false, fmt.Errorf("-redis needs redis-server: %w", err)
		}
	}
	if h.tmp, err = os.MkdirTemp("", "stampedeless-soak-"); err != nil {
		return false, err
	}
	h.bin = filepath.Join(h.tmp, "stampedeless")
	h.logf("building stampedeless from %s", root)
	if err := child.Build(ctx, root, h.bin, "./cmd/stampedeless", h.log); err != nil {
		return false, err
	}
	if err := h.start(ctx); err != nil {
		return false, err
	}
	started := time.Now()
	h.drive(ctx)
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("interrupted: %w", err)
	}
	return h.report(ctx, root, time.Since(started)), nil
}

// start starts the origin, redis-server with -redis, the servers, and
// takes the goroutine baselines.
func (h *harness) start(ctx context.Context) error {
	h.origin = startOrigin(h.o.loaderTimeout * 4 / 5)
	h.logf("origin on %s", h.origin.srv.URL)
	var extra []string
	if h.o.redis {
		var err error
		h.redis, err = child.Start(ctx, h.tmp, "redis-server", func(port int) (string, []string) {
			return "redis-server", []string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1",
				"--save", "", "--appendonly", "no", "--daemonize", "no"}
		})
		if err != nil {
			return err
		}
		h.logf("redis-server pid %d on %s", h.redis.Pid(), h.redis.Addr())
		extra = append(extra, "--redis", "redis://"+h.redis.Addr())
	}
	if h.o.eventLoops > 0 {
		extra = append(extra, "--event-loops", strconv.Itoa(h.o.eventLoops))
	}
	n := 1
	if h.o.redis {
		n = h.o.replicas
	}
	for i := range n {
		s, err := h.startServer(ctx, fmt.Sprintf("stampedeless-%d", i+1), h.o.maxMemory, extra...)
		if err != nil {
			return err
		}
		h.mains = append(h.mains, s)
		if err := s.registerLoader(ctx, h.origin.URL(s.Name), h.o.loaderTimeout); err != nil {
			return err
		}
	}
	var churnExtra []string
	if h.o.eventLoops > 0 {
		churnExtra = append(churnExtra, "--event-loops", strconv.Itoa(h.o.eventLoops))
	}
	var err error
	if h.churn, err = h.startServer(ctx, "stampedeless-churn", h.o.churnMaxMemory, churnExtra...); err != nil {
		return err
	}
	for _, s := range h.servers() {
		if s.baseGoroutines, err = s.settledGoroutines(ctx); err != nil {
			return err
		}
		s.openAdmin()
	}
	h.multi, h.multiNote = multiSupported(ctx, h.mains[0].Addr())
	h.logf("MULTI/EXEC: %s", h.multiNote)
	return nil
}

// drive runs the clients and the faults for the duration, then stops them
// and closes every client connection.
func (h *harness) drive(ctx context.Context) {
	runCtx, stop := context.WithTimeout(ctx, h.o.duration)
	defer stop()
	var clients []*redis.Client
	client := func(s *server, name string) *redis.Client {
		c := newClient(s.Addr(), name)
		c.AddHook(waitHook{t: &h.t, srv: s})
		clients = append(clients, c)
		return c
	}
	var wg sync.WaitGroup
	var checkers []*rwChecker
	for i, s := range h.mains {
		for j := range h.o.clients {
			c := newChecker(i*h.o.clients+j, client(s, ""), s, h.o.pace)
			checkers = append(checkers, c)
			wg.Go(func() { c.run(runCtx) })
			mixed := client(s, "")
			wg.Go(func() { h.mixedWorker(runCtx, mixed) })
			timed, killable := client(s, nameTimed), client(s, "")
			wg.Go(func() { h.fillWorker(runCtx, s, timed, true) })
			wg.Go(func() { h.fillWorker(runCtx, s, killable, false) })
		}
		pub, sub := client(s, ""), client(s, "")
		wg.Go(func() { h.publisher(runCtx, pub, fmt.Sprintf("p%d", i)) })
		wg.Go(func() { h.subscriber(runCtx, sub) })
		if h.multi {
			tx := client(s, "")
			wg.Go(func() { h.multiWorker(runCtx, tx, i) })
		}
	}
	for range h.o.clients {
		churn := client(h.churn, "")
		wg.Go(func() { h.churnWorker(runCtx, churn) })
	}
	var probes sync.WaitGroup
	probes.Go(func() { h.sample(runCtx) })
	probes.Go(func() { h.stalls.run(runCtx) })
	probes.Go(func() { h.rawFaults(runCtx, h.o.rawEvery) })
	probes.Go(func() { h.clientKills(runCtx, h.o.killEvery) })
	if h.o.redis && (h.o.redisKill || h.o.redisStop) {
		probes.Go(func() {
			if err := h.redisFaults(runCtx, ctx, h.o.redisEvery); err != nil {
				h.redisErr = err
				h.logf("redis faults stopped: %v", err)
			}
		})
	}
	probes.Go(func() { h.progress(runCtx) })
	<-runCtx.Done()
	h.logf("stopping the clients; checkers read every key once more")
	probes.Wait()
	wg.Wait()
	for _, c := range checkers {
		h.rw.add(c)
	}
	for _, c := range clients {
		c.Close()
	}
	for _, s := range h.servers() {
		s.readMemory(ctx)
		s.closeAdmin()
	}
	// The servers' HTTP connections to the origin are the last clients'
	// work still open: closing the origin ends them.
	h.origin.Close()
}

// progress logs what has been done every 10 s.
func (h *harness) progress(ctx context.Context) {
	for {
		pause(ctx, 10*time.Second)
		if ctx.Err() != nil {
			return
		}
		h.logf("ops %d, GETFILLs %d, origin calls %d, published %d, received %d, churn writes %d, CLIENT KILLs %d, cut connections %d, redis faults %d",
			h.t.ops.Load(), h.t.fills.Load(), h.origin.total.Load(), h.t.published.Load(), h.t.received.Load(),
			h.t.churnWrites.Load(), h.f.clientKill.Load(), h.f.cut(), h.f.redisKill.Load()+h.f.redisStop.Load())
	}
}

// sample reads each main server's evicted_keys every 100 ms (the checkers'
// eviction evidence) and each server's RSS every 250 ms. With -redis it
// also reads each replica's redis_errors: a replica that saw Redis fail
// (a timeout on an overloaded machine, say) serves alone until its
// heartbeat finds Redis again, so that span is a window like an injected
// fault's. So is a lease taken over (its holder, slowed down, did not
// publish before the lease expired) or a load after --lease-wait.
func (h *harness) sample(ctx context.Context) {
	prevErrs := make([]int64, len(h.mains))
	prevTakeovers := make([]int64, len(h.mains))
	prevAt := time.Now()
	for i := 0; ctx.Err() == nil; i++ {
		now := time.Now()
		for j, s := range h.mains {
			s.cpuWait.sample(s.Pid())
			f, err := s.info(ctx, "stats", "cluster")
			if err != nil {
				continue
			}
			s.evicted.Store(f["evicted_keys"])
			if n := f["redis_errors"]; n > prevErrs[j] {
				h.addWindow(window{from: prevAt, to: now.Add(redisSettle)})
				h.redisErrWindows.Add(1)
				prevErrs[j] = n
			}
			if n := f["leases_takeover"] + f["lease_wait_fallbacks"]; n > prevTakeovers[j] {
				h.addWindow(window{from: prevAt, to: now})
				h.takeoverWindows.Add(1)
				prevTakeovers[j] = n
			}
		}
		prevAt = now
		if i%4 == 0 {
			for _, s := range h.servers() {
				s.sampleRSS()
			}
		}
		pause(ctx, 100*time.Millisecond)
	}
}
