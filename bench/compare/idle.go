package main

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// idleTarget is the most of a core stampedeless may spend at rest.
const idleTarget = 0.01

// idleKeys is how many keys with a TTL the idle test holds: a cache's
// keys have deadlines, so the server's sweep has work to look for.
const idleKeys = 1000

// idleTest measures what each server spends doing nothing: a fresh
// redis-server and a fresh stampedeless, side by side, each holding
// idleKeys keys with an hour's TTL and one client connected and silent,
// their CPU time over -idle-for. An idle cache should cost its machine
// next to nothing, as redis-server's ten wakings a second (hz) do. With
// -at-bound both run at -bound and are first churned past it (-churn-sets
// SETs of -churn-keys keys): a full cache at rest.
func (h *harness) idleTest(ctx context.Context) error {
	var bound []string
	if h.opts.atBound {
		bound = []string{"--maxmemory", h.opts.boundMem, "--maxmemory-policy", "allkeys-lfu"}
	}
	ref, err := h.startRedis(ctx, bound...)
	if err != nil {
		return err
	}
	defer ref.Stop()
	st, err := h.startStampedeless(ctx)
	if err != nil {
		return err
	}
	defer st.Stop()
	servers := []*server{ref, st}
	for _, s := range servers {
		c, err := dialRESP(s.Addr())
		if err != nil {
			return err
		}
		defer c.Close() // connected and silent through the span
		for i := range idleKeys {
			if r, err := c.do("SET", "idle:"+strconv.Itoa(i), "v", "EX", "3600"); err != nil || r != "+OK" {
				return fmt.Errorf("%s: SET: %q %v", s.Name, r, err)
			}
		}
		if h.opts.atBound {
			h.logf("idle: churning %s past -bound %s", s.Name, h.opts.boundMem)
			if _, _, err := h.benchmarkArgs(ctx, s, []string{"-t", "set", "-r", strconv.Itoa(h.opts.churnKeys),
				"-n", strconv.Itoa(h.opts.churnSets), "-P", "16"}, h.opts.churnSets); err != nil {
				return fmt.Errorf("churning %s: %w", s.Name, err)
			}
		}
	}
	// Past the start's own work and the loops' first waits.
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	before := make([]time.Duration, len(servers))
	for i, s := range servers {
		before[i], _ = processCPU(s.Pid())
	}
	h.logf("idle: both servers idle for %v", h.opts.idleFor)
	select {
	case <-time.After(h.opts.idleFor):
	case <-ctx.Done():
		return ctx.Err()
	}
	share := make([]float64, len(servers))
	for i, s := range servers {
		after, ok := processCPU(s.Pid())
		if !ok {
			return fmt.Errorf("%s: no CPU time in /proc", s.Name)
		}
		share[i] = float64(after-before[i]) / float64(h.opts.idleFor)
	}
	fmt.Fprintf(h.out, "\n### Idle: CPU of a server doing nothing (%d keys with a TTL, one silent client, %v)\n\n", idleKeys, h.opts.idleFor)
	if h.opts.atBound {
		fmt.Fprintf(h.out, "At the bound: both servers at %s, churned past it by %d SETs of `-r %d` keys before the span.\n\n", h.opts.boundMem, h.opts.churnSets, h.opts.churnKeys)
	}
	fmt.Fprintf(h.out, "| server | CPU time | share of a core (target for stampedeless ≤ %.0f%%) |\n", 100*idleTarget)
	fmt.Fprintln(h.out, "|---|---:|---:|")
	for i, s := range servers {
		cell := fmt.Sprintf("%.2f%%", 100*share[i])
		if s == st {
			cell += " " + mark(share[i] <= idleTarget)
		}
		fmt.Fprintf(h.out, "| %s | %v | %s |\n", s.Name, time.Duration(share[i]*float64(h.opts.idleFor)).Round(time.Millisecond), cell)
	}
	fmt.Fprintf(h.out, "\nThe CPU time comes from /proc/<pid>/stat in ticks of %v: over %v one tick is %.2f%% of a core.\n",
		time.Second/userHZ, h.opts.idleFor, 100*float64(time.Second/userHZ)/float64(h.opts.idleFor))
	return nil
}
