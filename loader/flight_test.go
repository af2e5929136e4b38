package loader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu      sync.Mutex
	flights []int // callers per finished flight
	waits   int   // Waited calls
	joined  int   // of those, joined a flight someone else started
	joins   int   // Joined calls
}

func (r *recorder) Joined(key string) {
	r.mu.Lock()
	r.joins++
	r.mu.Unlock()
}

func (r *recorder) FlightDone(key string, callers int, d time.Duration, err error) {
	r.mu.Lock()
	r.flights = append(r.flights, callers)
	r.mu.Unlock()
}

func (r *recorder) Waited(key string, d time.Duration, joined bool, err error) {
	r.mu.Lock()
	r.waits++
	if joined {
		r.joined++
	}
	r.mu.Unlock()
}

func (r *recorder) snapshot() (flights []int, waits, joined int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.flights...), r.waits, r.joined
}

// gatedLoader returns a loader on an origin that answers "value of <key>"
// once g opens.
func gatedLoader(t *testing.T, g *gate) (*origin, *Loader) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		g.wait(r)
		fmt.Fprint(w, "value of ", r.Header.Get(KeyHeader))
	})
	return o, mustRegister(t, newRegistry(t, Options{}), Config{URL: o.URL + "/{key}", Timeout: 20 * time.Second})
}

// fetchFn is a LoadFunc that fetches key from l.
func fetchFn(l *Loader, key string) LoadFunc {
	return func(ctx context.Context) (Result, error) { return l.Fetch(ctx, key, Validators{}) }
}

type outcome struct {
	res    Result
	err    error
	joined bool
}

func TestDoCoalesces(t *testing.T) {
	const callers = 300
	gt := newGate(t)
	o, l := gatedLoader(t, gt)
	rec := &recorder{}
	g := &Group{Observer: rec}
	ctx := longCtx(t)

	out := make(chan outcome, callers)
	for range callers {
		go func() {
			res, err, joined := g.Do(ctx, "hot", fetchFn(l, "hot"))
			out <- outcome{res, err, joined}
		}()
	}
	testwait.For(t, "all callers waiting on one flight", func() bool { return g.Waiters("hot") == callers })
	testwait.For(t, "the flight reaching the origin", func() bool { return o.calls.Load() == 1 })
	// Joiners are counted while the load still runs, not when it ends.
	rec.mu.Lock()
	joins := rec.joins
	rec.mu.Unlock()
	if joins != callers-1 {
		t.Errorf("Joined calls while the load runs = %d, want %d", joins, callers-1)
	}
	gt.open()

	leaders := 0
	for range callers {
		o := <-out
		if o.err != nil || !o.res.Found || string(o.res.Value) != "value of hot" {
			t.Fatalf("caller got %+v, %v", o.res, o.err)
		}
		if !o.joined {
			leaders++
		}
	}
	if n := o.calls.Load(); n != 1 {
		t.Errorf("origin calls = %d for %d concurrent callers, want 1", n, callers)
	}
	if leaders != 1 {
		t.Errorf("%d callers started a flight, want 1", leaders)
	}
	// The coalescing is visible from the outside: 1 fill and K-1 joined waits.
	testwait.For(t, "FlightDone", func() bool { f, _, _ := rec.snapshot(); return len(f) == 1 })
	flights, waits, joined := rec.snapshot()
	if flights[0] != callers || waits != callers || joined != callers-1 {
		t.Errorf("observer: flights %v, waits %d, joined %d; want [%d], %d, %d", flights, waits, joined, callers, callers, callers-1)
	}
	if g.InFlight("hot") || g.Waiters("hot") != 0 {
		t.Error("the flight is still registered after it ended")
	}
}

