// Package origin is a demo HTTP origin for stampedeless loaders: it answers
// GET /<key> with a value made from the key and a version, after a
// configurable latency, fails a configurable share of calls, can send ETags
// and honour If-None-Match, tags values for PURGE.TAG (Surrogate-Key), serves
// the batch protocol of batch loaders (POST), and counts every call so a demo
// can show how many reached it.
//
// It exists so that a stampede can be shown, and stopped, with nothing but
// stampedeless, redis-cli and redis-benchmark: the counts at /stats are the
// number a cache stampede drives up. It is not a real backend and keeps no
// data: every value is computed from the request.
package origin

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/loader"
)

// Options configure an Origin. The zero value answers at once, never fails,
// sends no ETag and logs nothing.
type Options struct {
	// Latency is how long each call takes before it answers, as a slow
	// database or service would. Zero answers at once.
	Latency time.Duration
	// FailureRate is the share of calls, from 0 to 1, answered 503 Service
	// Unavailable (after the latency), chosen at random.
	FailureRate float64
	// ETag makes 200 answers carry a weak ETag naming the value's version,
	// and a request whose If-None-Match names the current version get 304
	// Not Modified without a body.
	ETag bool
	// ChangeEvery is how often every key's value changes to a new version.
	// Zero: never, every key stays at version 1.
	ChangeEvery time.Duration
	// NotFoundPrefix, if not empty, makes keys that start with it answer
	// 404 Not Found, which stampedeless remembers as a missing key.
	NotFoundPrefix string
	// Tags are the origin tags of every value, sent as a Surrogate-Key
	// header (and in a batch result's "tags"), so PURGE.TAG can be tried;
	// "{key}" in a tag is replaced by the key. Nil: no tags.
	Tags []string
	// Logger gets one line per call. Nil: no logging.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now. The version of a
	// value is derived from it.
	Now func() time.Time
}

// Stats are an Origin's counters since it started or was last Reset.
type Stats struct {
	// Calls counts value requests of every outcome: a batch request is one
	// call, counted again in Batches; the outcomes below count keys.
	Calls   int64 `json:"calls"`
	Batches int64 `json:"batches"`
	// InFlight is the calls running now, MaxInFlight the most that ran at
	// once: a stampede shows as a MaxInFlight near the number of clients.
	InFlight    int64 `json:"in_flight"`
	MaxInFlight int64 `json:"max_in_flight"`
	// OK counts 200 answers, NotModified 304s and NotFound 404s.
	OK          int64 `json:"ok"`
	NotModified int64 `json:"not_modified"`
	NotFound    int64 `json:"not_found"`
	// Failures counts 503 answers made by FailureRate.
	Failures int64 `json:"failures"`
	// Canceled counts calls whose client left before the answer.
	Canceled int64 `json:"canceled"`
}

// Origin is the demo origin: an http.Handler. Requests to /stats return
// Stats as JSON, POST /reset zeroes them and /healthz answers 200 "ok";
// every other path, and every request carrying stampedeless's key header
// (so even a key named "stats" loads), asks for a value.
type Origin struct {
	opts  Options
	start time.Time

	// mu serialises Reset with the updates of MaxInFlight, so a reset
	// cannot be undone by a call that read the old maximum.
	mu                                            sync.Mutex
	calls, batches, inFlight, maxInFlight         atomic.Int64
	ok, notModified, notFound, failures, canceled atomic.Int64
}

