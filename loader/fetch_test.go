package loader

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// wantOriginErr checks that err is an OriginError from loader prefix whose
// reason contains want and has no line break.
func wantOriginErr(t *testing.T, err error, prefix, want string) {
	t.Helper()
	var oe *OriginError
	if !errors.Is(err, ErrOrigin) || !errors.As(err, &oe) {
		t.Fatalf("err = %v, want an OriginError", err)
	}
	if oe.Loader != prefix || !strings.Contains(oe.Reason, want) {
		t.Errorf("OriginError = {Loader: %q, Reason: %q}, want {%q, ...%q...}", oe.Loader, oe.Reason, prefix, want)
	}
	if strings.ContainsAny(oe.Reason, "\r\n") || strings.ContainsAny(err.Error(), "\r\n") {
		t.Errorf("reason has a line break: %q", oe.Reason)
	}
}

func TestFetchStatuses(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch key := r.Header.Get(KeyHeader); key {
		case "found":
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
			fmt.Fprint(w, "hello")
		case "empty":
			w.WriteHeader(http.StatusOK)
		case "redirect":
			if r.URL.Path == "/elsewhere" {
				fmt.Fprint(w, "moved")
				return
			}
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "loop":
			http.Redirect(w, r, "/again", http.StatusFound)
		case "forged":
			// An origin's text must not reach a reply, least of all a line
			// break that would forge another RESP reply.
			http.Error(w, "oops\r\n-ERR forged\r\n", http.StatusInternalServerError)
		default:
			var code int
			fmt.Sscanf(key, "%d", &code)
			w.WriteHeader(code)
		}
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "", URL: o.URL + "/{key}"})
	ctx := context.Background()

	res, err := l.Fetch(ctx, "found", Validators{})
	if err != nil || !res.Found || res.NotModified || string(res.Value) != "hello" ||
		res.ETag != `"v1"` || res.LastModified != "Wed, 21 Oct 2015 07:28:00 GMT" {
		t.Errorf("200: %+v, %v", res, err)
	}
	res, err = l.Fetch(ctx, "empty", Validators{})
	if err != nil || !res.Found || len(res.Value) != 0 {
		t.Errorf("empty 200: %+v, %v; want found, empty", res, err)
	}
	for _, key := range []string{"404", "410"} {
		res, err := l.Fetch(ctx, key, Validators{})
		if err != nil || res.Found || res.Value != nil {
			t.Errorf("%s: %+v, %v; want not found, no error", key, res, err)
		}
	}
	// A redirect to an allowed address (here the same origin) is followed
	// within the load.
	res, err = l.Fetch(ctx, "redirect", Validators{})
	if err != nil || !res.Found || string(res.Value) != "moved" {
		t.Errorf("redirect: %+v, %v; want the redirect target's value", res, err)
	}
	for key, reason := range map[string]string{
		"500":    "status 500",
		"503":    "status 503",
		"204":    "status 204",
		"429":    "status 429",
		"forged": "status 500",
		"loop":   "stopped after 5 redirects",
	} {
		_, err := l.Fetch(ctx, key, Validators{})
		wantOriginErr(t, err, "", reason)
	}
	// 11 fetches: "redirect" took two requests and "loop" six.
	if got := o.calls.Load(); got != 11+1+5 {
		t.Errorf("origin calls = %d, want 17", got)
	}
	st := l.Stats()
	if st != (Stats{Fills: 11, Found: 3, NotFound: 2, Failures: 6}) {
		t.Errorf("Stats() = %+v", st)
	}
}

func TestFetchTimeout(t *testing.T) {
	g := newGate(t)
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) { g.wait(r) })
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "slow:", URL: o.URL + "/{key}", Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := l.Fetch(context.Background(), "slow:1", Validators{})
	wantOriginErr(t, err, "slow:", "timeout after 100ms")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Fetch with a 100ms timeout took %v", d)
	}
	if l.Stats().InFlight != 0 {
		t.Errorf("InFlight = %d after the timeout", l.Stats().InFlight)
	}
}

// The caller's context must never become the load's deadline: the load
// belongs to everyone waiting for the key.
func TestFetchIgnoresCallerCancellation(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond) // the origin's latency
		fmt.Fprint(w, "v")
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{URL: o.URL + "/{key}"})

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	short, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	for name, ctx := range map[string]context.Context{"cancelled": cancelled, "10ms deadline": short} {
		res, err := l.Fetch(ctx, "k", Validators{})
		if err != nil || string(res.Value) != "v" {
			t.Errorf("Fetch with a %s caller ctx = %+v, %v; want the value", name, res, err)
		}
	}
}

func TestFetchConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "p:", URL: "http://" + addr + "/{key}"})
	_, err = l.Fetch(context.Background(), "p:1", Validators{})
	wantOriginErr(t, err, "p:", "connection refused")
}

