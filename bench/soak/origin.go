package main

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// originFault is what the origin does with one call.
type originFault int

const (
	faultNone  originFault = iota // answers 200 after a few ms
	faultSpike                    // answers 200 after a spike, under the loader's timeout
	fault500                      // answers 500 at once
	faultReset                    // reads the request and resets the connection
	faultHang                     // never answers; the loader's timeout ends the call
	numOriginFaults
)

var originFaultNames = [numOriginFaults]string{"ok", "latency spike", "500", "connection reset", "hang"}

// failed reports whether the loader sees the call as a failure, which starts
// the key's cooldown.
func (f originFault) failed() bool { return f == fault500 || f == faultReset || f == faultHang }

// originCall is one call the origin received.
type originCall struct {
	start, end time.Time
	fault      originFault
	replica    string // which server called: the first path segment
	canceled   bool   // the caller went away before the answer
}

// faultyOrigin is the HTTP origin behind the soak's loader, in this process:
// most calls answer after a few ms; some spike, fail with 500, reset the
// connection or hang. It records every call per key, so the end of the run
// can check one call per key at a time and none during a cooldown.
type faultyOrigin struct {
	srv   *httptest.Server
	spike time.Duration // longest latency spike, under the loader's timeout

	mu      sync.Mutex
	closing time.Time // when Close began: it cuts the calls still running
	calls   map[string][]originCall
	counts  [numOriginFaults]int64
	total   atomic.Int64
}

// startOrigin starts the origin on a loopback port.
func startOrigin(spike time.Duration) *faultyOrigin {
	o := &faultyOrigin{spike: spike, calls: map[string][]originCall{}}
	o.srv = httptest.NewServer(o)
	return o
}

// URL is the loader URL template for the origin as server name calls it:
// the name comes first in the path, so each call says who made it.
func (o *faultyOrigin) URL(name string) string { return o.srv.URL + "/" + name + "/{key}" }

// Close stops the origin and closes every connection to it, idle ones
// included, so the servers' HTTP clients end their connection goroutines.
func (o *faultyOrigin) Close() {
	o.mu.Lock()
	if o.closing.IsZero() {
		o.closing = time.Now()
	}
	o.mu.Unlock()
	o.srv.CloseClientConnections()
	o.srv.Close()
}

// pick draws a call's fault: 85% plain, 5% spikes, 5% 500s, 3% resets, 2%
// hangs.
func pick() originFault {
	switch r := rand.IntN(100); {
	case r < 85:
		return faultNone
	case r < 90:
		return faultSpike
	case r < 95:
		return fault500
	case r < 98:
		return faultReset
	default:
		return faultHang
	}
}

func (o *faultyOrigin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	replica, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	call := originCall{start: time.Now(), fault: pick(), replica: replica}
	n := o.total.Add(1)
	defer func() {
		call.end = time.Now()
		call.canceled = r.Context().Err() != nil && call.fault != faultHang
		o.mu.Lock()
		o.calls[key] = append(o.calls[key], call)
		o.counts[call.fault]++
		o.mu.Unlock()
	}()
	switch call.fault {
	case faultNone:
		sleep(r, time.Duration(2+rand.IntN(10))*time.Millisecond)
	case faultSpike:
		sleep(r, o.spike/2+rand.N(o.spike/2))
	case fault500:
		http.Error(w, "injected failure", http.StatusInternalServerError)
		return
	case faultReset:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0) // close with RST, not FIN
				}
				conn.Close()
			}
		}
		return
	case faultHang:
		<-r.Context().Done()
		return
	}
	fmt.Fprintf(w, "value of %s, call %d", key, n)
}

// sleep waits d or until the caller gives up.
func sleep(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// window is a span of time during which the fleet may legitimately call the
// origin more than once per key: Redis was down or hung, or had just come
// back empty.
type window struct{ from, to time.Time }

// retryGap is how soon after a reset the next call by the same server
// counts as the HTTP client's own retry of the same request (which may be
// reset in turn and retried again); on a busy machine the retry's dial
// takes tens of ms.
const retryGap = 200 * time.Millisecond

// callViolation is a pair of calls of one key that breaks the promise of
// one origin call per key at a time and none during a cooldown.
type callViolation struct {
	key    string
	first  originCall
	second originCall
	why    string
	around string // the key's calls around the pair
}

func (v callViolation) String() string {
	return fmt.Sprintf("%s: %s call %s–%s, then a call at %s: %s", v.key, originFaultNames[v.first.fault],
		v.first.start.Format("15:04:05.000"), v.first.end.Format("15:04:05.000"), v.second.start.Format("15:04:05.000"), v.why) +
		"; the key's calls around it: " + v.around
}

// describe lists calls as "start–end fault".
func describe(calls []originCall) string {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = fmt.Sprintf("%s–%s %s by %s", c.start.Format("05.000"), c.end.Format("05.000"), originFaultNames[c.fault], c.replica)
		if c.canceled {
			parts[i] += " (canceled)"
		}
	}
	return strings.Join(parts, ", ")
}

