package main

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/bench/internal/child"
	"github.com/stampedeless/stampedeless/examples/go/lease"
)

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
	switch o.mode {
	case modeLease:
		fmt.Fprintf(h.out, "- -lease: the value is computed in the client process (a wait of %v, counted as an origin call, no HTTP): by every client that misses (cache-aside on redis-server: GET, compute, SET), or by the one client given the lease (examples/go/lease: FILL.LEASE, compute, FILL.SET; the others wait for its value up to %v, or with a grace are answered the stale value at once)\n\n",
			o.latency, lease.Wait)
	case modeEarly:
		fmt.Fprintln(h.out, "- -early: GETFILL without early refresh, with EARLY 1 on every read, and on a server started with --early-refresh 1; fresh, stale and waited are the servers' own counts of the run's answers (INFO stampede: answers_fresh; answers_stale and stale_if_error; answers_loaded, timeout, timeout_stale and error), early refreshes its refreshes_early")
		fmt.Fprintln(h.out)
	}
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

// printEarly is -early's table: besides origin calls and latency, the
// share of reads answered fresh, stale, or after waiting for a load.
func (h *harness) printEarly(results []result) {
	fmt.Fprintln(h.out, "| approach | K | origin calls | expiries | calls/expiry | early refreshes | reads | fresh | stale | waited | p50 | p99 | p99.9 | req/s | errors |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		a := r.counts
		fresh := a["answers_fresh"]
		stale := a["answers_stale"] + a["answers_stale_if_error"]
		waited := a["answers_loaded"] + a["answers_timeout"] + a["answers_timeout_stale"] + a["answers_error"]
		reads := fresh + stale + waited + a["answers_negative"] + a["answers_cooldown"]
		share := func(n int64) string {
			if reads == 0 {
				return "-"
			}
			return fmt.Sprintf("%.3f%%", 100*float64(n)/float64(reads))
		}
		fmt.Fprintf(h.out, "| %s | %d | %d | %.0f | %.1f | %d | %d | %s | %s | %s | %s | %s | %s | %.0f | %d |\n",
			h.approaches[r.approach].name, r.k, r.originCalls, r.expiries, r.perExpiry(), a["refreshes_early"], reads,
			share(fresh), share(stale), share(waited), fmtDur(r.p50), fmtDur(r.p99), fmtDur(r.p999), r.rps(), r.errors)
	}
}

// printLeases is -lease's second table: what the server says of the
// helper's leases, so that each refill's one computation can be told from
// its waiters' answers.
func (h *harness) printLeases(results []result) {
	fmt.Fprint(h.out, "\n### The helper's leases (server INFO stampede, app_fills)\n\n")
	fmt.Fprintln(h.out, "| approach | K | leases granted | set | expired | lost | answered fresh | stale | after waiting | TIMEOUT |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		c := r.counts
		if c == nil {
			continue
		}
		fmt.Fprintf(h.out, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n", h.approaches[r.approach].name, r.k,
			c["leases_granted"], c["leases_set"], c["leases_expired"], c["leases_lost"],
			c["answers_fresh"], c["answers_stale"], c["answers_loaded"], c["answers_timeout"])
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

// printChartLegend says where the chart is and which bar is which approach.
func (h *harness) printChartLegend() {
	var legend []string
	for i, a := range h.approaches {
		legend = append(legend, fmt.Sprintf("%d %s %s", i+1, barColorNames[i%len(barColorNames)], a.name))
	}
	fmt.Fprintf(h.out, "\nChart: `%s` (top: origin calls per expiry, log scale, values under 0.1 clipped; bottom: p99 latency in ms, log scale; bars grouped by K; legend boxes %s).\n",
		h.opts.png, strings.Join(legend, "; "))
}

// printNotes lists what went wrong in the runs, if anything did.
func (h *harness) printNotes() {
	if len(h.notes) == 0 {
		return
	}
	fmt.Fprint(h.out, "\n### Notes\n\n")
	for _, n := range h.notes {
		fmt.Fprintf(h.out, "- %s\n", n)
	}
}
