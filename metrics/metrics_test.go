package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/engine"
)

func TestRegistryServesStoreAndCommandMetrics(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r := New()
	r.Store(store)
	store.Set([]byte("k"), []byte("v"), engine.SetOptions{})
	store.Get([]byte("k"))
	store.Get([]byte("missing"))
	r.Commands.WithLabelValues("get", "ok").Add(2)
	r.Fill.Answer("user:", "fresh")

	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`stampedeless_commands_total{command="get",result="ok"} 2`,
		"stampedeless_keys 1",
		"stampedeless_keyspace_hits_total 1",
		"stampedeless_keyspace_misses_total 1",
		"stampedeless_memory_max_bytes 1.048576e+06",
		`stampedeless_fill_answers_total{kind="fresh",loader="user:"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if v := Value(r.Commands.WithLabelValues("get", "ok")); v != 2 {
		t.Errorf("Value = %v, want 2", v)
	}
}
