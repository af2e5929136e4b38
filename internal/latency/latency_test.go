package latency

import (
	"strings"
	"testing"
	"time"
)

// TestMonitor: spikes under the threshold are not wanted; one sample per
// second keeps that second's worst; the ring keeps the latest Samples
// seconds, oldest first, and the worst ever; Reset forgets what it is
// told to; DOCTOR reports each event.
func TestMonitor(t *testing.T) {
	var m Monitor
	if m.Wants(1 << 40) {
		t.Fatal("a monitor with no threshold wants a spike")
	}
	m.SetThreshold(10)
	if m.Wants(9) || !m.Wants(10) {
		t.Fatal("the threshold is not where it was set")
	}
	start := time.Unix(1000, 0)
	m.Add("command", 50, start)
	m.Add("command", 20, start.Add(time.Millisecond)) // same second: 50 stays
	m.Add("command", 30, start.Add(time.Second))
	if h := m.History("command"); len(h) != 2 || h[0] != (Sample{1000, 50}) || h[1] != (Sample{1001, 30}) {
		t.Fatalf("History = %v", h)
	}
	for i := range Samples {
		m.Add("fast-command", int64(10+i), start.Add(time.Duration(i+2)*time.Second))
	}
	m.Add("fast-command", 11, start.Add(time.Duration(Samples+2)*time.Second))
	h := m.History("fast-command")
	if len(h) != Samples || h[0].Unix != 1003 || h[len(h)-1] != (Sample{int64(1002 + Samples), 11}) {
		t.Fatalf("after wrapping: %d samples, first %v, last %v", len(h), h[0], h[len(h)-1])
	}
	latest := m.Latest()
	if len(latest) != 2 || latest[0].Event != "command" || latest[0].Max != 50 || latest[1].Max != int64(10+Samples-1) {
		t.Fatalf("Latest = %+v", latest)
	}
	if doc := m.Doctor(2000, -1); !strings.Contains(doc, "1. command: 2 latency spikes") || !strings.Contains(doc, "2. fast-command") {
		t.Fatalf("Doctor:\n%s", doc)
	}
	if n := m.Reset(func(e string) bool { return e == "command" }); n != 1 || len(m.Latest()) != 1 {
		t.Fatalf("Reset forgot %d, left %+v", n, m.Latest())
	}
}
