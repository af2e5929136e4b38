package clock

import (
	"sync"
	"testing"
	"time"
)

func TestReadIsTheSystemClock(t *testing.T) {
	c := New()
	defer c.Stop()
	before := time.Now().UnixNano()
	got := c.Read()
	after := time.Now().UnixNano()
	if got < before || got > after {
		t.Fatalf("Read = %d, want within [%d, %d]", got, before, after)
	}
	if c.Nanos() < got || c.Now().UnixNano() < got {
		t.Fatalf("after Read %d: Nanos %d, Now %d", got, c.Nanos(), c.Now().UnixNano())
	}
}

// The clock's goroutine moves it with no reader asking.
func TestTicks(t *testing.T) {
	c := New()
	defer c.Stop()
	start := c.Nanos()
	deadline := time.Now().Add(10 * time.Second)
	for c.Nanos() == start {
		if time.Now().After(deadline) {
			t.Fatal("the clock did not tick in 10 s")
		}
		time.Sleep(Resolution)
	}
}

// Readings stored by many goroutines at once never move the clock back.
func TestNeverRunsBack(t *testing.T) {
	c := New()
	defer c.Stop()
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := c.Nanos()
			for range 20000 {
				c.Read()
				now := c.Nanos()
				if now < last {
					errs <- "the clock ran back"
					return
				}
				last = now
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// A reading far behind the clock (the system clock stepped back) is
// followed; one a little behind (another goroutine's, stored late) is not.
func TestFollowsAStepBack(t *testing.T) {
	c := New()
	c.Stop()
	ahead := time.Now().Add(time.Hour).UnixNano()
	c.nanos.Store(ahead)
	if got := c.Read(); got >= ahead {
		t.Fatalf("an hour ahead, Read = %d: the clock did not follow the system clock back", got)
	}
	slightly := time.Now().Add(stepBack / 2).UnixNano()
	c.nanos.Store(slightly)
	if got := c.Read(); got != slightly {
		t.Fatalf("half a step ahead, Read = %d, want the later reading %d kept", got, slightly)
	}
}

func TestStopTwice(t *testing.T) {
	c := New()
	c.Stop()
	c.Stop()
	if c.Read() == 0 {
		t.Fatal("Read after Stop")
	}
}