func TestFetchBodyLimit(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		var n int
		chunked := strings.HasPrefix(r.URL.Path, "/chunked/")
		fmt.Sscanf(strings.TrimLeft(r.Header.Get(KeyHeader), "c"), "%d", &n)
		body := strings.Repeat("x", n)
		if chunked {
			// Flushing before the body forces chunked encoding: no
			// Content-Length to refuse early on.
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
		} else {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		}
		fmt.Fprint(w, body)
	})
	r := newRegistry(t, Options{MaxValueSize: 1024})
	plain := mustRegister(t, r, Config{Prefix: "", URL: o.URL + "/{key}"})
	chunked := mustRegister(t, r, Config{Prefix: "c", URL: o.URL + "/chunked/{key}"})
	ctx := context.Background()
	for _, l := range []*Loader{plain, chunked} {
		key := l.Prefix()
		res, err := l.Fetch(ctx, key+"1024", Validators{})
		if err != nil || len(res.Value) != 1024 {
			t.Errorf("%q: body at the limit: %d bytes, %v", key, len(res.Value), err)
		}
		_, err = l.Fetch(ctx, key+"1025", Validators{})
		wantOriginErr(t, err, key, "body over 1kb")
		_, err = l.Fetch(ctx, key+"100000", Validators{})
		wantOriginErr(t, err, key, "body over 1kb")
	}
	// The default limit is Redis's, and says so in Redis's words.
	if got := formatSize(DefaultMaxValueSize); got != "512mb" {
		t.Errorf("formatSize(DefaultMaxValueSize) = %q", got)
	}
	for n, want := range map[int64]string{100: "100b", 1 << 10: "1kb", 1536: "1536b", 3 << 30: "3gb"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFetchURLAndKeyHeader(t *testing.T) {
	type seen struct{ path, query, key, encoding, ua string }
	var mu sync.Mutex
	var last seen
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		last = seen{r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get(KeyHeader), r.Header.Get(KeyEncodingHeader), r.UserAgent()}
		mu.Unlock()
		fmt.Fprint(w, "ok")
	})
	r := newRegistry(t, Options{})
	for _, tc := range []struct {
		url, key string
		want     seen
	}{
		{"/items/{key}", "user:42", seen{path: "/items/user:42", key: "user:42"}},
		{"/items/{key}", "a b/c?d%e#f", seen{path: "/items/a%20b%2Fc%3Fd%25e%23f", key: "a b/c?d%e#f"}},
		{"/items/{key}.json?fmt=raw", "k/1", seen{path: "/items/k%2F1.json", query: "fmt=raw", key: "k/1"}},
		{"/get?id={key}&v=2", "a&b=c d", seen{path: "/get", query: "id=a%26b%3Dc+d&v=2", key: "a&b=c d"}},
		{"/get", "a&b", seen{path: "/get", query: "key=a%26b", key: "a&b"}},
		{"/get?x=1&y=%2F", "k 1", seen{path: "/get", query: "x=1&y=%2F&key=k+1", key: "k 1"}},
		{"/items/{key}", "héllo", seen{path: "/items/h%C3%A9llo", key: "héllo"}},
		{"/items/{key}", "", seen{path: "/items/", key: ""}},
		// Keys HTTP cannot carry in a header as they are go percent-encoded,
		// and say so.
		{"/items/{key}", "a\r\nX-Evil: 1", seen{path: "/items/a%0D%0AX-Evil:%201", key: "a%0D%0AX-Evil:%201", encoding: "percent"}},
		{"/items/{key}", " padded ", seen{path: "/items/%20padded%20", key: "%20padded%20", encoding: "percent"}},
		{"/items/{key}", "tab\there", seen{path: "/items/tab%09here", key: "tab%09here", encoding: "percent"}},
	} {
		prefix := tc.url + "|" + tc.key
		l := mustRegister(t, r, Config{Prefix: prefix, URL: o.URL + tc.url})
		if _, err := l.Fetch(context.Background(), tc.key, Validators{}); err != nil {
			t.Errorf("%s with key %q: %v", tc.url, tc.key, err)
			continue
		}
		tc.want.ua = "stampedeless"
		mu.Lock()
		if last != tc.want {
			t.Errorf("%s with key %q: origin saw %+v, want %+v", tc.url, tc.key, last, tc.want)
		}
		mu.Unlock()
	}

	// "." and ".." as a path segment would name another resource.
	l := mustRegister(t, r, Config{Prefix: "dots", URL: o.URL + "/items/{key}"})
	before := o.calls.Load()
	for _, key := range []string{".", ".."} {
		_, err := l.Fetch(context.Background(), key, Validators{})
		wantOriginErr(t, err, "dots", "cannot go in the url path")
	}
	if o.calls.Load() != before {
		t.Error("a dot-segment key reached the origin")
	}
	q := mustRegister(t, r, Config{Prefix: "dotsq", URL: o.URL + "/get?id={key}"})
	if _, err := q.Fetch(context.Background(), "..", Validators{}); err != nil {
		t.Errorf("\"..\" in a query parameter: %v", err)
	}
}

