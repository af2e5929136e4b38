// Package batchorigin is a real HTTP origin speaking the batch protocol of
// batch loaders (loader.FetchBatch), for tests.
package batchorigin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Origin answers each key of a request with the status set for it (200 if
// none) and, for 200, the value "<key>@<request number>" followed by the
// bytes 0 and 0xff (so values are binary), with the tags set for it. It
// records each request's keys.
type Origin struct {
	*httptest.Server
	// Calls counts requests as they arrive.
	Calls atomic.Int64
	// Gate, if not nil, makes each request wait for a receive from it once
	// it has been read; set it before the first request.
	Gate chan struct{}

	mu       sync.Mutex
	requests [][]string
	statuses map[string]int
	tags     map[string][]string
}

// New starts an Origin, closed when the test ends.
func New(t testing.TB) *Origin {
	t.Helper()
	o := &Origin{statuses: map[string]int{}, tags: map[string][]string{}}
	o.Server = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.Close)
	return o
}

// Value is the value the Origin answers for key in its request number n.
func Value(key string, n int64) string { return fmt.Sprintf("%s@%d\x00\xff", key, n) }

// SetStatus makes the Origin answer key with status.
func (o *Origin) SetStatus(key string, status int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.statuses[key] = status
}

// SetTags makes the Origin tag key's value with tags.
func (o *Origin) SetTags(key string, tags ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tags[key] = tags
}

// Requests returns the keys of each request so far, in arrival order.
func (o *Origin) Requests() [][]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.requests)
}

// Sizes returns how many keys each request so far asked for.
func (o *Origin) Sizes() []int {
	var sizes []int
	for _, r := range o.Requests() {
		sizes = append(sizes, len(r))
	}
	return sizes
}

func (o *Origin) serve(w http.ResponseWriter, r *http.Request) {
	n := o.Calls.Add(1)
	var req struct {
		Keys []struct {
			Key string `json:"key"`
		} `json:"keys"`
	}
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "want a batch request", http.StatusBadRequest)
		return
	}
	if o.Gate != nil {
		<-o.Gate
	}
	type result struct {
		Status int      `json:"status"`
		Value  []byte   `json:"value,omitempty"`
		Tags   []string `json:"tags,omitempty"`
	}
	results := make([]result, len(req.Keys))
	keys := make([]string, len(req.Keys))
	o.mu.Lock()
	for i, k := range req.Keys {
		keys[i] = k.Key
		results[i] = result{Status: o.statuses[k.Key], Tags: o.tags[k.Key]}
		if results[i].Status == 0 {
			results[i].Status = http.StatusOK
			results[i].Value = []byte(Value(k.Key, n))
		}
	}
	o.requests = append(o.requests, keys)
	o.mu.Unlock()
	json.NewEncoder(w).Encode(map[string]any{"results": results})
}
