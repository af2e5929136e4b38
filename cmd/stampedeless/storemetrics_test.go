package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/metrics"
)

func TestStoreMetrics(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r := metrics.New()
	registerStoreMetrics(r, store)
	store.Set([]byte("k"), []byte("v"), engine.SetOptions{})
	store.Get([]byte("k"))
	store.Get([]byte("missing"))

	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		"stampedeless_keys 1",
		"stampedeless_keyspace_hits_total 1",
		"stampedeless_keyspace_misses_total 1",
		"stampedeless_memory_max_bytes 1.048576e+06",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
