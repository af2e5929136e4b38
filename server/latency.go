package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// latencySamples is how many seconds with a spike an event keeps, as
// Redis's LATENCY_TS_LEN.
const latencySamples = 160

// The events stampedeless records, named as Redis names them: a command
// past the threshold, "fast-command" for one flagged fast.
const (
	latencyCommand     = "command"
	latencyFastCommand = "fast-command"
)

// latencySample is the worst latency, in ms, of one unix second.
type latencySample struct{ unix, ms int64 }

// latencySeries is one event's samples, a ring of the latest
// latencySamples seconds that had a spike, and its worst ever.
type latencySeries struct {
	samples [latencySamples]latencySample
	next    int // where the next second's sample goes
	max     int64
}

// latest is the most recent sample.
func (ts *latencySeries) latest() latencySample {
	return ts.samples[(ts.next+latencySamples-1)%latencySamples]
}

// latencyMonitor is LATENCY's: the spikes of each event past
// latency-monitor-threshold ms (0: off, Redis's default).
type latencyMonitor struct {
	threshold atomic.Int64 // ms

	mu     sync.Mutex // protects events
	events map[string]*latencySeries
}

// wants reports whether an event of ms is a spike.
func (m *latencyMonitor) wants(ms int64) bool {
	t := m.threshold.Load()
	return t > 0 && ms >= t
}

// add records a spike of ms at now: one sample per second, the worst of
// that second, as Redis's latencyAddSample.
func (m *latencyMonitor) add(event string, ms int64, now time.Time) {
	unix := now.Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = make(map[string]*latencySeries)
	}
	ts := m.events[event]
	if ts == nil {
		ts = &latencySeries{}
		m.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	if prev := &ts.samples[(ts.next+latencySamples-1)%latencySamples]; prev.unix == unix {
		prev.ms = max(prev.ms, ms)
		return
	}
	ts.samples[ts.next] = latencySample{unix: unix, ms: ms}
	ts.next = (ts.next + 1) % latencySamples
}

// names are the events with samples, sorted (Redis lists them in its hash
// table's order).
func (m *latencyMonitor) names() []string {
	return slices.Sorted(mapKeys(m.events))
}

func cmdLatencyLatest(c *Conn, _ [][]byte) {
	m := &c.srv.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	names := m.names()
	c.w.Array(len(names))
	for _, name := range names {
		ts := m.events[name]
		last := ts.latest()
		c.w.Array(4)
		c.w.BulkString(name)
		c.w.Int(last.unix)
		c.w.Int(last.ms)
		c.w.Int(ts.max)
	}
}

func cmdLatencyHistory(c *Conn, args [][]byte) {
	m := &c.srv.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[string(args[2])]
	if ts == nil {
		c.w.Array(0)
		return
	}
	var kept []latencySample
	for j := range latencySamples {
		if s := ts.samples[(ts.next+j)%latencySamples]; s.unix != 0 {
			kept = append(kept, s)
		}
	}
	c.w.Array(len(kept))
	for _, s := range kept {
		c.w.Array(2)
		c.w.Int(s.unix)
		c.w.Int(s.ms)
	}
}

// cmdLatencyReset forgets the events named, case-insensitively, or all,
// and answers how many it forgot.
func cmdLatencyReset(c *Conn, args [][]byte) {
	m := &c.srv.latency
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for name := range m.events {
		if len(args) == 2 || slices.ContainsFunc(args[2:], func(a []byte) bool { return resp.EqualFold(a, name) }) {
			delete(m.events, name)
			n++
		}
	}
	c.w.Int(int64(n))
}

// cmdLatencyDoctor is Redis's report, in short: each event's spikes, and
// the advice that applies to a server without disks or forks.
func cmdLatencyDoctor(c *Conn, _ [][]byte) {
	s := c.srv
	m := &s.latency
	threshold := m.threshold.Load()
	var b strings.Builder
	m.mu.Lock()
	names := m.names()
	switch {
	case len(names) == 0 && threshold == 0:
		b.WriteString(`I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "CONFIG SET latency-monitor-threshold <milliseconds>." in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.` + "\n")
	case len(names) == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	default:
		b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		now := s.store.Now().Unix()
		for i, name := range names {
			ts := m.events[name]
			var n, sum, oldest int64
			for _, smp := range ts.samples {
				if smp.unix == 0 {
					continue
				}
				n, sum = n+1, sum+smp.ms
				if oldest == 0 || smp.unix < oldest {
					oldest = smp.unix
				}
			}
			avg, period := sum/n, max(now-oldest, 1)
			var mad int64
			for _, smp := range ts.samples {
				if smp.unix != 0 {
					mad += max(avg-smp.ms, smp.ms-avg)
				}
			}
			fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.\n",
				i+1, name, n, avg, mad/n, float64(period)/float64(n), ts.max)
		}
		b.WriteString("\nI have a few advices for you:\n\n")
		slower := s.slowlog.slowerThan.Load()
		if slower < 0 {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", threshold*1000)
		} else if slower/1000 > threshold {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
		}
		b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
	}
	m.mu.Unlock()
	c.w.Verbatim("txt", b.String())
}

func cmdLatencyHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "LATENCY",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)")
}

func getLatencyThreshold(s *Server) string { return strconv.FormatInt(s.latency.threshold.Load(), 10) }

func setLatencyThreshold(s *Server, v string) error {
	n, err := configInteger(v, 0, 1<<63-1)
	if err == nil {
		s.latency.threshold.Store(n)
	}
	return err
}
