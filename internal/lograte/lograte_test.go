package lograte

import (
	"fmt"
	"slices"
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

// TestAllowLateFlushesByTime: the events AllowLate holds back are reported
// when the interval ends, by the last held event's line, though no event
// follows; none is reported twice, and a quiet key writes nothing.
func TestAllowLateFlushesByTime(t *testing.T) {
	clock := fakeclock.New()
	l := &Limiter{Every: time.Second, Now: clock.Now, AfterFunc: clock.AfterFunc}
	var late []string
	event := func(name string) (int, bool) {
		return l.AllowLate("a", func(n int) { late = append(late, fmt.Sprint(name, ":", n)) })
	}
	if n, ok := event("e0"); !ok || n != 1 {
		t.Fatalf("first event: %d, %v; want 1, true", n, ok)
	}
	for i := 1; i <= 12; i++ {
		if _, ok := event(fmt.Sprint("e", i)); ok {
			t.Fatal("an event within the interval was let through")
		}
	}
	clock.Advance(time.Second - 1)
	if len(late) != 0 {
		t.Fatalf("reported before the interval ended: %v", late)
	}
	clock.Advance(1)
	if want := []string{"e12:12"}; !slices.Equal(late, want) {
		t.Fatalf("at the interval's end: %v; want %v (the 12 held back, by the last one's line)", late, want)
	}
	clock.Advance(10 * time.Second)
	if len(late) != 1 {
		t.Fatalf("a quiet key reported again: %v", late)
	}
	// A line that goes out before the timer carries the count; the timer
	// then has nothing to report.
	event("f0")
	event("f1")
	clock.Advance(time.Second)
	if want := []string{"e12:12", "f1:1"}; !slices.Equal(late, want) {
		t.Fatalf("late lines %v; want %v", late, want)
	}
	event("g0") // within the interval of f1's line: held
	clock.Advance(500 * time.Millisecond)
	if n, ok := l.Allow("a"); ok {
		t.Fatalf("Allow within the interval: %d, %v", n, ok)
	}
	clock.Advance(500 * time.Millisecond)
	if want := []string{"e12:12", "f1:1", "g0:2"}; !slices.Equal(late, want) {
		t.Fatalf("late lines %v; want %v", late, want)
	}
}
