package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// config is one cell of the speed matrix; each redis-benchmark invocation runs
// every test of a config.
type config struct {
	pipeline int
	random   bool // -r: random keys out of a keyspace instead of one key
}

func (c config) keyspace() string {
	if c.random {
		return "random"
	}
	return "single"
}

func (c config) String() string { return fmt.Sprintf("P%d/%s", c.pipeline, c.keyspace()) }

// sample is one test's line of redis-benchmark --csv output.
type sample struct {
	rps, avg, p50, p99, max float64
}

// key identifies a row of the results: a test of a config on a server.
type key struct {
	server string
	test   string // upper case, as redis-benchmark prints it
	cfg    config
}

// matrix is the speed configurations and tests selected by -only.
func (o options) matrix() ([]config, []string, error) {
	var tests, pipes, spaces []string
	for _, tok := range strings.Split(strings.ToLower(o.only), ",") {
		switch tok = strings.TrimSpace(tok); tok {
		case "":
		case "get", "set", "incr", "mset", "lpush", "rpush", "lpop", "rpop", "lrange_100", "lrange_300",
			"lrange_500", "lrange_600", "sadd", "spop", "hset", "zadd", "zpopmin":
			// redis-benchmark's own tests, by its names (-t).
			tests = append(tests, tok)
		case "p1", "p16":
			pipes = append(pipes, tok)
		case "single", "random":
			spaces = append(spaces, tok)
		default:
			return nil, nil, fmt.Errorf("-only: unknown token %q (want get, set, another of redis-benchmark's tests such as lpush or zadd, P1, P16, single, random)", tok)
		}
	}
	if len(tests) == 0 {
		tests = []string{"get", "set"}
	}
	var cfgs []config
	for _, p := range []int{1, 16} {
		if len(pipes) > 0 && !slices.Contains(pipes, fmt.Sprintf("p%d", p)) {
			continue
		}
		for _, random := range []bool{false, true} {
			c := config{pipeline: p, random: random}
			if len(spaces) > 0 && !slices.Contains(spaces, c.keyspace()) {
				continue
			}
			cfgs = append(cfgs, c)
		}
	}
	// Rows are printed GET first, as the issue lists them.
	slices.SortFunc(tests, func(a, b string) int { return strings.Compare(a, b) })
	return cfgs, tests, nil
}

func (h *harness) requests(c config) int {
	if c.pipeline > 1 {
		return h.opts.n * pipelineScale
	}
	return h.opts.n
}

