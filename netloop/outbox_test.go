package netloop

import (
	"testing"
	"time"
)

// TestOutputLimitReached checks Redis's rules for the limits: the hard one
// at once, the soft one once it has held for more than its seconds.
func TestOutputLimitReached(t *testing.T) {
	l := OutputLimit{Hard: 100, Soft: 50, SoftTime: 2 * time.Second}
	var since int64
	steps := []struct {
		n, now int64
		want   bool
	}{
		{10, 1000, false}, {50, 1000, false}, {60, 1001, false}, {60, 1002, false},
		{10, 1003, false}, // below soft: the clock starts again
		{55, 1004, false}, {55, 1006, false}, {55, 1007, true},
		{100, 1010, true},
	}
	for i, st := range steps {
		if st.n == 100 {
			since = 0
		}
		if got := l.reached(st.n, st.now, &since); got != st.want {
			t.Fatalf("step %d: reached(%d at %d) = %v", i, st.n, st.now, got)
		}
	}
	if (OutputLimit{}).reached(1<<40, 1, &since) {
		t.Fatal("a zero limit bounds nothing")
	}
	if _, err := ParseOutputLimit("1mb 2"); err == nil {
		t.Fatal("ParseOutputLimit accepted two fields")
	}
	if l, err := ParseOutputLimit("32mb 8MB 60"); err != nil || l != DefaultPubSubOutputLimit {
		t.Fatalf("ParseOutputLimit = %v, %v", l, err)
	}
}
