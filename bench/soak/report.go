package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/bench/internal/child"
)

// Bounds the report checks against.
const (
	// minCooldown is the shortest first cooldown after a failure: 1 s less
	// its 20% jitter (loader.Cooldown).
	minCooldown = 800 * time.Millisecond
	// cooldownTolerance absorbs the gap between when the origin saw a call
	// end and when the server saw it fail.
	cooldownTolerance = 50 * time.Millisecond
	rssFactor         = 1.15
	rssSlack          = 24 << 20
)

// startLag is how late the origin may have seen call c begin after its
// server started the loader's timer: how long, in the loader's timeout
// before c.start, the soak process (the origin's) stalled and the server's
// threads waited for a CPU.
func (h *harness) startLag(c originCall) time.Duration {
	from := c.start.Add(-h.o.loaderTimeout)
	lag := h.stalls.within(from, c.start)
	for _, s := range h.servers() {
		if s.Name == c.replica {
			lag += s.cpuWait.within(from, c.start)
		}
	}
	return lag
}

// cut sums the connections cut mid-command.
func (f *faultCounts) cut() int64 {
	return f.halfCommand.Load() + f.halfPipeline.Load() + f.fillAbandon.Load() + f.subscribeRST.Load() + f.bigBulkCut.Load()
}

// row is one line of the checks table.
type row struct {
	check, result, bound string
	pass                 bool
	mustHold             bool // a failure makes the exit status 1
}

func mark(r row) string {
	switch {
	case r.pass:
		return "✓"
	case r.mustHold:
		return "✗ FAIL"
	default:
		return "✗ (reported)"
	}
}

