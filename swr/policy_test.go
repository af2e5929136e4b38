package swr

import (
	"testing"

	"github.com/stampedeless/stampedeless/engine"
)

// TestDecideTable mirrors the decision table (docs/design.md, section The
// swr decision table) row by row.
func TestDecideTable(t *testing.T) {
	const now = 1_000_000
	entry := func(fresh, stale int64) engine.Envelope {
		return engine.Envelope{Value: []byte("v"), FreshUntil: fresh, StaleUntil: stale}
	}
	tests := []struct {
		name    string
		env     engine.Envelope
		found   bool
		cooling bool
		want    Action
	}{
		{"fresh", entry(now+1, now+10), true, false, Serve},
		{"fresh while cooling still serves", entry(now+1, now+10), true, true, Serve},
		{"no deadlines is fresh forever", entry(0, 0), true, false, Serve},
		{"stale within grace", entry(now, now+10), true, false, ServeAndRefresh},
		{"stale at the first instant", entry(now-1, now+1), true, false, ServeAndRefresh},
		{"stale during cooldown: stale-if-error", entry(now-5, now+10), true, true, ServeStale},
		{"past grace is a miss", entry(now-10, now), true, false, Load},
		{"past grace during cooldown fails fast", entry(now-10, now), true, true, Fail},
		{"grace 0: stale deadline equals fresh", entry(now, now), true, false, Load},
		{"never filled", engine.Envelope{}, false, false, Load},
		{"never filled during cooldown", engine.Envelope{}, false, true, Fail},
	}
	for _, tt := range tests {
		if got := Decide(tt.env, tt.found, now, tt.cooling); got != tt.want {
			t.Errorf("%s: Decide = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestServable(t *testing.T) {
	const now = 500
	if !Servable(engine.Envelope{FreshUntil: 100, StaleUntil: 600}, true, now) {
		t.Error("a servable stale entry must be served when the caller's TIMEOUT passes")
	}
	if Servable(engine.Envelope{FreshUntil: 100, StaleUntil: 500}, true, now) {
		t.Error("an entry past its grace must not be served")
	}
	if Servable(engine.Envelope{}, false, now) {
		t.Error("nothing stored: the caller gets -TIMEOUT")
	}
}

func TestActionNames(t *testing.T) {
	for a := Load; a <= Fail; a++ {
		if a.String() == "unknown" || a.String() == "" {
			t.Errorf("action %d has no name", a)
		}
	}
	if Action(200).String() != "unknown" {
		t.Error("out-of-range action must be named unknown")
	}
}
