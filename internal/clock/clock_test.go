package clock

import (
	"runtime"
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
	waitForTick(t, c)
}

// waitForTick waits for c to move with no reader asking, for up to 10 s.
func waitForTick(t *testing.T, c *Clock) {
	t.Helper()
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

// While another goroutine keeps the clock fresh, the Clock's own goroutine
// rests: it wakes far less often than once a Resolution, as it does
// alone.
func TestRestsWhileKept(t *testing.T) {
	c := New()
	defer c.Stop()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				c.Read()
				runtime.Gosched()
			}
		}
	}()
	const span = 300 * time.Millisecond
	before := c.wakes.Load()
	time.Sleep(span)
	kept := c.wakes.Load() - before
	close(stop)
	<-done
	// Alone it would take span/Resolution = 300; resting, span/restWhileKept = 30.
	if limit := int64(span / Resolution / 2); kept > limit {
		t.Fatalf("the goroutine woke %d times in %v while another kept the clock, want at most %d", kept, span, limit)
	}
	waitForTick(t, c) // left alone again, it ticks
}
