package origin

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// start serves an Origin made from opts on an ephemeral loopback port.
func start(t *testing.T, opts Options) (*Origin, *httptest.Server) {
	t.Helper()
	o, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	return o, srv
}

// get sends a GET with the given headers (pairs) and returns status,
// body and the response's ETag.
func get(t *testing.T, url string, headers ...string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp.Header.Get("ETag")
}

// fixedClock is a clock the test moves by hand.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fixedClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestKeyFromHeaderQueryOrPath(t *testing.T) {
	clock := &fixedClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	_, srv := start(t, Options{Now: clock.Now})
	want := func(key string) string { return Value(key, 1, clock.now) }
	for _, tc := range []struct {
		name    string
		path    string
		headers []string
		key     string
	}{
		{"path", "/demo:1", nil, "demo:1"},
		{"escaped path", "/users/a%20b", nil, "users/a b"},
		{"query", "/?key=demo:2", nil, "demo:2"},
		// The header wins over the path, so the loader URL's shape does
		// not matter, and a key may even be called "stats".
		{"header", "/anything", []string{"X-Stampedeless-Key", "stats"}, "stats"},
		{"percent header", "/x", []string{"X-Stampedeless-Key", "%20padded%0A", "X-Stampedeless-Key-Encoding", "percent"}, " padded\n"},
	} {
		status, body, _ := get(t, srv.URL+tc.path, tc.headers...)
		if status != http.StatusOK || body != want(tc.key) {
			t.Errorf("%s: %d %q, want 200 %q", tc.name, status, body, want(tc.key))
		}
	}
	if status, _, _ := get(t, srv.URL+"/"); status != http.StatusBadRequest {
		t.Errorf("GET / = %d, want 400", status)
	}
}

// TestETagAndVersions: with ETag on, a matching If-None-Match gets 304 until
// the value's version changes.
func TestETagAndVersions(t *testing.T) {
	clock := &fixedClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	o, srv := start(t, Options{ETag: true, ChangeEvery: time.Minute, Now: clock.Now})
	status, body, etag := get(t, srv.URL+"/k")
	if status != http.StatusOK || etag != `W/"v1"` || !strings.Contains(body, "version 1") {
		t.Fatalf("first GET: %d %q etag %q", status, body, etag)
	}
	for _, inm := range []string{`W/"v1"`, `"v1"`, `"v0", W/"v1"`, `*`} {
		if status, body, _ := get(t, srv.URL+"/k", "If-None-Match", inm); status != http.StatusNotModified || body != "" {
			t.Errorf("If-None-Match %s: %d %q, want 304 and no body", inm, status, body)
		}
	}
	clock.add(time.Minute)
	status, body, etag = get(t, srv.URL+"/k", "If-None-Match", `W/"v1"`)
	if status != http.StatusOK || etag != `W/"v2"` || !strings.Contains(body, "version 2") {
		t.Fatalf("after a change: %d %q etag %q, want 200 version 2", status, body, etag)
	}
	if s := o.Stats(); s.Calls != 6 || s.OK != 2 || s.NotModified != 4 {
		t.Fatalf("stats %+v", s)
	}

	// Without ETag on, If-None-Match is ignored and no ETag is sent.
	_, plain := start(t, Options{})
	if status, _, etag := get(t, plain.URL+"/k", "If-None-Match", "*"); status != http.StatusOK || etag != "" {
		t.Fatalf("ETag off: %d etag %q", status, etag)
	}
}

func TestFailuresAndNotFound(t *testing.T) {
	o, srv := start(t, Options{FailureRate: 1})
	if status, _, _ := get(t, srv.URL+"/k"); status != http.StatusServiceUnavailable {
		t.Fatalf("failure rate 1: %d, want 503", status)
	}
	if s := o.Stats(); s.Failures != 1 || s.Calls != 1 {
		t.Fatalf("stats %+v", s)
	}

	o, srv = start(t, Options{NotFoundPrefix: "missing:"})
	if status, _, _ := get(t, srv.URL+"/missing:1"); status != http.StatusNotFound {
		t.Fatalf("not-found prefix: %d, want 404", status)
	}
	if status, _, _ := get(t, srv.URL+"/present:1"); status != http.StatusOK {
		t.Fatalf("other key: %d, want 200", status)
	}
	if s := o.Stats(); s.NotFound != 1 || s.OK != 1 {
		t.Fatalf("stats %+v", s)
	}

	for _, bad := range []Options{{FailureRate: -0.1}, {FailureRate: 1.5}, {Latency: -time.Second}} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted", bad)
		}
	}
}

// TestInFlightStatsAndReset holds calls open with a latency longer than the
// test and waits on the in-flight count, so no timing is assumed.
func TestInFlightStatsAndReset(t *testing.T) {
	o, srv := start(t, Options{Latency: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	const n = 5
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	testwait.For(t, "every client in flight", func() bool { return o.Stats().InFlight == n })

	var s Stats
	resp, err := http.Get(srv.URL + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s.Calls != n || s.InFlight != n || s.MaxInFlight != n {
		t.Fatalf("/stats during %d calls: %+v", n, s)
	}

	cancel()
	wg.Wait()
	testwait.For(t, "no request in flight", func() bool { return o.Stats().InFlight == 0 })
	if s := o.Stats(); s.Canceled != n || s.MaxInFlight != n || s.OK != 0 {
		t.Fatalf("after the clients left: %+v", s)
	}

	if status, _, _ := get(t, srv.URL+"/reset"); status != http.StatusMethodNotAllowed {
		t.Fatalf("GET /reset = %d, want 405", status)
	}
	resp, err = http.Post(srv.URL+"/reset", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := o.Stats(); s != (Stats{}) {
		t.Fatalf("after POST /reset: %+v", s)
	}
	if status, body, _ := get(t, srv.URL+"/healthz"); status != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz: %d %q", status, body)
	}
}
