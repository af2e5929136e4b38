package engine

import (
	"strconv"
	"testing"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// TestDriftChargeRoom: the drift charge leaves the entries no more room
// under the bound than the resident set has under its aim, and past the
// aim takes the excess from them at once, besides what the process holds
// uncharged and the pressure.
func TestDriftChargeRoom(t *testing.T) {
	const mib = 1 << 20
	const bound = 32 * mib
	for _, tc := range []struct {
		name                          string
		held, charged, pressure, over int64
		want                          int64
	}{
		{"far under the aim: what is held uncharged", 22 * mib, 20 * mib, 0, -20 * mib, 2 * mib},
		{"under the aim: its room", 20 * mib, 20 * mib, 0, -4 * mib, 8 * mib},
		{"at the aim: no room", 20 * mib, 20 * mib, 0, 0, 12 * mib},
		{"past the aim: the excess", 20 * mib, 20 * mib, 0, 3 * mib, 15 * mib},
		{"the pressure when it is more", 20 * mib, 10 * mib, 4 * mib, -30 * mib, 14 * mib},
		{"at most half the bound", 20 * mib, 4 * mib, 0, 2 * mib, bound / 2},
	} {
		got := driftCharge(bound, tc.held, tc.charged, tc.pressure, tc.over)
		if got != tc.want {
			t.Errorf("%s: driftCharge = %.1f MiB, want %.1f", tc.name, float64(got)/mib, float64(tc.want)/mib)
		}
	}
}

// TestSqueezedCompactorWinsBackMore: with the process near its aim the
// compactor starts where it otherwise stops (a tenth of the shared
// segments dead) and goes on to a twentieth, or its minimum slack.
func TestSqueezedCompactorWinsBackMore(t *testing.T) {
	s := newStore(t, Options{MaxMemory: 1 << 30, ExpireInterval: noSweep})
	value := string(make([]byte, 1000))
	const keys = 24000 // about 24 MiB of records
	for i := range keys {
		set(t, s, "k"+strconv.Itoa(i), value)
	}
	for i := 0; i < keys; i += 8 {
		s.Delete([]byte("k" + strconv.Itoa(i)))
	}
	slack, shared := s.arena.Slack(), s.arena.Shared()
	if slack <= compactMinSlack || slack*compactStartFraction > shared || slack*compactStopFraction <= shared {
		t.Fatalf("%d of %d bytes dead, want between a tenth and a sixth, past %d", slack, shared, compactMinSlack)
	}
	if start, _ := s.compactFractions(); s.slackOver(start) {
		t.Fatal("the compactor would start unsqueezed")
	}
	s.squeezed.Store(true)
	s.kickCompactor()
	testwait.For(t, "the compactor to win back to a twentieth", func() bool {
		slack, shared := s.arena.Slack(), s.arena.Shared()
		return slack <= max(compactMinSlack, shared/compactSqueezeFraction)
	})
	checkInvariants(t, s)
}