// originCheck is the result of checking the recorded calls.
type originCheck struct {
	keys, calls int
	violations  []callViolation
	excused     int // pairs that would violate but meet a Redis fault
	// stalled are pairs inside a cooldown by less than the origin may have
	// seen the first call late, the server or the soak process short of a
	// CPU as it came.
	stalled int
	// httpRetries are calls that came at once after a reset: Go's
	// http.Transport sends a GET again when a kept-alive connection fails
	// before the first byte of the response.
	httpRetries int
	// maxCalls is the most calls of one key during one call or the
	// cooldown after it, that call included: 1 when all is well.
	maxCalls int
	counts   [numOriginFaults]int64
}

// check verifies, per key, that no call started while another call of the
// key ran, and none within minCooldown (less tolerance) of the end of a
// failed load. A hang ends for the server at its loader's timeout
// (loaderTimeout after the call started, at the latest), whenever the
// origin sees the connection go. Pairs whose span [first.start-lead,
// second.start] meets one of the windows are excused and counted apart:
// the fleet's coordination lives in Redis, and while it is away (or a
// holder is slower than its lease) replicas load on their own by design.
// A pair inside a cooldown by no more than startLag(first) is counted
// apart too: the server's loader timer starts before its request reaches
// the origin, so a hang ends for the server loaderTimeout after an instant
// earlier than first.start, by as long as the server or the origin (the
// soak process) waited for a CPU in between.
func (o *faultyOrigin) check(minCooldown, tolerance, lead, loaderTimeout time.Duration, windows []window, startLag func(originCall) time.Duration) originCheck {
	o.mu.Lock()
	defer o.mu.Unlock()
	res := originCheck{keys: len(o.calls), counts: o.counts}
	for key, calls := range o.calls {
		sort.Slice(calls, func(i, j int) bool { return calls[i].start.Before(calls[j].start) })
		res.calls += len(calls)
		// retry[k]: calls[k] came at once after calls[k-1] was reset.
		retry := make([]bool, len(calls))
		for k := 1; k < len(calls); k++ {
			if calls[k-1].fault == faultReset && calls[k].replica == calls[k-1].replica && calls[k].start.Sub(calls[k-1].end) < retryGap {
				retry[k] = true
				res.httpRetries++
			}
		}
		for i, c := range calls {
			// A failed call starts a cooldown only if it was the load's
			// last attempt: not one the HTTP client retried.
			failedLoad := c.fault.failed() && !(i+1 < len(calls) && retry[i+1])
			// end is when the server saw c end.
			end := c.end
			if limit := c.start.Add(loaderTimeout); c.fault == faultHang && end.After(limit) {
				end = limit
			}
			// Calls of this key that started within c's cooldown (or while
			// c ran), c included.
			inCD := 1
			chain := true // every call from c to d is a retry of the one before
			for j, d := range calls[i+1:] {
				chain = chain && retry[i+1+j]
				if !d.start.Before(end.Add(minCooldown)) {
					break // calls are sorted by start: no later one is closer
				}
				if !o.closing.IsZero() && !d.start.Before(o.closing) {
					break // the HTTP client's retry of a call Close cut
				}
				var why string
				var short time.Duration // how far inside the cooldown d began
				switch {
				case d.start.Before(end):
					why = "two calls of the key at once"
				case failedLoad && d.start.Before(end.Add(minCooldown-tolerance)):
					short = end.Add(minCooldown - tolerance).Sub(d.start)
					why = fmt.Sprintf("%v after a failure, inside the cooldown (at least %v)", d.start.Sub(end).Round(time.Millisecond), minCooldown)
				default:
					continue
				}
				if chain {
					continue // the HTTP client's retries of c's request
				}
				if excused(c.start.Add(-lead), d.start, windows) {
					res.excused++
					continue
				}
				if short > 0 && startLag(c) >= short {
					res.stalled++
					continue
				}
				inCD++
				res.violations = append(res.violations, callViolation{key: key, first: c, second: d, why: why, around: describe(calls[max(0, i-2):min(len(calls), i+j+4)])})
			}
			res.maxCalls = max(res.maxCalls, inCD)
		}
	}
	return res
}

// excused reports whether [from, to] meets one of the windows.
func excused(from, to time.Time, windows []window) bool {
	for _, w := range windows {
		if !w.to.Before(from) && !w.from.After(to) {
			return true
		}
	}
	return false
}