func (h *harness) speedTest(ctx context.Context) error {
	cfgs, tests, err := h.opts.matrix()
	if err != nil {
		return err
	}
	if len(cfgs) == 0 {
		return errors.New("-only selects no configuration")
	}
	var servers []*server
	for _, start := range h.starters(false) {
		s, err := start(ctx)
		if err != nil {
			return err
		}
		defer s.Stop()
		servers = append(servers, s)
	}

	if h.opts.atBound {
		// Past the bound before the first run, and kept there: no run
		// flushes.
		for _, s := range servers {
			n := 3 * h.opts.random
			h.logf("filling %s past -bound %s: %d SETs of -r %d keys", s.Name, h.opts.boundMem, n, h.opts.random)
			if _, _, err := h.benchmarkArgs(ctx, s, []string{"-t", "set", "-r", strconv.Itoa(h.opts.random), "-n", strconv.Itoa(n), "-P", "16"}, n); err != nil {
				return fmt.Errorf("filling %s: %w", s.Name, err)
			}
		}
	}
	// A short unrecorded run each, so neither server is measured cold.
	warm := config{pipeline: 1}
	for _, s := range servers {
		h.logf("warm-up %s", s.Name)
		if _, _, err := h.benchmark(ctx, s, warm, tests, max(h.opts.n/10, 1000)); err != nil {
			h.fail("warm-up of %s: %v", s.Name, err)
			if err := h.healthy(ctx, s); err != nil {
				h.fail("%v; speed test skipped", err)
				h.printSpeed(cfgs, tests, nil)
				return nil
			}
		}
	}

	results := map[key][]sample{}
	cpu := map[cpuKey][]float64{} // server CPU µs per request, by run
	var raw []string
	pair := 0
	failures := map[string]int{} // consecutive failed runs per server
speed:
	for round := 1; round <= h.opts.rounds; round++ {
		for _, c := range cfgs {
			// Rotate which server goes first, so none always runs right
			// after another's load.
			order := append(slices.Clone(servers[pair%len(servers):]), servers[:pair%len(servers)]...)
			pair++
			for _, s := range order {
				if ctx.Err() != nil {
					h.fail("speed test stopped early: %v", context.Cause(ctx))
					break speed
				}
				// At the bound a server stays as full as it was filled.
				if !h.opts.atBound {
					if _, err := s.do(ctx, "FLUSHALL"); err != nil {
						h.fail("FLUSHALL on %s: %v", s.Name, err)
						if err := h.healthy(ctx, s); err != nil {
							h.fail("%v; speed test stopped", err)
							break speed
						}
					}
				}
				n := h.requests(c)
				h.logf("round %d/%d %s %s -n %d", round, h.opts.rounds, s.Name, c, n)
				cpuBefore, cpuOK := processCPU(s.Pid())
				got, elapsed, err := h.benchmark(ctx, s, c, tests, n)
				if cpuAfter, ok := processCPU(s.Pid()); ok && cpuOK && err == nil {
					cpu[cpuKey{s.Name, c}] = append(cpu[cpuKey{s.Name, c}], float64(cpuAfter-cpuBefore)/float64(time.Microsecond)/float64(n*len(tests)))
				}
				if ctx.Err() != nil {
					h.fail("speed test stopped early: %v", context.Cause(ctx))
					break speed
				}
				if err != nil {
					h.fail("redis-benchmark against %s, %s, round %d: %v", s.Name, c, round, err)
					if err := h.healthy(ctx, s); err != nil {
						h.fail("%v; speed test stopped", err)
						break speed
					}
					if failures[s.Name]++; failures[s.Name] >= 2 {
						h.fail("%s failed two runs in a row; speed test stopped", s.Name)
						break speed
					}
				} else {
					failures[s.Name] = 0
				}
				for _, t := range tests {
					smp, ok := got[strings.ToUpper(t)]
					if !ok {
						continue
					}
					k := key{s.Name, strings.ToUpper(t), c}
					results[k] = append(results[k], smp)
					raw = append(raw, fmt.Sprintf("| %d | %s | %s | %d | %s | %.0f | %.3f | %.3f | %.3f | %.3f |",
						round, s.Name, strings.ToUpper(t), c.pipeline, c.keyspace(), smp.rps, smp.avg, smp.p50, smp.p99, smp.max))
				}
				h.logf("  %s in %.1fs: %s", s.Name, elapsed.Seconds(), summarize(got))
			}
		}
	}
	h.printSpeed(cfgs, tests, results)
	h.printCPU(cfgs, tests, cpu)
	if h.opts.baseline != "" {
		h.printBaseline(cfgs, tests, results)
	}
	if h.floorBin != "" && !h.opts.atBound {
		h.printFloor(cfgs, tests, results)
	}
	if h.opts.raw {
		fmt.Fprintln(h.out, "\n#### Every run")
		fmt.Fprintln(h.out)
		fmt.Fprintln(h.out, "| round | server | test | -P | keys | rps | avg ms | p50 ms | p99 ms | max ms |")
		fmt.Fprintln(h.out, "|---|---|---|---|---|---:|---:|---:|---:|---:|")
		for _, r := range raw {
			fmt.Fprintln(h.out, r)
		}
	}
	return nil
}

func summarize(got map[string]sample) string {
	var parts []string
	for _, t := range []string{"SET", "GET"} {
		if s, ok := got[t]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f rps p99 %.3fms", t, s.rps, s.p99))
		}
	}
	return strings.Join(parts, ", ")
}

