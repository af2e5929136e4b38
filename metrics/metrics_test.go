package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRegistryServesCommandAndFillMetrics(t *testing.T) {
	r := New()
	r.Commands.WithLabelValues("get", "ok").Add(2)
	r.Fill.Answer("user:", "fresh")
	r.Gauge("test_gauge", "A gauge read at each scrape.", func() float64 { return 7 })

	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`stampedeless_commands_total{command="get",result="ok"} 2`,
		`stampedeless_fill_answers_total{kind="fresh",loader="user:"} 1`,
		"stampedeless_test_gauge 7",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if v := Value(r.Commands.WithLabelValues("get", "ok")); v != 2 {
		t.Errorf("Value = %v, want 2", v)
	}
}
