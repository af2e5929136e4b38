package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The default-list test (-default-list) runs redis-benchmark as a user
// first runs it, with no -t: its whole default list of tests (PING_INLINE
// to MSET), one invocation per server per round, the servers taking turns
// to go first. redis-benchmark prints each test's CSV line as the test
// ends, so reading its output as it comes and the server's CPU time at
// each line gives every test its own server CPU per request.

// defaultListTests are the rows of redis-benchmark 7.0's default run, in
// its order, as its CSV names them (parseCSV folds "LRANGE_100 (first 100
// elements)" to LRANGE_100 and drops the LPUSH that fills the list).
var defaultListTests = []string{"PING_INLINE", "PING_MBULK", "SET", "GET", "INCR", "LPUSH", "RPUSH", "LPOP", "RPOP",
	"SADD", "HSET", "SPOP", "ZADD", "ZPOPMIN", "LRANGE_100", "LRANGE_300", "LRANGE_500", "LRANGE_600", "MSET"}

// defaultListRPSTarget is issue 20's target for every row of the default
// list: at least redis-server's throughput, at most its CPU per request.
const defaultListRPSTarget = 1.0

// listed is one test's result in one run: its sample and the server's CPU
// per request over it.
type listed struct {
	smp sample
	cpu float64 // µs per request; 0 if unknown
}

func (h *harness) defaultListTest(ctx context.Context) error {
	var servers []*server
	for _, start := range []func(context.Context) (*server, error){
		func(ctx context.Context) (*server, error) { return h.startRedis(ctx) }, h.startStampedeless,
	} {
		s, err := start(ctx)
		if err != nil {
			return err
		}
		defer s.Stop()
		servers = append(servers, s)
	}
	results := map[string]map[string][]listed{} // server, test
	for _, s := range servers {
		results[s.Name] = map[string][]listed{}
		h.logf("default list: warm-up %s", s.Name)
		if _, err := h.defaultListRun(ctx, s, max(h.opts.n/10, 1000)); err != nil {
			h.fail("default list warm-up of %s: %v", s.Name, err)
			return nil
		}
	}
	for round := 1; round <= h.opts.rounds && ctx.Err() == nil; round++ {
		order := append(slices.Clone(servers[round%len(servers):]), servers[:round%len(servers)]...)
		for _, s := range order {
			h.logf("default list: round %d/%d %s -n %d", round, h.opts.rounds, s.Name, h.opts.n)
			got, err := h.defaultListRun(ctx, s, h.opts.n)
			if err != nil {
				h.fail("default list against %s, round %d: %v", s.Name, round, err)
				if err := h.healthy(ctx, s); err != nil {
					h.fail("%v; default list stopped", err)
					h.printDefaultList(results)
					return nil
				}
			}
			for t, l := range got {
				results[s.Name][t] = append(results[s.Name][t], l)
			}
		}
	}
	h.printDefaultList(results)
	return nil
}