// benchmark runs redis-benchmark once and parses its CSV output.
func (h *harness) benchmark(ctx context.Context, s *server, c config, tests []string, n int) (map[string]sample, time.Duration, error) {
	args := []string{"-t", strings.Join(tests, ","), "-n", strconv.Itoa(n), "-P", strconv.Itoa(c.pipeline)}
	if c.random {
		args = append(args, "-r", strconv.Itoa(h.opts.random))
	}
	return h.benchmarkArgs(ctx, s, args, n*len(tests))
}

// benchmarkArgs runs redis-benchmark once with -c and -d from the flags and
// the test's own args, for about requests requests, and parses its CSV
// output.
func (h *harness) benchmarkArgs(ctx context.Context, s *server, testArgs []string, requests int) (map[string]sample, time.Duration, error) {
	// --csv before the test's args, which may end in a command to run.
	args := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port),
		"-c", strconv.Itoa(h.opts.clients), "-d", strconv.Itoa(h.opts.dataSize), "--csv"}, testArgs...)
	var tests []string
	for i := 0; i+1 < len(testArgs); i++ {
		if testArgs[i] == "-t" {
			tests = strings.Split(testArgs[i+1], ",")
		}
	}
	// Bound one run: a minute plus the time at 20,000 requests a second, far
	// below what either server does on loopback, so a hung server costs
	// minutes, not the whole -timeout. (redis-benchmark itself never gives
	// up: against a server that hangs or dies it waits or spins.)
	limit := time.Minute + time.Duration(requests/20000)*time.Second
	rctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(rctx, "redis-benchmark", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	elapsed := time.Since(start)
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		h.note("redis-benchmark printed to stderr against %s (%s): %s", s.Name, strings.Join(testArgs, " "), firstLines(msg, 5))
	}
	if rctx.Err() != nil && ctx.Err() == nil {
		return nil, elapsed, fmt.Errorf("timed out after %v", limit)
	}
	got, parseErr := parseCSV(stdout.Bytes())
	if runErr != nil {
		return nil, elapsed, fmt.Errorf("redis-benchmark %s: %v; stdout: %s", strings.Join(args, " "), runErr, firstLines(stdout.String(), 5))
	}
	if parseErr != nil {
		return got, elapsed, parseErr
	}
	var missing []string
	for _, t := range tests {
		if smp, ok := got[strings.ToUpper(t)]; !ok || smp.rps <= 0 {
			missing = append(missing, strings.ToUpper(t))
		}
	}
	if len(missing) > 0 {
		return got, elapsed, fmt.Errorf("no result for %s in output: %s", strings.Join(missing, ","), firstLines(stdout.String(), 5))
	}
	return got, elapsed, nil
}

// csvColumns are the columns redis-benchmark 7 prints with --csv.
var csvColumns = []string{"test", "rps", "avg_latency_ms", "min_latency_ms", "p50_latency_ms", "p95_latency_ms", "p99_latency_ms", "max_latency_ms"}

