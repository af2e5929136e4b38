// Package latency is Redis's latency monitor (LATENCY): per event, the
// worst latency of each second that had a spike past the threshold, the
// latest Samples of them, and the worst ever; and Redis's DOCTOR report of
// them.
package latency

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Samples is how many seconds with a spike an event keeps, as Redis's
// LATENCY_TS_LEN.
const Samples = 160

// Sample is the worst latency, in ms, of one unix second.
type Sample struct{ Unix, MS int64 }

// series is one event's samples, a ring of the latest Samples seconds
// that had a spike, and its worst ever.
type series struct {
	samples [Samples]Sample
	next    int // where the next second's sample goes
	max     int64
}

// latest is the most recent sample.
func (ts *series) latest() Sample {
	return ts.samples[(ts.next+Samples-1)%Samples]
}

// Monitor records the spikes of each event past its threshold in ms (0:
// off, Redis's default). Its zero value is off; it is safe for concurrent
// use.
type Monitor struct {
	threshold atomic.Int64 // ms

	mu     sync.Mutex // protects events
	events map[string]*series
}

// Threshold is latency-monitor-threshold, in ms; 0: off.
func (m *Monitor) Threshold() int64 { return m.threshold.Load() }

// SetThreshold sets latency-monitor-threshold.
func (m *Monitor) SetThreshold(ms int64) { m.threshold.Store(ms) }

// Wants reports whether an event of ms is a spike.
func (m *Monitor) Wants(ms int64) bool {
	t := m.threshold.Load()
	return t > 0 && ms >= t
}

// Add records a spike of ms at now: one sample per second, the worst of
// that second, as Redis's latencyAddSample.
func (m *Monitor) Add(event string, ms int64, now time.Time) {
	unix := now.Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.events == nil {
		m.events = make(map[string]*series)
	}
	ts := m.events[event]
	if ts == nil {
		ts = &series{}
		m.events[event] = ts
	}
	ts.max = max(ts.max, ms)
	if prev := &ts.samples[(ts.next+Samples-1)%Samples]; prev.Unix == unix {
		prev.MS = max(prev.MS, ms)
		return
	}
	ts.samples[ts.next] = Sample{Unix: unix, MS: ms}
	ts.next = (ts.next + 1) % Samples
}

// names are the events with samples, sorted (Redis lists them in its hash
// table's order); m.mu is held.
func (m *Monitor) names() []string {
	return slices.Sorted(maps.Keys(m.events))
}

// Latest is an event's latest spike and its worst ever, as LATENCY LATEST
// lists them.
type Latest struct {
	Event string
	Last  Sample
	Max   int64
}

// Latest is every event's latest spike, by event name.
func (m *Monitor) Latest() []Latest {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Latest
	for _, name := range m.names() {
		ts := m.events[name]
		out = append(out, Latest{Event: name, Last: ts.latest(), Max: ts.max})
	}
	return out
}

// History is event's samples, oldest first (LATENCY HISTORY).
func (m *Monitor) History(event string) []Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	ts := m.events[event]
	if ts == nil {
		return nil
	}
	var kept []Sample
	for j := range Samples {
		if s := ts.samples[(ts.next+j)%Samples]; s.Unix != 0 {
			kept = append(kept, s)
		}
	}
	return kept
}

// Reset forgets the events match keeps, and reports how many it forgot.
func (m *Monitor) Reset(match func(event string) bool) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for name := range m.events {
		if match(name) {
			delete(m.events, name)
			n++
		}
	}
	return n
}

// Doctor is Redis's report, in short: each event's spikes, at unix second
// now, and the advice that applies to a server without disks or forks,
// whose slow log logs commands slower than slowerThan µs (negative: off).
func (m *Monitor) Doctor(now, slowerThan int64) string {
	threshold := m.threshold.Load()
	var b strings.Builder
	m.mu.Lock()
	defer m.mu.Unlock()
	names := m.names()
	switch {
	case len(names) == 0 && threshold == 0:
		b.WriteString(`I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use "CONFIG SET latency-monitor-threshold <milliseconds>." in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.` + "\n")
	case len(names) == 0:
		b.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
	default:
		b.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		for i, name := range names {
			ts := m.events[name]
			var n, sum, oldest int64
			for _, smp := range ts.samples {
				if smp.Unix == 0 {
					continue
				}
				n, sum = n+1, sum+smp.MS
				if oldest == 0 || smp.Unix < oldest {
					oldest = smp.Unix
				}
			}
			avg, period := sum/n, max(now-oldest, 1)
			var mad int64
			for _, smp := range ts.samples {
				if smp.Unix != 0 {
					mad += max(avg-smp.MS, smp.MS-avg)
				}
			}
			fmt.Fprintf(&b, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.\n",
				i+1, name, n, avg, mad/n, float64(period)/float64(n), ts.max)
		}
		b.WriteString("\nI have a few advices for you:\n\n")
		if slowerThan < 0 {
			fmt.Fprintf(&b, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", threshold*1000)
		} else if slowerThan/1000 > threshold {
			fmt.Fprintf(&b, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", threshold*1000)
		}
		b.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
	}
	return b.String()
}
