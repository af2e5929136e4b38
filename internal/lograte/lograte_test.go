package lograte

import (
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/fakeclock"
)

// TestAllow: the first event of a key is logged, the rest of its interval
// held back and counted into the next line; keys are independent.
func TestAllow(t *testing.T) {
	clock := fakeclock.New()
	l := &Limiter{Every: time.Second, Now: clock.Now}
	if n, ok := l.Allow("a"); !ok || n != 1 {
		t.Fatalf("first event: %d, %v; want 1, true", n, ok)
	}
	for range 999 {
		if _, ok := l.Allow("a"); ok {
			t.Fatal("an event within the interval was let through")
		}
	}
	if n, ok := l.Allow("b"); !ok || n != 1 {
		t.Fatalf("another key's first event: %d, %v; want 1, true", n, ok)
	}
	clock.Advance(time.Second)
	if n, ok := l.Allow("a"); !ok || n != 1000 {
		t.Fatalf("the first event after the interval: %d, %v; want 1000 (999 held back and itself), true", n, ok)
	}
	if _, ok := l.Allow("a"); ok {
		t.Fatal("a second line within the new interval")
	}
}