func parseCSV(out []byte) (map[string]sample, error) {
	r := csv.NewReader(bytes.NewReader(out))
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("parsing redis-benchmark CSV: %w", err)
	}
	col := map[string]int{}
	got := map[string]sample{}
	for _, rec := range records {
		if len(rec) > 0 && rec[0] == "test" {
			for i, name := range rec {
				col[name] = i
			}
			for _, want := range csvColumns {
				if _, ok := col[want]; !ok {
					return nil, fmt.Errorf("redis-benchmark CSV header %q lacks column %q", rec, want)
				}
			}
			continue
		}
		if len(col) == 0 {
			continue // not CSV yet (e.g. a warning line)
		}
		if len(rec) != len(col) {
			continue
		}
		num := func(name string) float64 {
			v, err := strconv.ParseFloat(rec[col[name]], 64)
			if err != nil {
				return -1
			}
			return v
		}
		// "LRANGE_100 (first 100 elements)" is LRANGE_100 and "MSET (10
		// keys)" MSET; "LPUSH (needed to benchmark LRANGE)" fills the
		// list and is no LPUSH result.
		name, extra, _ := strings.Cut(rec[col["test"]], " (")
		if strings.HasPrefix(extra, "needed ") {
			continue
		}
		got[name] = sample{
			rps: num("rps"), avg: num("avg_latency_ms"), p50: num("p50_latency_ms"),
			p99: num("p99_latency_ms"), max: num("max_latency_ms"),
		}
	}
	if len(col) == 0 {
		return nil, fmt.Errorf("no CSV header in redis-benchmark output: %s", firstLines(string(out), 5))
	}
	return got, nil
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	return strings.Join(lines, " / ")
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Targets from the issue.
const (
	rpsTargetP1  = 1.0 // stampedeless/redis-server throughput at -P 1
	rpsTargetP16 = 1.0 // and at -P 16
	p99Target    = 1.5 // stampedeless/redis-server p99 latency, at most
)

func (h *harness) printSpeed(cfgs []config, tests []string, results map[key][]sample) {
	fmt.Fprintf(h.out, "\n### Throughput and p99 latency\n\n")
	if h.opts.atBound {
		fmt.Fprintf(h.out, "At the bound: both servers at %s (stampedeless `--max-memory`, redis-server `maxmemory` with allkeys-lfu), filled past it with %d SETs of `-r %d` keys before the first run and never flushed, so every write of a new key evicts one.\n\n", h.opts.boundMem, 3*h.opts.random, h.opts.random)
	}
	fmt.Fprintf(h.out, "`redis-benchmark -t %s -c %d -d %d`, -n %d at -P 1 and %d at -P 16, \"random\" = `-r %d`; median of %d rounds, servers taking turns to go first.\n\n",
		strings.Join(tests, ","), h.opts.clients, h.opts.dataSize, h.opts.n, h.opts.n*pipelineScale, h.opts.random, h.opts.rounds)
	h.printSpeedRows(cfgs, tests, results, func(c config) float64 {
		if c.pipeline > 1 {
			return rpsTargetP16
		}
		return rpsTargetP1
	})
}

// printSpeedRows prints the table of tests in cfgs, redis-server's and
// stampedeless's medians side by side, each rps ratio against target's.
func (h *harness) printSpeedRows(cfgs []config, tests []string, results map[key][]sample, target func(config) float64) {
	fmt.Fprintln(h.out, "| test | -P | keys | redis-server rps | stampedeless rps | rps ratio | target | redis-server p99 ms | stampedeless p99 ms | p99 ratio (target ≤ 1.5) |")
	fmt.Fprintln(h.out, "|---|---:|---|---:|---:|---:|---|---:|---:|---:|")
	for _, c := range cfgs {
		for _, t := range tests {
			t = strings.ToUpper(t)
			rs, ss := results[key{redisName, t, c}], results[key{stampName, t, c}]
			rRPS, sRPS := median(field(rs, func(s sample) float64 { return s.rps })), median(field(ss, func(s sample) float64 { return s.rps }))
			rP99, sP99 := median(field(rs, func(s sample) float64 { return s.p99 })), median(field(ss, func(s sample) float64 { return s.p99 }))
			target := target(c)
			rpsRatio, p99Ratio := "n/a", "n/a"
			if rRPS > 0 && sRPS > 0 {
				rpsRatio = fmt.Sprintf("%.2f %s", sRPS/rRPS, mark(sRPS/rRPS >= target))
			}
			if rP99 > 0 && sP99 > 0 {
				p99Ratio = fmt.Sprintf("%.2f %s", sP99/rP99, mark(sP99/rP99 <= p99Target))
			}
			fmt.Fprintf(h.out, "| %s | %d | %s | %s | %s | %s | ≥ %.1f | %s | %s | %s |\n",
				t, c.pipeline, c.keyspace(), fmtRPS(rRPS, len(rs)), fmtRPS(sRPS, len(ss)), rpsRatio, target,
				fmtMS(rP99, len(rs)), fmtMS(sP99, len(ss)), p99Ratio)
		}
	}
}