// defaultListRun runs redis-benchmark's default list once against s from
// an empty keyspace, with -n requests a test.
func (h *harness) defaultListRun(ctx context.Context, s *server, n int) (map[string]listed, error) {
	if _, err := s.do(ctx, "FLUSHALL"); err != nil {
		return nil, fmt.Errorf("FLUSHALL: %w", err)
	}
	// Bounded as benchmarkArgs bounds a run, for every test of the list.
	requests := n * (len(defaultListTests) + 1)
	rctx, cancel := context.WithTimeout(ctx, time.Minute+time.Duration(requests/20000)*time.Second)
	defer cancel()
	argv := []string{"redis-benchmark", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port),
		"-c", strconv.Itoa(h.opts.clients), "-d", strconv.Itoa(h.opts.dataSize), "-n", strconv.Itoa(n), "--csv"}
	// redis-benchmark's stdio buffers a pipe whole: each line must come as
	// its test ends, for the CPU between lines to be that test's.
	stdbuf, err := exec.LookPath("stdbuf")
	if err != nil {
		return nil, fmt.Errorf("stdbuf (coreutils), to read redis-benchmark's lines as they come: %w", err)
	}
	cmd := exec.CommandContext(rctx, stdbuf, append([]string{"-oL"}, argv...)...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	got := map[string]listed{}
	var header string
	last, cpuOK := processCPU(s.Pid())
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		now, ok := processCPU(s.Pid())
		spent := now - last
		last, cpuOK = now, cpuOK && ok
		if strings.HasPrefix(line, `"test"`) {
			header = line
			continue
		}
		if header == "" {
			continue
		}
		parsed, err := parseCSV([]byte(header + "\n" + line + "\n"))
		if err != nil {
			return got, err
		}
		for name, smp := range parsed {
			l := listed{smp: smp}
			if cpuOK {
				l.cpu = float64(spent) / float64(time.Microsecond) / float64(n)
			}
			got[name] = l
		}
	}
	if err := cmd.Wait(); err != nil {
		if rctx.Err() != nil && ctx.Err() == nil {
			return got, fmt.Errorf("redis-benchmark timed out")
		}
		return got, fmt.Errorf("redis-benchmark: %w", err)
	}
	var missing []string
	for _, t := range defaultListTests {
		if _, ok := got[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return got, fmt.Errorf("no result for %s", strings.Join(missing, ","))
	}
	return got, nil
}

func (h *harness) printDefaultList(results map[string]map[string][]listed) {
	fmt.Fprintf(h.out, "\n### redis-benchmark's default list\n\n")
	fmt.Fprintf(h.out, "`redis-benchmark -c %d -d %d -n %d` with no -t (every test of its default run, one key each, no pipeline); server CPU per request: the server's user + system time from one test's CSV line to the next, over -n; median of %d rounds, servers taking turns to go first.\n\n",
		h.opts.clients, h.opts.dataSize, h.opts.n, h.opts.rounds)
	fmt.Fprintln(h.out, "| test | redis-server rps | stampedeless rps | rps ratio (target ≥ 1.0) | redis-server p99 ms | stampedeless p99 ms | p99 ratio (target ≤ 1.5) | redis-server CPU µs/req | stampedeless CPU µs/req | CPU ratio (target ≤ 1.0) |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	of := func(server, test string, f func(listed) float64) float64 {
		var xs []float64
		for _, l := range results[server][test] {
			if v := f(l); v > 0 {
				xs = append(xs, v)
			}
		}
		return median(xs)
	}
	ratio := func(s, r float64, ok func(float64) bool) string {
		if r <= 0 || s <= 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f %s", s/r, mark(ok(s/r)))
	}
	for _, t := range defaultListTests {
		rRPS, sRPS := of(redisName, t, func(l listed) float64 { return l.smp.rps }), of(stampName, t, func(l listed) float64 { return l.smp.rps })
		rP99, sP99 := of(redisName, t, func(l listed) float64 { return l.smp.p99 }), of(stampName, t, func(l listed) float64 { return l.smp.p99 })
		rCPU, sCPU := of(redisName, t, func(l listed) float64 { return l.cpu }), of(stampName, t, func(l listed) float64 { return l.cpu })
		rn, sn := len(results[redisName][t]), len(results[stampName][t])
		fmt.Fprintf(h.out, "| %s | %s | %s | %s | %s | %s | %s | %.2f | %.2f | %s |\n", t,
			fmtRPS(rRPS, rn), fmtRPS(sRPS, sn), ratio(sRPS, rRPS, func(x float64) bool { return x >= defaultListRPSTarget }),
			fmtMS(rP99, rn), fmtMS(sP99, sn), ratio(sP99, rP99, func(x float64) bool { return x <= p99Target }),
			rCPU, sCPU, ratio(sCPU, rCPU, func(x float64) bool { return x <= cpuTarget }))
	}
}