// New returns an Origin, or an error if an option is out of range.
func New(opts Options) (*Origin, error) {
	if opts.FailureRate < 0 || opts.FailureRate > 1 {
		return nil, fmt.Errorf("origin: failure rate %v is not between 0 and 1", opts.FailureRate)
	}
	if opts.Latency < 0 || opts.ChangeEvery < 0 {
		return nil, errors.New("origin: latency and change interval must not be negative")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Origin{opts: opts, start: opts.Now()}, nil
}

// Stats returns the counters.
func (o *Origin) Stats() Stats {
	return Stats{
		Calls:       o.calls.Load(),
		Batches:     o.batches.Load(),
		InFlight:    o.inFlight.Load(),
		MaxInFlight: o.maxInFlight.Load(),
		OK:          o.ok.Load(),
		NotModified: o.notModified.Load(),
		NotFound:    o.notFound.Load(),
		Failures:    o.failures.Load(),
		Canceled:    o.canceled.Load(),
	}
}

// Reset zeroes the counters, and sets MaxInFlight to the calls still
// running, so that one demo run can be counted apart from the next.
func (o *Origin) Reset() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range []*atomic.Int64{&o.calls, &o.batches, &o.ok, &o.notModified, &o.notFound, &o.failures, &o.canceled} {
		c.Store(0)
	}
	o.maxInFlight.Store(o.inFlight.Load())
}

