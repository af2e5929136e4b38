package main

import "testing"

// TestParseCSVNames: redis-benchmark's LRANGE tests are named by their
// first word, and the LPUSH it runs to fill their list is not taken for
// the LPUSH test's result.
func TestParseCSVNames(t *testing.T) {
	out := []byte(`"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"LPUSH","19607.84","1.466","0.168","0.831","3.655","9.343","9.575"
"LPUSH (needed to benchmark LRANGE)","25000.00","1.035","0.160","0.711","2.831","3.775","3.935"
"LRANGE_100 (first 100 elements)","18867.92","1.043","0.288","0.847","2.735","9.031","9.175"
`)
	got, err := parseCSV(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := got["LPUSH"]; s.rps != 19607.84 {
		t.Errorf("LPUSH rps = %v, want the LPUSH test's 19607.84", s.rps)
	}
	if s := got["LRANGE_100"]; s.rps != 18867.92 || s.p99 != 9.031 {
		t.Errorf("LRANGE_100 = %+v", s)
	}
	if len(got) != 2 {
		t.Errorf("parsed %d tests, want 2: %v", len(got), got)
	}
}
