package loader

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// batchOrigin answers the batch protocol: each key's answer is what
// answer returns for it (status, value, tags), and it records the
// requests it got.
type batchOrigin struct {
	*origin
	requests chan batchRequest
}

func newBatchOrigin(t *testing.T, answer func(k batchRequestKey) batchResponseResult) *batchOrigin {
	t.Helper()
	o := &batchOrigin{requests: make(chan batchRequest, 100)}
	o.origin = newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		var req batchRequest
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "want a JSON POST", http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		o.requests <- req
		var resp batchResponse
		for _, k := range req.Keys {
			resp.Results = append(resp.Results, answer(k))
		}
		json.NewEncoder(w).Encode(resp)
	})
	return o
}

func TestFetchBatchPerKeyAnswers(t *testing.T) {
	binary := []byte{0, 1, 2, 0xff, '\r', '\n'}
	o := newBatchOrigin(t, func(k batchRequestKey) batchResponseResult {
		switch k.Key {
		case "b:bin":
			return batchResponseResult{Status: 200, Value: binary, ETag: `"e1"`, Tags: []string{"t1", " t2 ", "t1", "", "a\nb"}}
		case "b:gone":
			return batchResponseResult{Status: 404}
		case "b:cond":
			if k.ETag != `"old"` {
				return batchResponseResult{Status: 500}
			}
			return batchResponseResult{Status: 304}
		case "b:empty":
			return batchResponseResult{Status: 200}
		}
		if k.Encoding == "percent" {
			key, _ := url.PathUnescape(k.Key)
			return batchResponseResult{Status: 200, Value: []byte("raw:" + key)}
		}
		return batchResponseResult{Status: 503}
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "b:", URL: o.URL + "/batch", Batch: 10})
	bad := "b:\xff\xfe"
	out := l.FetchBatch(longCtx(t), []BatchKey{
		{Key: "b:bin"}, {Key: "b:gone"}, {Key: "b:cond", Validators: Validators{ETag: `"old"`}},
		{Key: "b:down"}, {Key: "b:empty"}, {Key: bad},
	})
	if len(out) != 6 {
		t.Fatalf("%d results for 6 keys", len(out))
	}
	if r := out[0]; r.Err != nil || !r.Found || string(r.Value) != string(binary) || r.ETag != `"e1"` ||
		!slices.Equal(r.Tags, []string{"t1", "t2"}) {
		t.Fatalf("binary key: %+v", r)
	}
	if r := out[1]; r.Err != nil || r.Found {
		t.Fatalf("404 key: %+v, want not found", r)
	}
	if r := out[2]; r.Err != nil || !r.NotModified || r.ETag != `"old"` {
		t.Fatalf("304 key: %+v, want not modified keeping the sent ETag", r)
	}
	var oe *OriginError
	if r := out[3]; !errors.As(r.Err, &oe) || oe.Reason != "status 503" || oe.Loader != "b:" {
		t.Fatalf("failed key: %+v, want status 503 of loader b:", r)
	}
	if r := out[4]; r.Err != nil || !r.Found || r.Value == nil || len(r.Value) != 0 {
		t.Fatalf("empty value: %+v", r)
	}
	if r := out[5]; r.Err != nil || string(r.Value) != "raw:"+bad {
		t.Fatalf("key that is not UTF-8: %+v", r)
	}
	if n := o.calls.Load(); n != 1 {
		t.Fatalf("%d origin requests for one batch", n)
	}
	st := l.Stats()
	if st.Batches != 1 || st.Fills != 6 || st.Found != 3 || st.NotFound != 1 || st.NotModified != 1 || st.Failures != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestFetchBatchWholeFailures: an answer that is not the protocol's fails
// every key of the request, with a reason that quotes nothing of the body.
func TestFetchBatchWholeFailures(t *testing.T) {
	var mode atomic.Value // the kind of bad answer
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case "status":
			w.WriteHeader(502)
		case "json":
			fmt.Fprint(w, "secret-page <html>")
		case "count":
			fmt.Fprint(w, `{"results":[{"status":200,"value":"eA=="}]}`)
		case "base64":
			fmt.Fprint(w, `{"results":[{"status":200,"value":"!!"},{"status":200,"value":"eA=="}]}`)
		}
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "b:", URL: o.URL, Batch: 2})
	for kind, want := range map[string]string{
		"status": "batch status 502",
		"json":   "batch response is not the batch protocol's JSON",
		"count":  "batch response has 1 results for 2 keys",
		"base64": "batch response is not the batch protocol's JSON",
	} {
		mode.Store(kind)
		out := l.FetchBatch(longCtx(t), []BatchKey{{Key: "b:1"}, {Key: "b:2"}})
		for i, res := range out {
			var oe *OriginError
			if !errors.As(res.Err, &oe) || oe.Reason != want || strings.Contains(res.Err.Error(), "secret") {
				t.Fatalf("%s: key %d: %v, want reason %q", kind, i, res.Err, want)
			}
		}
	}
	out := l.FetchBatch(longCtx(t), []BatchKey{{Key: "b:1"}, {Key: "b:2"}, {Key: "b:3"}})
	if out[0].Err == nil {
		t.Fatal("3 keys for a loader of batch 2 did not fail")
	}
}

// TestFetchOfBatchLoader: Fetch of a batch loader is a batch of one key.
func TestFetchOfBatchLoader(t *testing.T) {
	o := newBatchOrigin(t, func(k batchRequestKey) batchResponseResult {
		return batchResponseResult{Status: 200, Value: []byte("v:" + k.Key)}
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "b:", URL: o.URL, Batch: 100})
	res, err := l.Fetch(longCtx(t), "b:one", Validators{})
	if err != nil || string(res.Value) != "v:b:one" {
		t.Fatalf("Fetch = %+v, %v", res, err)
	}
	if req := <-o.requests; len(req.Keys) != 1 || req.Keys[0].Key != "b:one" {
		t.Fatalf("request %+v", req)
	}
}

func TestBatchConfig(t *testing.T) {
	r := newRegistry(t, Options{Allow: allowing(t, testNames)})
	for _, c := range []Config{
		{Prefix: "a:", URL: "http://origin.test/{key}", Batch: 10},
		{Prefix: "a:", URL: "http://origin.test/x", Batch: -1},
		{Prefix: "a:", URL: "http://origin.test/x", Batch: MaxBatch + 1},
	} {
		if err := r.Register(c); !errors.Is(err, ErrConfig) {
			t.Errorf("Register(%+v) = %v, want ErrConfig", c, err)
		}
	}
	l := mustRegister(t, r, Config{Prefix: "a:", URL: "http://origin.test/x", Batch: 7})
	if l.Batch() != 7 || l.Info().Batch != 7 {
		t.Fatalf("Batch %d, Info %+v", l.Batch(), l.Info())
	}
}

// TestFetchTags: Surrogate-Key (spaces) and Cache-Tag (commas), repeated
// headers included, make one list without repeats.
func TestFetchTags(t *testing.T) {
	o := newOrigin(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Surrogate-Key", "  a b  c")
		w.Header().Add("Surrogate-Key", "d a")
		w.Header().Add("Cache-Tag", "e, f ,b,,g")
		fmt.Fprint(w, "v")
	})
	r := newRegistry(t, Options{})
	l := mustRegister(t, r, Config{Prefix: "t:", URL: o.URL + "/{key}"})
	res, err := l.Fetch(longCtx(t), "t:1", Validators{})
	if err != nil || !slices.Equal(res.Tags, []string{"a", "b", "c", "d", "e", "f", "g"}) {
		t.Fatalf("Fetch = %+v, %v", res, err)
	}
}