func TestFetchConditional(t *testing.T) {
	const etag, lastMod = `"abc"`, "Wed, 21 Oct 2015 07:28:00 GMT"
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		inm, ims := r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")
		switch {
		case r.URL.Path == "/always304":
			w.WriteHeader(http.StatusNotModified)
		case inm == etag && ims == lastMod && r.URL.Path == "/renamed":
			w.Header().Set("ETag", `"abc2"`)
			w.WriteHeader(http.StatusNotModified)
		case inm == etag || ims == lastMod:
			w.WriteHeader(http.StatusNotModified)
		default:
			w.Header().Set("ETag", etag)
			w.Header().Set("Last-Modified", lastMod)
			fmt.Fprint(w, "body")
		}
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{URL: o.URL + "/{key}"})
	ctx := context.Background()

	first, err := l.Fetch(ctx, "k", Validators{})
	if err != nil || string(first.Value) != "body" {
		t.Fatalf("unconditional: %+v, %v", first, err)
	}
	v := Validators{ETag: first.ETag, LastModified: first.LastModified}
	for name, v := range map[string]Validators{
		"both":          v,
		"etag":          {ETag: etag},
		"last-modified": {LastModified: lastMod},
	} {
		res, err := l.Fetch(ctx, "k", v)
		if err != nil || !res.NotModified || !res.Found || res.Value != nil || res.ETag != v.ETag || res.LastModified != v.LastModified {
			t.Errorf("304 with %s: %+v, %v; want not modified, the sent validators", name, res, err)
		}
	}
	res, err := l.Fetch(ctx, "renamed", v)
	if err != nil || !res.NotModified || res.ETag != `"abc2"` || res.LastModified != lastMod {
		t.Errorf("304 with a new ETag: %+v, %v", res, err)
	}
	// A 304 to a request that validated nothing leaves nothing to renew.
	_, err = l.Fetch(ctx, "always304", Validators{})
	wantOriginErr(t, err, "", "status 304")
	if st := l.Stats(); st.NotModified != 4 || st.Found != 1 || st.Failures != 1 {
		t.Errorf("Stats() = %+v", st)
	}
}

// fetchAll fetches keys in parallel and fails the test on any error.
func fetchAll(t *testing.T, keys []string, lookup func(string) *Loader) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for _, k := range keys {
		wg.Go(func() {
			if _, err := lookup(k).Fetch(context.Background(), k, Validators{}); err != nil {
				errs <- fmt.Errorf("%s: %w", k, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFetchLoaderConcurrency(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // the origin's latency
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{URL: o.URL + "/{key}", Concurrency: 2})
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprint("k", i)
	}
	fetchAll(t, keys, func(string) *Loader { return l })
	if p := o.peak.Load(); p > 2 {
		t.Errorf("origin served %d calls at once; the loader's concurrency is 2", p)
	}
	if o.calls.Load() != 12 {
		t.Errorf("origin calls = %d, want 12", o.calls.Load())
	}
}

func TestFetchBudget(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond) // the origin's latency
	})
	r := newRegistry(t, Options{MaxConcurrentFills: 3})
	mustRegister(t, r, Config{Prefix: "a", URL: o.URL + "/a/{key}"})
	mustRegister(t, r, Config{Prefix: "b", URL: o.URL + "/b/{key}"})
	var keys []string
	for i := range 10 {
		keys = append(keys, fmt.Sprint("a", i), fmt.Sprint("b", i))
	}
	fetchAll(t, keys, func(k string) *Loader { l, _ := r.Lookup(k); return l })
	if p := o.peak.Load(); p > 3 {
		t.Errorf("origin served %d calls at once across loaders; the budget is 3", p)
	}
	if n := r.Budget().InUse(); n != 0 {
		t.Errorf("Budget().InUse() = %d after all fetches, want 0", n)
	}

	// Waiting for the budget counts against the load's own deadline.
	for range 3 {
		if !r.Budget().TryAcquire() {
			t.Fatal("budget not free")
		}
	}
	defer func() {
		for range 3 {
			r.Budget().Release()
		}
	}()
	l := mustRegister(t, r, Config{Prefix: "q", URL: o.URL + "/{key}", Timeout: 50 * time.Millisecond})
	before := o.calls.Load()
	_, err := l.Fetch(context.Background(), "q1", Validators{})
	wantOriginErr(t, err, "q", "timeout after 50ms waiting for the fill budget")
	if o.calls.Load() != before {
		t.Error("a fetch that got no budget reached the origin")
	}
}
