package testwait

import (
	"sync/atomic"
	"testing"
)

func TestUntilPollsUntilTheConditionHolds(t *testing.T) {
	var calls atomic.Int64
	if !Until(func() bool { return calls.Add(1) == 5 }) {
		t.Fatal("Until = false for a condition that held on the fifth poll")
	}
	if n := calls.Load(); n != 5 {
		t.Errorf("cond called %d times, want 5", n)
	}
}
