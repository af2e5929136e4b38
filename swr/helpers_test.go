package swr_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/swr"
)

// testOrigin is a real HTTP origin. It answers with the status the test
// sets (200 by default) and, for 200, a body naming the call that made it:
// "<key>#<call>", so a test can tell one fill from the next.
type testOrigin struct {
	*httptest.Server
	calls  atomic.Int64
	status atomic.Int64
}

func newTestOrigin(t *testing.T) *testOrigin {
	t.Helper()
	o := &testOrigin{}
	o.status.Store(http.StatusOK)
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := o.calls.Add(1)
		status := int(o.status.Load())
		w.WriteHeader(status)
		if status == http.StatusOK {
			fmt.Fprintf(w, "%s#%d", r.URL.Path[1:], n)
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// testFiller is a Filler over a real store, with the loader "k:" on an
// origin, and the metrics it feeds.
type testFiller struct {
	*swr.Filler
	store   *engine.Store
	loaders *loader.Registry
	m       *metrics.Fill
}

// newTestFiller returns a Filler with opts, its Store, Loaders and Metrics
// filled in: a new store on opts.Now, and the loader "k:" on originURL.
func newTestFiller(t *testing.T, originURL string, opts swr.Options) *testFiller {
	t.Helper()
	return newTestFillerOn(t, newTestStore(t, opts.Now), originURL, opts)
}

// newTestStore returns a store on the clock now (nil: the real one).
func newTestStore(t *testing.T, now func() time.Time) *engine.Store {
	t.Helper()
	store, err := engine.New(engine.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store
}

// newTestFillerOn is newTestFiller on a given store.
func newTestFillerOn(t *testing.T, store *engine.Store, originURL string, opts swr.Options) *testFiller {
	t.Helper()
	loaders := loader.NewRegistry(loader.Options{})
	if err := loaders.Register(loader.Config{Prefix: "k:", URL: originURL + "/{key}"}); err != nil {
		t.Fatal(err)
	}
	opts.Store, opts.Loaders, opts.Metrics = store, loaders, metrics.New().Fill
	return &testFiller{Filler: swr.New(opts), store: store, loaders: loaders, m: opts.Metrics}
}
