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
	waitFor(t, "the clock to tick", func() bool { return c.Nanos() != start })
}

// waitFor polls cond every Resolution until it holds, for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
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

// waitForSleep waits for c's goroutine to sleep, without reading c.
func waitForSleep(t *testing.T, c *Clock) {
	t.Helper()
	waitFor(t, "the unread clock's goroutine to sleep", func() bool { return c.state.Load() == sleeping })
}

// Unread, the clock's goroutine sleeps. A reader then gets a reading of
// its own, not the one the goroutine stopped at; one reader alone (a
// timer's, now and then) leaves it asleep, and readers coming often wake
// it.
func TestSleepsUnread(t *testing.T) {
	c := New()
	defer c.Stop()
	waitForSleep(t, c)
	wakes := c.wakes.Load()
	time.Sleep(20 * Resolution)
	if got := c.wakes.Load(); got != wakes {
		t.Fatalf("asleep, the goroutine woke %d times", got-wakes)
	}
	before := time.Now().UnixNano()
	if got := c.Nanos(); got < before {
		t.Fatalf("the first read after a sleep = %d, before it began %d: the stale reading", got, before)
	}
	if c.state.Load() != sleeping {
		t.Fatal("one reader woke the sleeping goroutine")
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.state.Load() == sleeping {
		if time.Now().After(deadline) {
			t.Fatal("readers reading without a pause did not wake the goroutine in 10 s")
		}
		c.Nanos()
	}
	waitFor(t, "the woken goroutine to look", func() bool { return c.wakes.Load() != wakes })
}

// Many readers at once wake a sleeping clock once, and none blocks.
func TestManyWakeASleepingClock(t *testing.T) {
	c := New()
	defer c.Stop()
	for range 3 {
		waitForSleep(t, c)
		before := time.Now().UnixNano()
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got := c.Now().UnixNano(); got < before {
					t.Errorf("a reader of the woken clock got %d, before the wake %d", got, before)
				}
			}()
		}
		wg.Wait()
	}
}

// A stopped clock still answers readers, asleep or not.
func TestReadAfterStopWhileAsleep(t *testing.T) {
	c := New()
	waitForSleep(t, c)
	c.Stop()
	before := time.Now().UnixNano()
	if c.Nanos() < before || c.Nanos() < before {
		t.Fatal("a stopped clock that slept did not take a reading for its reader")
	}
}