// printBaseline compares the build just made with the -baseline build,
// measured in the same rounds.
func (h *harness) printBaseline(cfgs []config, tests []string, results map[key][]sample) {
	fmt.Fprintf(h.out, "\n#### Against the baseline build\n\n`%s` (-baseline) in the same rounds, with the same flags.\n\n", h.opts.baseline)
	fmt.Fprintln(h.out, "| test | -P | keys | baseline rps | stampedeless rps | stampedeless/baseline rps | baseline p99 ms | stampedeless p99 ms |")
	fmt.Fprintln(h.out, "|---|---:|---|---:|---:|---:|---:|---:|")
	rps := func(s sample) float64 { return s.rps }
	p99 := func(s sample) float64 { return s.p99 }
	for _, c := range cfgs {
		for _, t := range tests {
			t = strings.ToUpper(t)
			bs, ss := results[key{baseName, t, c}], results[key{stampName, t, c}]
			bRPS, sRPS := median(field(bs, rps)), median(field(ss, rps))
			ratio := "n/a"
			if bRPS > 0 && sRPS > 0 {
				ratio = fmt.Sprintf("%.2f", sRPS/bRPS)
			}
			fmt.Fprintf(h.out, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", t, c.pipeline, c.keyspace(),
				fmtRPS(bRPS, len(bs)), fmtRPS(sRPS, len(ss)), ratio, fmtMS(median(field(bs, p99)), len(bs)), fmtMS(median(field(ss, p99)), len(ss)))
		}
	}
}

// printFloor compares bench/floor with redis-server and stampedeless: how
// much of the gap to redis-server a Go server has before doing any work, in
// each network design.
func (h *harness) printFloor(cfgs []config, tests []string, results map[key][]sample) {
	fmt.Fprintf(h.out, "\n#### The Go floor\n\n")
	fmt.Fprintf(h.out, "`bench/floor` in the same rounds: one map under a lock, no expiry, bound or eviction. `%s`: a goroutine per connection on Go's network poller, as stampedeless does; `%s`: one thread running an epoll loop, as redis-server does.\n\n", floorName, epollName)
	fmt.Fprintln(h.out, "| floor | test | -P | keys | floor rps | floor/redis-server rps | stampedeless/floor rps | floor p99 ms | floor/redis-server p99 |")
	fmt.Fprintln(h.out, "|---|---|---:|---|---:|---:|---:|---:|---:|")
	for _, name := range []string{floorName, epollName} {
		h.printFloorRows(name, cfgs, tests, results)
	}
}

func (h *harness) printFloorRows(name string, cfgs []config, tests []string, results map[key][]sample) {
	rps := func(s sample) float64 { return s.rps }
	p99 := func(s sample) float64 { return s.p99 }
	ratio := func(a, b float64) string {
		if a <= 0 || b <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	for _, c := range cfgs {
		for _, t := range tests {
			t = strings.ToUpper(t)
			rs, ss, fs := results[key{redisName, t, c}], results[key{stampName, t, c}], results[key{name, t, c}]
			if len(fs) == 0 {
				continue
			}
			fRPS := median(field(fs, rps))
			fP99 := median(field(fs, p99))
			fmt.Fprintf(h.out, "| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n",
				name, t, c.pipeline, c.keyspace(), fmtRPS(fRPS, len(fs)),
				ratio(fRPS, median(field(rs, rps))), ratio(median(field(ss, rps)), fRPS),
				fmtMS(fP99, len(fs)), ratio(fP99, median(field(rs, p99))))
		}
	}
}

func field(ss []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

func fmtRPS(v float64, n int) string {
	if n == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func fmtMS(v float64, n int) string {
	if n == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
