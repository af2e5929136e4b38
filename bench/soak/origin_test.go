package main

import (
	"strings"
	"testing"
	"time"
)

// at is a time ms milliseconds after a fixed origin.
func at(ms int) time.Time {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
}

func call(from, to int, f originFault) originCall {
	return originCall{start: at(from), end: at(to), fault: f}
}

func checkCalls(calls map[string][]originCall, stalls []stall, windows ...window) originCheck {
	o := &faultyOrigin{calls: calls, closing: at(1e6)}
	m := &stallMonitor{stalls: stalls}
	lag := func(c originCall) time.Duration { return m.within(c.start.Add(-time.Second), c.start) }
	return o.check(minCooldown, cooldownTolerance, 1350*time.Millisecond, time.Second, windows, lag)
}

func TestOriginCheck(t *testing.T) {
	for _, tc := range []struct {
		name       string
		calls      []originCall
		windows    []window
		stalls     []stall // of the soak process
		violations int
		why        string // in the first violation
		retries    int
		excused    int
		stalled    int
	}{
		{name: "one call per ttl", calls: []originCall{
			call(0, 10, faultNone), call(1000, 1010, faultNone), call(2000, 2500, faultSpike)}},
		{name: "overlap", calls: []originCall{call(0, 500, faultSpike), call(400, 410, faultNone)},
			violations: 1, why: "at once"},
		{name: "call inside the cooldown of a 500", calls: []originCall{call(0, 1, fault500), call(300, 310, faultNone)},
			violations: 1, why: "inside the cooldown"},
		{name: "call after the cooldown of a hang", calls: []originCall{call(0, 1000, faultHang), call(1800, 1810, faultNone)}},
		{name: "a hang ends for the server at the loader's timeout, however late the origin sees it", calls: []originCall{
			call(0, 2000, faultHang), call(1800, 1810, faultNone)}},
		{name: "a call inside the cooldown of a hang seen late", calls: []originCall{
			call(0, 2000, faultHang), call(1500, 1510, faultNone)}, violations: 1, why: "inside the cooldown"},
		{name: "a call by another server after a reset is no retry", calls: []originCall{
			call(0, 1, faultReset), {start: at(2), end: at(10), replica: "other"}},
			violations: 1, why: "inside the cooldown"},
		{name: "within the tolerance", calls: []originCall{call(0, 1, fault500), call(760, 770, faultNone)}},
		{name: "HTTP retry after a reset, succeeded: no cooldown", calls: []originCall{
			call(0, 1, faultReset), call(2, 10, faultNone), call(700, 710, faultNone)},
			retries: 1},
		{name: "retry chain reset, reset, 500 starts the cooldown", calls: []originCall{
			call(0, 1, faultReset), call(2, 3, faultReset), call(4, 5, fault500), call(300, 310, faultNone)},
			retries: 2, violations: 1, why: "inside the cooldown"},
		{name: "a call after Close began is not checked", calls: []originCall{call(1e6-500, 1e6, faultHang), call(1e6+1, 1e6+2, faultNone)}},
		{name: "a call 300 ms after a reset is no retry", calls: []originCall{call(0, 1, faultReset), call(301, 310, faultNone)},
			violations: 1, why: "inside the cooldown"},
		{name: "excused by a Redis fault between the calls", calls: []originCall{call(0, 1, fault500), call(300, 310, faultNone)},
			windows: []window{{from: at(100), to: at(200)}}, excused: 1},
		{name: "a Redis fault long before is no excuse", calls: []originCall{call(5000, 5001, fault500), call(5300, 5310, faultNone)},
			windows: []window{{from: at(0), to: at(2000)}}, violations: 1, why: "inside the cooldown"},
		// A soak's own run: the next call came 725 ms after the hang's
		// timeout counted from when the origin saw it; the origin had stalled
		// as the hang's request came.
		{name: "a hang seen late by a stalled origin", calls: []originCall{call(0, 1060, faultHang), call(1725, 1730, faultNone)},
			stalls: []stall{{end: at(0), d: 243 * time.Millisecond}}, stalled: 1},
		{name: "a stall shorter than the shortfall is no excuse", calls: []originCall{call(0, 1060, faultHang), call(1725, 1730, faultNone)},
			stalls: []stall{{end: at(0), d: 20 * time.Millisecond}}, violations: 1, why: "inside the cooldown"},
		{name: "a stall after the first call began is no excuse", calls: []originCall{call(0, 1060, faultHang), call(1725, 1730, faultNone)},
			stalls: []stall{{end: at(500), d: 243 * time.Millisecond}}, violations: 1, why: "inside the cooldown"},
		{name: "a stall never excuses two calls at once", calls: []originCall{call(0, 500, faultSpike), call(400, 410, faultNone)},
			stalls: []stall{{end: at(400), d: 400 * time.Millisecond}}, violations: 1, why: "at once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := checkCalls(map[string][]originCall{"k": tc.calls}, tc.stalls, tc.windows...)
			if len(res.violations) != tc.violations || res.httpRetries != tc.retries || res.excused != tc.excused || res.stalled != tc.stalled {
				t.Fatalf("violations %d, retries %d, excused %d, stalled %d; want %d, %d, %d, %d: %v",
					len(res.violations), res.httpRetries, res.excused, res.stalled, tc.violations, tc.retries, tc.excused, tc.stalled, res.violations)
			}
			if tc.violations > 0 && !strings.Contains(res.violations[0].why, tc.why) {
				t.Errorf("violation %q, want it to say %q", res.violations[0].why, tc.why)
			}
			want := 1 + tc.violations
			if res.maxCalls != want {
				t.Errorf("maxCalls %d, want %d", res.maxCalls, want)
			}
		})
	}
}
