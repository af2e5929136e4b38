package swr

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
)

// TestLateWaitersDoNotReload: callers whose Start decided to load, but whose
// Wait begins after that key's flight has ended (as on the event loop, which
// hands the wait to a goroutine), take the flight's answer: a "no such key"
// or a failure in its cooldown is not fetched again.
func TestLateWaitersDoNotReload(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var calls atomic.Int64
			origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				w.WriteHeader(status)
			}))
			defer origin.Close()
			store, err := engine.New(engine.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			loaders := loader.NewRegistry(loader.Options{})
			if err := loaders.Register(loader.Config{Prefix: "k:", URL: origin.URL + "/{key}"}); err != nil {
				t.Fatal(err)
			}
			f := New(Options{Store: store, Loaders: loaders})
			req := Request{Key: "k:1", TTL: time.Minute, Timeout: -1}
			_, first, err := f.Start(req)
			if first == nil || err != nil {
				t.Fatalf("Start of a missing key: pending %v, err %v", first, err)
			}
			_, late, _ := f.Start(req)
			if late == nil {
				t.Fatal("the second Start did not ask to load either")
			}
			ctx := context.Background()
			ans1, err1 := first.Wait(ctx)
			ans2, err2 := late.Wait(ctx)
			if n := calls.Load(); n != 1 {
				t.Errorf("origin calls = %d, want 1", n)
			}
			if ans1.Found || ans2.Found || (err1 == nil) != (err2 == nil) {
				t.Errorf("answers differ: %+v %v / %+v %v", ans1, err1, ans2, err2)
			}
			var oe *loader.OriginError
			if status != http.StatusNotFound && !errors.As(err2, &oe) {
				t.Errorf("late waiter's error = %v, want the origin's failure", err2)
			}
		})
	}
}