// ServeHTTP routes between the value endpoint and /stats, /reset, /healthz.
func (o *Origin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get(loader.KeyHeader) == "" {
		switch r.URL.Path {
		case "/stats":
			o.serveStats(w)
			return
		case "/reset":
			if r.Method != http.MethodPost {
				w.Header().Set("Allow", http.MethodPost)
				http.Error(w, "POST to reset the counters", http.StatusMethodNotAllowed)
				return
			}
			o.Reset()
			o.serveStats(w)
			return
		case "/healthz":
			fmt.Fprintln(w, "ok")
			return
		}
	}
	if r.Method == http.MethodPost {
		o.serveBatch(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "GET a key, or POST a batch of keys", http.StatusMethodNotAllowed)
		return
	}
	key, err := requestKey(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.serveValue(w, r, key)
}

func (o *Origin) serveStats(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(o.Stats())
}

// requestKey finds the key a request asks for: stampedeless's key header
// (percent-decoded when flagged so), else a ?key= parameter (a loader URL
// without {key}), else the path without its leading slash.
func requestKey(r *http.Request) (string, error) {
	if k := r.Header.Get(loader.KeyHeader); k != "" {
		if r.Header.Get(loader.KeyEncodingHeader) == "percent" {
			return url.PathUnescape(k)
		}
		return k, nil
	}
	if k := r.URL.Query().Get("key"); k != "" {
		return k, nil
	}
	k := strings.TrimPrefix(r.URL.Path, "/")
	if k == "" {
		return "", errors.New("no key: GET /<key>")
	}
	return k, nil
}

func (o *Origin) serveValue(w http.ResponseWriter, r *http.Request, key string) {
	began := o.opts.Now()
	o.calls.Add(1)
	o.enter()
	defer o.inFlight.Add(-1)

	status := o.answer(w, r, key)
	if o.opts.Logger != nil {
		o.opts.Logger.Info("origin call", "key", key, "status", status,
			"in_flight", o.inFlight.Load(), "took", o.opts.Now().Sub(began).Round(time.Microsecond))
	}
}

// enter counts a call as running and raises MaxInFlight to match.
func (o *Origin) enter() {
	n := o.inFlight.Add(1)
	o.mu.Lock()
	if n > o.maxInFlight.Load() {
		o.maxInFlight.Store(n)
	}
	o.mu.Unlock()
}

// answer waits the latency and writes the answer; it returns the status,
// or 0 when the client left first.
func (o *Origin) answer(w http.ResponseWriter, r *http.Request, key string) int {
	if !o.wait(r) {
		return 0
	}
	a := o.decide(key, r.Header.Get("If-None-Match"))
	if a.etag != "" {
		w.Header().Set("ETag", a.etag)
	}
	switch a.status {
	case http.StatusOK:
		if len(a.tags) > 0 {
			w.Header().Set(loader.SurrogateKeyHeader, strings.Join(a.tags, " "))
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, a.value)
	case http.StatusNotModified:
		w.WriteHeader(http.StatusNotModified)
	default:
		http.Error(w, a.value, a.status)
	}
	return a.status
}

// wait waits the latency, and reports false if the client left first.
func (o *Origin) wait(r *http.Request) bool {
	if o.opts.Latency <= 0 {
		return true
	}
	t := time.NewTimer(o.opts.Latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		o.canceled.Add(1)
		return false
	}
}

// keyAnswer is what the origin answers for one key, in a GET or a batch.
type keyAnswer struct {
	status int
	value  string // the body: the value for 200, else the error text
	etag   string
	tags   []string
}

// decide answers key, whose client holds the version ifNoneMatch names
// (if any), and counts the outcome.
func (o *Origin) decide(key, ifNoneMatch string) keyAnswer {
	if o.opts.FailureRate > 0 && rand.Float64() < o.opts.FailureRate {
		o.failures.Add(1)
		return keyAnswer{status: http.StatusServiceUnavailable, value: "demo origin: simulated failure"}
	}
	if o.opts.NotFoundPrefix != "" && strings.HasPrefix(key, o.opts.NotFoundPrefix) {
		o.notFound.Add(1)
		return keyAnswer{status: http.StatusNotFound, value: "demo origin: no such key"}
	}
	now := o.opts.Now()
	version := o.version(now)
	var a keyAnswer
	if o.opts.ETag {
		a.etag = `W/"v` + strconv.FormatInt(version, 10) + `"`
		if etagMatches(ifNoneMatch, a.etag) {
			o.notModified.Add(1)
			a.status = http.StatusNotModified
			return a
		}
	}
	o.ok.Add(1)
	a.status, a.value = http.StatusOK, Value(key, version, now)
	for _, t := range o.opts.Tags {
		a.tags = append(a.tags, strings.ReplaceAll(t, "{key}", key))
	}
	return a
}

// serveBatch answers a batch loader's request (the protocol of
// loader.FetchBatch): one result per key, in order, each as a GET of that
// key would answer it, after one latency for the whole request.
func (o *Origin) serveBatch(w http.ResponseWriter, r *http.Request) {
	began := o.opts.Now()
	o.calls.Add(1)
	o.batches.Add(1)
	o.enter()
	defer o.inFlight.Add(-1)
	var req struct {
		Keys []struct {
			Key      string `json:"key"`
			Encoding string `json:"encoding"`
			ETag     string `json:"etag"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "want a batch request: {\"keys\": [{\"key\": ...}]}", http.StatusBadRequest)
		return
	}
	if !o.wait(r) {
		return
	}
	type result struct {
		Status int      `json:"status"`
		Value  []byte   `json:"value,omitempty"`
		ETag   string   `json:"etag,omitempty"`
		Tags   []string `json:"tags,omitempty"`
	}
	results := make([]result, len(req.Keys))
	for i, k := range req.Keys {
		key := k.Key
		if k.Encoding == "percent" {
			if dec, err := url.PathUnescape(key); err == nil {
				key = dec
			}
		}
		a := o.decide(key, k.ETag)
		results[i] = result{Status: a.status, ETag: a.etag, Tags: a.tags}
		if a.status == http.StatusOK {
			results[i].Value = []byte(a.value)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"results": results})
	if o.opts.Logger != nil {
		o.opts.Logger.Info("origin batch call", "keys", len(req.Keys), "in_flight", o.inFlight.Load(),
			"took", o.opts.Now().Sub(began).Round(time.Microsecond))
	}
}

// version is the value's version at now: 1, then one more every ChangeEvery.
func (o *Origin) version(now time.Time) int64 {
	if o.opts.ChangeEvery <= 0 {
		return 1
	}
	return 1 + int64(now.Sub(o.start)/o.opts.ChangeEvery)
}

// Value is the body the origin answers for key: the key, its version and
// when it was made, so a client can tell a cached value from a fresh one.
func Value(key string, version int64, made time.Time) string {
	return fmt.Sprintf("value of %s, version %d, made at %s", key, version, made.UTC().Format("15:04:05.000"))
}

// etagMatches applies If-None-Match's weak comparison (RFC 9110 13.1.2): a
// list of tags, or *, any of which equal to etag without the W/ prefix.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}
