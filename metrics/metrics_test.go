package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"sync"
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

// Answer counts every pair on its own counter whether a pair repeats (the
// last pair's shortcut) or pairs alternate, from many goroutines at once.
func TestAnswerCountsEachPair(t *testing.T) {
	f := New().Fill
	pairs := [][2]string{{"a:", "fresh"}, {"a:", "fresh"}, {"b:", "fresh"}, {"a:", "stale"}, {"a:", "fresh"}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 250 {
				for _, p := range pairs {
					f.Answer(p[0], p[1])
				}
			}
		}()
	}
	wg.Wait()
	for _, want := range []struct {
		loader, kind string
		n            float64
	}{{"a:", "fresh", 3000}, {"b:", "fresh", 1000}, {"a:", "stale", 1000}, {"b:", "stale", 0}} {
		if got := Value(f.Answers.WithLabelValues(want.loader, want.kind)); got != want.n {
			t.Errorf("answers{%s,%s} = %v, want %v", want.loader, want.kind, got, want.n)
		}
	}
}
