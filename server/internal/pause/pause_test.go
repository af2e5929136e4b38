package pause

import (
	"sync/atomic"
	"testing"
	"time"
)

// far is a pause's end no test reaches.
var far = time.Now().Add(time.Hour).UnixMilli()

func newGate(t *testing.T) (*Gate, *bool) {
	t.Helper()
	var g Gate
	frozen := new(bool)
	g.Init(func(f bool) { *frozen = f })
	t.Cleanup(g.Close)
	return &g, frozen
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHold: what each mode holds, as Redis's pause types do.
func TestHold(t *testing.T) {
	for _, tc := range []struct {
		mode         Mode
		writes, held bool
	}{
		{All, false, true},
		{All, true, true},
		{Write, false, false},
		{Write, true, true},
	} {
		g, frozen := newGate(t)
		if g.Pausing() {
			t.Fatal("pausing before a pause")
		}
		g.Pause(tc.mode, far)
		if !*frozen || g.Shown() != tc.mode {
			t.Errorf("%v: frozen %v, shown %v", tc.mode, *frozen, g.Shown())
		}
		var flag atomic.Bool
		w := g.Hold(&flag, func() bool { return tc.writes }, false, false)
		if (w != nil) != tc.held || flag.Load() != tc.held || g.Held() != map[bool]int64{true: 1}[tc.held] {
			t.Errorf("%v, writes %v: held %v, want %v", tc.mode, tc.writes, w != nil, tc.held)
		}
		g.Unpause()
		if *frozen || g.Shown() != Off {
			t.Errorf("%v: after Unpause frozen %v, shown %v", tc.mode, *frozen, g.Shown())
		}
		if w != nil {
			if !closed(w.Ready()) || flag.Load() || g.Held() != 0 {
				t.Errorf("%v: not let go at Unpause", tc.mode)
			}
			g.EndTurn(w)
		}
		if g.Pausing() {
			t.Errorf("%v: still pausing after the last turn", tc.mode)
		}
	}
}

// TestTurns: held commands run one at a time, in the order they arrived,
// and a command that comes while they do waits behind them; one whose
// client leaves is skipped.
func TestTurns(t *testing.T) {
	g, _ := newGate(t)
	g.Pause(All, far)
	never := func() bool { return false }
	var flags [4]atomic.Bool
	var ws []*Waiter
	for i := range 3 {
		ws = append(ws, g.Hold(&flags[i], never, false, false))
	}
	if !g.Leave(ws[1]) || g.Held() != 2 {
		t.Fatalf("Leave of a waiting command: held %d", g.Held())
	}
	g.Unpause()
	if !closed(ws[0].Ready()) || closed(ws[2].Ready()) {
		t.Fatal("the first held command's turn is not alone")
	}
	late := g.Hold(&flags[3], never, false, false)
	if late == nil {
		t.Fatal("a command arriving during the turns ran before them")
	}
	if g.Hold(&flags[3], never, true, true) != nil {
		t.Error("a command in its turn was held again with no pause in force")
	}
	g.EndTurn(ws[0])
	g.EndTurn(ws[0]) // twice is once
	if !closed(ws[2].Ready()) || closed(late.Ready()) {
		t.Fatal("turns out of order")
	}
	g.EndTurn(ws[2])
	if !closed(late.Ready()) {
		t.Fatal("the late command's turn did not come")
	}
	if g.Leave(late) {
		t.Error("Leave after its turn came reported it waiting")
	}
	g.EndTurn(late)
	if g.Pausing() || g.Held() != 0 || g.HeldTotal() != 0 {
		t.Errorf("after every turn: pausing %v, held %d", g.Pausing(), g.Held())
	}
}

// TestPauseKeepsTheStricter: a later pause keeps the more restrictive
// mode; one whose end has passed ends at once; Close lets nothing run.
func TestPauseKeepsTheStricter(t *testing.T) {
	g, frozen := newGate(t)
	g.Pause(All, far)
	g.Pause(Write, far)
	if g.Shown() != All {
		t.Errorf("ALL then WRITE: %v, want all", g.Shown())
	}
	g.Unpause()
	g.Pause(Write, 0)
	if g.Shown() != Off || *frozen {
		t.Errorf("a pause already over: %v, frozen %v", g.Shown(), *frozen)
	}
	g.Pause(All, far)
	var flag atomic.Bool
	w := g.Hold(&flag, func() bool { return false }, false, false)
	g.Close()
	if !closed(g.Shut()) || closed(w.Ready()) || *frozen {
		t.Error("Close: shut not closed, or the held command let go, or the store frozen")
	}
	if g.Hold(&flag, func() bool { return true }, false, false) != nil {
		t.Error("held after Close")
	}
}