func TestDoKeysInParallel(t *testing.T) {
	const keys = 100
	const latency = 200 * time.Millisecond
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(latency) // the origin's latency
		fmt.Fprint(w, r.Header.Get(KeyHeader))
	})
	l := mustRegister(t, newRegistry(t, Options{}), Config{URL: o.URL + "/{key}"})
	var g Group
	ctx := longCtx(t)

	start := time.Now()
	var wg sync.WaitGroup
	for i := range keys {
		key := fmt.Sprint("key", i)
		wg.Go(func() {
			res, err, _ := g.Do(ctx, key, fetchFn(l, key))
			if err != nil || string(res.Value) != key {
				t.Errorf("Do(%s) = %q, %v", key, res.Value, err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d keys with a %v origin answered in %v", keys, latency, elapsed)
	if elapsed > 5*time.Second {
		t.Errorf("%d keys took %v: keys waited for each other (serial would be %v)", keys, elapsed, keys*latency)
	}
	if n := o.calls.Load(); n != keys {
		t.Errorf("origin calls = %d, want %d", n, keys)
	}
	if p := o.peak.Load(); p < 2 {
		t.Errorf("origin never served two calls at once")
	}
}

func TestDoCallerTimeout(t *testing.T) {
	gt := newGate(t)
	o, l := gatedLoader(t, gt)
	var g Group
	var store sync.Map // what the flight stores, as swr would
	var loadCtxErr atomic.Value
	fn := func(ctx context.Context) (Result, error) {
		res, err := l.Fetch(ctx, "k", Validators{})
		loadCtxErr.Store(fmt.Sprint(ctx.Err()))
		if err == nil {
			store.Store("k", string(res.Value))
		}
		return res, err
	}

	// The leader gives up after 50ms; it gets ErrCallerTimeout at once.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err, joined := g.Do(short, "k", fn)
	if !errors.Is(err, ErrCallerTimeout) || !errors.Is(err, context.DeadlineExceeded) || joined {
		t.Fatalf("short caller: err %v, joined %v; want ErrCallerTimeout wrapping DeadlineExceeded, leader", err, joined)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("short caller returned after %v", d)
	}
	// ...and the flight it started goes on without it.
	if !g.InFlight("k") {
		t.Fatal("the flight ended with its leader")
	}
	if g.Waiters("k") != 0 {
		t.Errorf("Waiters = %d, want 0: the leader left", g.Waiters("k"))
	}

	// Fail-fast: a caller with no time at all joins, and leaves at once.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err, joined := g.Do(done, "k", fn); !errors.Is(err, ErrCallerTimeout) || !errors.Is(err, context.Canceled) || !joined {
		t.Errorf("fail-fast caller: err %v, joined %v", err, joined)
	}

	// A patient caller joins the same flight and gets its value.
	got := make(chan outcome, 1)
	go func() {
		res, err, joined := g.Do(longCtx(t), "k", fn)
		got <- outcome{res, err, joined}
	}()
	testwait.For(t, "the second caller to join", func() bool { return g.Waiters("k") == 1 })
	gt.open()
	r := <-got
	if r.err != nil || string(r.res.Value) != "value of k" || !r.joined {
		t.Fatalf("patient caller: %+v", r)
	}
	if v, _ := store.Load("k"); v != "value of k" {
		t.Errorf("stored %v, want the flight's value", v)
	}
	if e := loadCtxErr.Load(); e != "<nil>" {
		t.Errorf("the flight's ctx ended (%v) with its leader's", e)
	}
	if n := o.calls.Load(); n != 1 {
		t.Errorf("origin calls = %d, want 1", n)
	}

	// Without a flight, a fail-fast caller still starts one: ask, answer at once.
	_, err, joined = g.Do(done, "cold", func(context.Context) (Result, error) {
		store.Store("cold", "filled")
		return Result{Found: true}, nil
	})
	if !errors.Is(err, ErrCallerTimeout) && err != nil {
		t.Errorf("fail-fast on a cold key: %v", err)
	}
	testwait.For(t, "the fail-fast caller's flight to store", func() bool { _, ok := store.Load("cold"); return ok })
}

func TestDoPanic(t *testing.T) {
	const callers = 10
	var g Group
	release := make(chan struct{})
	var runs atomic.Int64
	panicky := func(context.Context) (Result, error) {
		runs.Add(1)
		<-release
		panic("boom\r\n-ERR forged")
	}
	ctx := longCtx(t)
	errs := make(chan error, callers)
	for range callers {
		go func() {
			_, err, _ := g.Do(ctx, "k", panicky)
			errs <- err
		}()
	}
	testwait.For(t, "callers waiting", func() bool { return g.Waiters("k") == callers })
	close(release)
	for range callers {
		err := <-errs
		var pe *PanicError
		if !errors.Is(err, ErrPanic) || !errors.As(err, &pe) {
			t.Fatalf("caller of a panicking flight got %v, want ErrPanic", err)
		}
		if !bytes.Contains(pe.Stack, []byte("TestDoPanic")) || strings.ContainsAny(err.Error(), "\r\n") {
			t.Errorf("PanicError: stack %d bytes, message %q", len(pe.Stack), err.Error())
		}
	}
	if g.InFlight("k") {
		t.Fatal("the panicked flight wedged the key")
	}

	// The next Do for the key starts a new flight.
	res, err, joined := g.Do(ctx, "k", func(context.Context) (Result, error) {
		runs.Add(1)
		return Result{Value: []byte("ok"), Found: true}, nil
	})
	if err != nil || string(res.Value) != "ok" || joined || runs.Load() != 2 {
		t.Errorf("Do after a panic = %q, %v, joined %v, runs %d", res.Value, err, joined, runs.Load())
	}

	// runtime.Goexit in fn (t.FailNow, say) ends the flight the same way.
	_, err, _ = g.Do(ctx, "k", func(context.Context) (Result, error) {
		runtime.Goexit()
		return Result{}, nil
	})
	if !errors.Is(err, ErrPanic) || g.InFlight("k") {
		t.Errorf("Goexit in fn: %v, in flight %v", err, g.InFlight("k"))
	}
	// A panic with an error keeps it matchable.
	_, err, _ = g.Do(ctx, "k", func(context.Context) (Result, error) { panic(context.Canceled) })
	if !errors.Is(err, ErrPanic) || !errors.Is(err, context.Canceled) {
		t.Errorf("panic(context.Canceled): %v", err)
	}
}

// Every caller of a failed flight gets the failure, and the flight is gone
// before any of them wakes, so a retry starts a new one.
func TestDoFailure(t *testing.T) {
	gt := newGate(t)
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		gt.wait(r)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	l := mustRegister(t, newRegistry(t, Options{}), Config{Prefix: "p:", URL: o.URL + "/{key}"})
	var g Group
	const callers = 50
	ctx := longCtx(t)
	type seen struct {
		err      error
		inFlight bool
	}
	out := make(chan seen, callers)
	for range callers {
		go func() {
			_, err, _ := g.Do(ctx, "p:k", fetchFn(l, "p:k"))
			out <- seen{err, g.InFlight("p:k")}
		}()
	}
	testwait.For(t, "callers waiting", func() bool { return g.Waiters("p:k") == callers })
	gt.open()
	for range callers {
		s := <-out
		wantOriginErr(t, s.err, "p:", "status 503")
		if s.inFlight {
			t.Fatal("a caller woke while its failed flight was still registered")
		}
	}
	if n := o.calls.Load(); n != 1 {
		t.Errorf("origin calls = %d, want 1", n)
	}
}

func TestGoAndForget(t *testing.T) {
	var g Group
	release := make(chan struct{})
	var runs atomic.Int64
	fn := func(context.Context) (Result, error) {
		n := runs.Add(1)
		<-release
		return Result{Value: []byte(fmt.Sprint("run", n)), Found: true}, nil
	}
	if !g.Go(context.Background(), "k", fn) {
		t.Fatal("Go on an idle key did not start a flight")
	}
	if g.Go(context.Background(), "k", fn) {
		t.Fatal("Go started a second flight for the same key")
	}
	ctx := longCtx(t)
	first := make(chan outcome, 1)
	go func() {
		res, err, joined := g.Do(ctx, "k", fn)
		first <- outcome{res, err, joined}
	}()
	testwait.For(t, "a caller to join the background flight", func() bool { return g.Waiters("k") == 1 })

	// After Forget, newcomers start their own flight; the old one's callers
	// still get its result.
	g.Forget("k")
	second := make(chan outcome, 1)
	go func() {
		res, err, joined := g.Do(ctx, "k", fn)
		second <- outcome{res, err, joined}
	}()
	testwait.For(t, "the new flight", func() bool { return runs.Load() == 2 })
	close(release)
	a, b := <-first, <-second
	if !a.joined || b.joined || a.err != nil || b.err != nil || bytes.Equal(a.res.Value, b.res.Value) {
		t.Errorf("old flight's caller %+v, new flight's caller %+v", a, b)
	}
	testwait.For(t, "both flights to end", func() bool { return !g.InFlight("k") })
}

// A call that joins a flight started by Go knows it joined a background
// one (a call that joins Do's flight does not), and Leave takes it out of
// the flight's waiters without ending the flight.
func TestJoinBackgroundAndLeave(t *testing.T) {
	var g Group
	release := make(chan struct{})
	fn := func(context.Context) (Result, error) {
		<-release
		return Result{Value: []byte("v"), Found: true}, nil
	}
	ctx := longCtx(t)
	g.Go(ctx, "bg", fn)
	call := g.Join(ctx, "bg", fn)
	if !call.Joined() || !call.Background() || g.Waiters("bg") != 1 {
		t.Fatalf("joined %v, background %v, waiters %d; want true, true, 1", call.Joined(), call.Background(), g.Waiters("bg"))
	}
	call.Leave()
	if g.Waiters("bg") != 0 || !g.InFlight("bg") {
		t.Fatalf("after Leave: waiters %d, in flight %v; want 0, true", g.Waiters("bg"), g.InFlight("bg"))
	}
	first := g.Join(ctx, "fg", fn)
	second := g.Join(ctx, "fg", fn)
	if first.Background() || second.Background() {
		t.Fatal("a flight started by Join is background")
	}
	close(release)
	if _, err := second.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := first.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the flights to end", func() bool { return !g.InFlight("bg") && !g.InFlight("fg") })
}
