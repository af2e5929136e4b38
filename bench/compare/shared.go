package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sharedKeys is the keyspace of the shared-tier test's random rows: every
// key is set first, so that every GET is a hit served locally.
const sharedKeys = 10000

// sharedTest measures GET hits served locally by a stampedeless in
// --redis mode (the fleet's shared tier, on its own redis-server) against
// redis-server's GET of the same keys, side by side in the same rounds:
// issue 20's target is at least redis-server's throughput. A read of a key
// the replica holds must not cost a round trip to Redis, nor more work
// than a replica on its own does.
func (h *harness) sharedTest(ctx context.Context) error {
	tier, err := h.startRedisNamed(ctx, "redis-tier")
	if err != nil {
		return err
	}
	defer tier.Stop()
	ref, err := h.startRedis(ctx)
	if err != nil {
		return err
	}
	defer ref.Stop()
	st, err := h.startBuild(ctx, stampName, h.bin, h.opts.maxMem, "--redis", tier.Addr())
	if err != nil {
		return err
	}
	defer st.Stop()
	servers := []*server{ref, st}
	value := strings.Repeat("x", h.opts.dataSize)
	for _, s := range servers {
		if err := h.setKeys(ctx, s, value); err != nil {
			return fmt.Errorf("loading %s: %w", s.Name, err)
		}
	}

	type row struct {
		pipeline int
		random   bool
	}
	rows := []row{{1, false}, {1, true}, {16, false}, {16, true}}
	type cell struct {
		server string
		row    row
	}
	samples := map[cell][]sample{}
	cpu := map[cell][]float64{} // µs per request
	for round := range h.opts.rounds {
		order := append(slices.Clone(servers[round%2:]), servers[:round%2]...)
		for _, r := range rows {
			n := h.opts.n
			if r.pipeline > 1 {
				n *= pipelineScale
			}
			args := []string{"-t", "get", "-n", strconv.Itoa(n), "-P", strconv.Itoa(r.pipeline)}
			if r.random {
				args = append(args, "-r", strconv.Itoa(sharedKeys))
			}
			for _, s := range order {
				h.logf("shared tier: round %d/%d %s %s", round+1, h.opts.rounds, s.Name, strings.Join(args, " "))
				before, cpuOK := processCPU(s.Pid())
				got, _, err := h.benchmarkArgs(ctx, s, args, n)
				if err != nil {
					h.fail("redis-benchmark %s against %s, round %d: %v", strings.Join(args, " "), s.Name, round+1, err)
					if err := h.healthy(ctx, s); err != nil {
						h.fail("%v; shared-tier test stopped", err)
						return nil
					}
					continue
				}
				k := cell{s.Name, r}
				if smp, ok := got["GET"]; ok {
					samples[k] = append(samples[k], smp)
				}
				if after, ok := processCPU(s.Pid()); ok && cpuOK {
					cpu[k] = append(cpu[k], float64(after-before)/float64(time.Microsecond)/float64(n))
				}
			}
		}
	}

	fmt.Fprintf(h.out, "\n### GET hits served locally with `--redis`, against redis-server (%d rounds, median)\n\n", h.opts.rounds)
	fmt.Fprintf(h.out, "stampedeless `--redis` on a redis-server of its own, every key set first through it (one key, or %d keys with `-r %d`); `redis-benchmark -t get -c %d -d %d`. Ratio = stampedeless / redis-server; target: throughput ≥ %.1fx.\n\n",
		sharedKeys, sharedKeys, h.opts.clients, h.opts.dataSize, rpsTargetP1)
	fmt.Fprintln(h.out, "| -P | keys | redis-server rps | stampedeless rps | ratio | p99 ratio | CPU/req redis-server µs | stampedeless µs | ratio |")
	fmt.Fprintln(h.out, "|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		a, b := cell{ref.Name, r}, cell{st.Name, r}
		if len(samples[a]) == 0 || len(samples[b]) == 0 {
			continue
		}
		sa, sb := medianSample(samples[a]), medianSample(samples[b])
		keys := "single"
		if r.random {
			keys = "random"
		}
		ratio := sb.rps / sa.rps
		cpuA, cpuB := median(cpu[a]), median(cpu[b])
		cpuCell := "–"
		if cpuA > 0 {
			cpuCell = fmt.Sprintf("%.2f %s", cpuB/cpuA, mark(cpuB/cpuA <= cpuTarget))
		}
		fmt.Fprintf(h.out, "| %d | %s | %.0f | %.0f | **%.2f** %s | %.2f %s | %.2f | %.2f | %s |\n", r.pipeline, keys, sa.rps, sb.rps,
			ratio, mark(ratio >= rpsTargetP1), sb.p99/sa.p99, mark(sb.p99/sa.p99 <= p99Target), cpuA, cpuB, cpuCell)
	}
	return nil
}

// setKeys sets the key redis-benchmark's GET reads without -r and each of
// the sharedKeys it reads with -r sharedKeys (twelve digits).
func (h *harness) setKeys(ctx context.Context, s *server, value string) error {
	c, err := dialRESP(s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	if r, err := c.do("SET", "key:__rand_int__", value); err != nil || r != "+OK" {
		return fmt.Errorf("SET: %q %v", r, err)
	}
	errs, replies, err := h.pipeLoadWidth(ctx, s, sharedKeys, 12)
	if err == nil && (errs > 0 || replies != sharedKeys) {
		err = fmt.Errorf("redis-cli --pipe: %d errors, %d replies of %d", errs, replies, sharedKeys)
	}
	return err
}