// report checks what must hold after the run, prints the tables and tells
// whether every must-hold check passed.
func (h *harness) report(ctx context.Context, root string, ran time.Duration) bool {
	var rows []row
	add := func(r row) { rows = append(rows, r) }

	died := 0
	var deaths []string
	for _, s := range h.servers() {
		if !s.Alive() {
			died++
			deaths = append(deaths, s.ExitError().Error())
		}
	}
	add(row{"server processes that exited", fmt.Sprint(died), "0", died == 0, true})

	rw := &h.rw
	res := fmt.Sprintf("%d of %d reads (%d acknowledged SETs, %d unacknowledged)", rw.lost, rw.reads, rw.acked, rw.unacked)
	if rw.evicted > 0 {
		res += fmt.Sprintf("; %d misses not counted: evicted_keys moved", rw.evicted)
	}
	add(row{"acknowledged writes lost (read back on the same server)", res, "0", rw.lost == 0 && rw.reads > 0, true})

	late, stalled, starved, lateSeen, lateAll := h.judgeLate()
	add(row{"GETFILL callers answered past TIMEOUT + 50 ms",
		fmt.Sprintf("%d of %d timed calls, %d of them while the server's threads waited for a CPU as long in all (latest answer: %v past its TIMEOUT; %d more late while the soak process itself stalled as long)",
			late, h.t.fillTimed.Load(), starved, time.Duration(h.t.fillMaxOver.Load()).Round(time.Millisecond), stalled),
		// A late answer wholly explained by the server's threads waiting
		// for a CPU says the machine was starved, not that the server kept a
		// caller past its TIMEOUT: it is shown, not failed.
		"0 beyond CPU starvation", late-starved == 0 && h.t.fillTimed.Load() > 0, true})
	overdue, overdueSeen := h.judgeOverdue()
	add(row{"client commands that waited past the client's timeout (go-redis's 3 s), or ended by it",
		fmt.Sprintf("%d of %d commands and pipelines (longest wait %v)", overdue, h.t.commands.Load(),
			time.Duration(h.t.longestWait.Load()).Round(time.Millisecond)),
		"0", overdue == 0 && h.t.commands.Load() > 0, true})
	add(row{"GETFILL values of another key", fmt.Sprint(h.t.fillWrongValue.Load()), "0", h.t.fillWrongValue.Load() == 0, true})

	oc := h.origin.check(minCooldown, cooldownTolerance, h.leaseTTL(), h.o.loaderTimeout, h.windows(), h.startLag)
	res = fmt.Sprintf("max %d (%d calls of %d keys; %d pairs inside a cooldown by less than the CPU waits before the first call", oc.maxCalls, oc.calls, oc.keys, oc.stalled)
	if h.o.redis {
		res += fmt.Sprintf("; %d pairs excused by Redis faults, %d spans in which a replica saw Redis errors or %d lease takeovers and lease-wait fallbacks",
			oc.excused, h.redisErrWindows.Load(), h.takeoverWindows.Load())
	}
	add(row{"origin calls per key per load or cooldown, fleet-wide (HTTP retries apart)", res + ")", "≤ 1", len(oc.violations) == 0 && oc.calls > 0, true})
	add(row{"HTTP retries: a second call at once after the origin reset a kept-alive connection",
		fmt.Sprintf("%d of %d resets", oc.httpRetries, oc.counts[faultReset]), "0", oc.httpRetries == 0, false})

	for _, s := range h.servers() {
		n, err := s.goroutinesBack(ctx)
		s.endGoroutines = n
		res := fmt.Sprintf("%d, baseline %d", n, s.baseGoroutines)
		if err != nil {
			res = "unreadable: " + err.Error()
		}
		add(row{"goroutines after clients closed, " + s.Name, res, "≤ baseline", err == nil && n <= s.baseGoroutines, true})
	}

	for _, s := range h.servers() {
		bound := int64(rssFactor*float64(s.maxMemory)) + rssSlack
		peak := s.peakRSS.Load()
		add(row{"peak RSS, " + s.Name, fmt.Sprintf("%s (at the end: charged %s, heap %s)", mib(peak), mib(s.charged), mib(s.heap)), fmt.Sprintf("≤ 1.15 × %s + 24 MiB = %s", mib(s.maxMemory), mib(bound)), peak <= bound, false})
	}

	add(row{"pub/sub messages out of order, per publisher and subscription",
		fmt.Sprintf("%d (%d published, %d received, %d duplicates after retried PUBLISHes)",
			h.t.pubOutOfOrder.Load(), h.t.published.Load(), h.t.received.Load(), h.t.pubDuplicates.Load()),
		"0", h.t.pubOutOfOrder.Load() == 0, true})
	if h.multi {
		add(row{"MULTI/EXEC torn (a and b differ after EXEC)", fmt.Sprintf("%d of %d transactions (%d errors)",
			h.t.txTorn.Load(), h.t.txRuns.Load(), h.t.txErrors.Load()), "0", h.t.txTorn.Load() == 0 && h.t.txRuns.Load() > 0, true})
	}
	if h.redisErr != nil {
		add(row{"Redis faults ran to the end", h.redisErr.Error(), "yes", false, true})
	}

	h.printHeader(ctx, root, ran)
	fmt.Fprintln(h.out, "| check | result | bound | |")
	fmt.Fprintln(h.out, "|---|---|---|---|")
	passed, failed, reported := 0, 0, 0
	for _, r := range rows {
		fmt.Fprintf(h.out, "| %s | %s | %s | %s |\n", r.check, r.result, r.bound, mark(r))
		switch {
		case !r.mustHold:
			if !r.pass {
				reported++
			}
		case r.pass:
			passed++
		default:
			failed++
		}
	}
	h.printFaults(oc)
	h.printTraffic()

	var notes []string
	notes = append(notes, deaths...)
	notes = append(notes, rw.examples...)
	notes = append(notes, lateSeen...)
	notes = append(notes, overdueSeen...)
	for i, v := range oc.violations {
		if i == 5 {
			notes = append(notes, fmt.Sprintf("... and %d more origin call violations", len(oc.violations)-5))
			break
		}
		notes = append(notes, v.String())
	}
	if h.o.keep {
		h.keepFindings(lateAll, oc.violations)
	}
	if len(notes) > 0 {
		fmt.Fprintln(h.out, "\nFindings:")
		for _, n := range notes {
			fmt.Fprintf(h.out, "- %s\n", n)
		}
	}
	fmt.Fprintf(h.out, "\nsoak: %d passed, %d failed (%d reported: beyond a bound that is reported, not enforced)\n", passed, failed, reported)
	return failed == 0
}

// keepFindings writes every late answer and origin violation to
// findings.txt beside the kept logs.
func (h *harness) keepFindings(late []string, violations []callViolation) {
	var b strings.Builder
	fmt.Fprintf(&b, "late answers (%d):\n", len(late))
	for _, s := range late {
		fmt.Fprintln(&b, s)
	}
	fmt.Fprintf(&b, "\norigin violations (%d):\n", len(violations))
	for _, v := range violations {
		fmt.Fprintln(&b, v)
	}
	if err := os.WriteFile(filepath.Join(h.tmp, "findings.txt"), []byte(b.String()), 0o644); err != nil {
		h.logf("writing findings.txt: %v", err)
	}
}

// leaseTTL is how long a fill lease lives (loader timeout + 10% +
// --redis-timeout): a call that started that long before a Redis fault may
// overlap a call the fault let through.
func (h *harness) leaseTTL() time.Duration {
	return h.o.loaderTimeout*11/10 + 250*time.Millisecond
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func (h *harness) printHeader(ctx context.Context, root string, ran time.Duration) {
	mode := "one server"
	if h.o.redis {
		mode = fmt.Sprintf("%d replicas sharing a redis-server (--redis)", h.o.replicas)
	}
	if h.o.eventLoops > 0 {
		mode += fmt.Sprintf(", --event-loops %d", h.o.eventLoops)
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(h.out, "## soak: %v, %s\n\n", ran.Round(time.Second), mode)
	fmt.Fprintf(h.out, "- %s; `go run ./bench/soak %s`; commit %s; %s\n", time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		strings.Join(quoteAll(h.args), " "), child.FirstLine(ctx, root, "git", "rev-parse", "--short", "HEAD"), runtime.Version())
	fmt.Fprintf(h.out, "- %d cores (%s), load average at the end %s\n", runtime.NumCPU(), child.CPUModel(), strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Fprintf(h.out, "- MULTI/EXEC worker: %s (%s)\n\n", map[bool]string{true: "ran", false: "not run"}[h.multi], h.multiNote)
}

func quoteAll(args []string) []string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = child.ShellQuote(a)
	}
	return q
}

func (h *harness) printFaults(oc originCheck) {
	fmt.Fprintln(h.out, "\n| fault injected | count |")
	fmt.Fprintln(h.out, "|---|---:|")
	f := &h.f
	for _, r := range []struct {
		name string
		n    int64
	}{
		{"connection closed mid-argument (SET with part of its value)", f.halfCommand.Load()},
		{"connection closed mid-pipeline, replies unread", f.halfPipeline.Load()},
		{"GETFILL of a cold key, connection closed before the answer", f.fillAbandon.Load()},
		{"SUBSCRIBE, then connection reset", f.subscribeRST.Load()},
		{"1 MiB bulk announced, 100 bytes sent, closed", f.bigBulkCut.Load()},
		{"CLIENT KILL ID of a client connection", f.clientKill.Load()},
		{"origin: latency spike", oc.counts[faultSpike]},
		{"origin: 500", oc.counts[fault500]},
		{"origin: connection reset", oc.counts[faultReset]},
		{"origin: hang (ended by the loader's timeout)", oc.counts[faultHang]},
	} {
		fmt.Fprintf(h.out, "| %s | %d |\n", r.name, r.n)
	}
	if h.o.redis {
		fmt.Fprintf(h.out, "| redis-server SIGKILLed, restarted empty | %d |\n", f.redisKill.Load())
		fmt.Fprintf(h.out, "| redis-server SIGSTOPped, then SIGCONTed | %d |\n", f.redisStop.Load())
	}
}

func (h *harness) printTraffic() {
	t := &h.t
	fmt.Fprintln(h.out, "\n| traffic | count |")
	fmt.Fprintln(h.out, "|---|---:|")
	fmt.Fprintf(h.out, "| mixed commands and pipelines (errors) | %d (%d) |\n", t.ops.Load(), t.opErrors.Load())
	fmt.Fprintf(h.out, "| GETFILL: values / -LOADERR / -TIMEOUT / connection errors | %d / %d / %d / %d |\n",
		t.fillValues.Load(), t.fillLoadErrs.Load(), t.fillTimeouts.Load(), t.fillOtherErrs.Load())
	fmt.Fprintf(h.out, "| origin calls | %d |\n", h.origin.total.Load())
	fmt.Fprintf(h.out, "| churn server: keys written (pipeline errors) | %d (%d) |\n", t.churnWrites.Load(), t.churnErrors.Load())
}
