package loader

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The batch protocol, spoken by a loader registered with a Batch
// (docs/read-through.md, "Batch loaders"). One request asks for up to
// Batch keys:
//
//	POST <url>
//	Content-Type: application/json
//
//	{"keys": [{"key": "user:1"},
//	          {"key": "user:2", "etag": "\"v7\"", "last_modified": "..."},
//	          {"key": "a%FFb", "encoding": "percent"}]}
//
// A key that is not valid UTF-8, which a JSON string cannot carry, is sent
// percent-encoded (url.PathEscape) with "encoding": "percent". A key being
// refreshed carries its validators. The origin answers 200 with one result
// per key, in the same order:
//
//	{"results": [{"status": 200, "value": "aGVsbG8=", "etag": "\"v8\"", "tags": ["user", "user:1"]},
//	             {"status": 304},
//	             {"status": 404}]}
//
// "value" is the value in standard base64, so values are binary-safe;
// "status" means for its key what the status of a GET means for one key:
// 200 a value, 304 still the same (only to a key sent with validators),
// 404 or 410 no such key, anything else a failure of that key alone. Any
// other answer (a status other than 200, a body that is not this JSON, or
// a count of results other than the count of keys) fails every key of the
// request.

// BatchKey is one key of a batch request, with its validators when it is
// being refreshed.
type BatchKey struct {
	Key string
	Validators
}

// BatchResult is what the origin said about one key of a batch request: a
// Result, or the key's failure in Err (an *OriginError).
type BatchResult struct {
	Result
	Err error
}

type batchRequest struct {
	Keys []batchRequestKey `json:"keys"`
}

type batchRequestKey struct {
	Key          string `json:"key"`
	Encoding     string `json:"encoding,omitempty"`
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

type batchResponse struct {
	Results []batchResponseResult `json:"results"`
}

type batchResponseResult struct {
	Status       int      `json:"status"`
	Value        []byte   `json:"value"` // base64 in the JSON
	ETag         string   `json:"etag"`
	LastModified string   `json:"last_modified"`
	Tags         []string `json:"tags"`
}

// FetchBatch asks the origin for keys with one request of the batch
// protocol and returns one result per key, in order. A loader without a
// Batch, or more keys than its Batch, is the caller's bug: every key fails.
// The request's deadline, slots and detachment from ctx are Fetch's: it is
// one origin call, under the loader's timeout, holding one slot of the
// loader's concurrency and one of the fill budget.
func (l *Loader) FetchBatch(ctx context.Context, keys []BatchKey) []BatchResult {
	l.batches.Add(1)
	out := l.fetchBatch(ctx, keys)
	for _, r := range out {
		l.count(r.Result, r.Err)
	}
	return out
}

func (l *Loader) fetchBatch(ctx context.Context, keys []BatchKey) []BatchResult {
	l.reg.init()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
	defer cancel()
	failAll := func(err error) []BatchResult {
		out := make([]BatchResult, len(keys))
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	if len(keys) == 0 || len(keys) > l.batch {
		return failAll(l.fail("a batch of "+strconv.Itoa(len(keys))+" keys for a loader of batch "+strconv.Itoa(l.batch), nil))
	}
	body, err := json.Marshal(batchRequestOf(keys))
	if err != nil {
		return failAll(l.fail("encoding the batch: "+err.Error(), err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.url, bytes.NewReader(body))
	if err != nil {
		return failAll(l.fail("bad url: "+l.reason(ctx, err), err))
	}
	if l.header != nil {
		req.Header = l.header.Clone()
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "stampedeless")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")

	done, err := l.acquire(ctx)
	if err != nil {
		return failAll(err)
	}
	defer done()
	resp, err := l.reg.client.Do(req)
	if err != nil {
		return failAll(l.fail(l.reason(ctx, err), err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		drain(resp.Body)
		return failAll(l.fail("batch status "+strconv.Itoa(resp.StatusCode), nil))
	}
	limit := l.batchBodyLimit(len(keys))
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return failAll(l.fail("reading body: "+l.reason(ctx, err), err))
	case int64(len(raw)) > limit:
		return failAll(l.fail("batch body over "+formatSize(limit), nil))
	}
	var br batchResponse
	if err := json.Unmarshal(raw, &br); err != nil {
		// The decoder's message quotes the body; the reason must not.
		return failAll(l.fail("batch response is not the batch protocol's JSON", err))
	}
	if len(br.Results) != len(keys) {
		return failAll(l.fail("batch response has "+strconv.Itoa(len(br.Results))+" results for "+strconv.Itoa(len(keys))+" keys", nil))
	}
	out := make([]BatchResult, len(keys))
	for i, r := range br.Results {
		out[i] = l.batchResult(keys[i].Validators, r)
	}
	return out
}

// batchRequestOf is the request body for keys.
func batchRequestOf(keys []BatchKey) batchRequest {
	br := batchRequest{Keys: make([]batchRequestKey, len(keys))}
	for i, k := range keys {
		rk := batchRequestKey{Key: k.Key, ETag: k.ETag, LastModified: k.LastModified}
		if !utf8.ValidString(k.Key) {
			rk.Key, rk.Encoding = url.PathEscape(k.Key), "percent"
		}
		br.Keys[i] = rk
	}
	return br
}

// batchResult turns one result of a batch response into the key's answer,
// as fetch turns a status into one. sent are the validators the request
// carried for the key.
func (l *Loader) batchResult(sent Validators, r batchResponseResult) BatchResult {
	switch r.Status {
	case http.StatusOK:
		if int64(len(r.Value)) > l.reg.maxValueSize() {
			return BatchResult{Err: l.fail("value over "+formatSize(l.reg.maxValueSize()), nil)}
		}
		value := r.Value
		if value == nil {
			value = []byte{}
		}
		return BatchResult{Result: Result{Value: value, Found: true, ETag: r.ETag, LastModified: r.LastModified,
			Tags: cleanTags(r.Tags)}}
	case http.StatusNotFound, http.StatusGone:
		return BatchResult{}
	case http.StatusNotModified:
		if sent.empty() {
			return BatchResult{Err: l.fail("status 304 to an unconditional request", nil)}
		}
		res := Result{Found: true, NotModified: true, ETag: sent.ETag, LastModified: sent.LastModified, Tags: cleanTags(r.Tags)}
		if r.ETag != "" {
			res.ETag = r.ETag
		}
		if r.LastModified != "" {
			res.LastModified = r.LastModified
		}
		return BatchResult{Result: res}
	}
	return BatchResult{Err: l.fail("status "+strconv.Itoa(r.Status), nil)}
}

// maxBatchBody bounds a batch response that could otherwise be allowed
// Batch times the largest value: no single allocation past 1 GiB, unless
// one value alone may be larger.
const maxBatchBody = 1 << 30

// batchBodyLimit is the largest batch response body accepted for n keys:
// room for n of the largest values in base64 with their JSON, up to
// maxBatchBody, and always room for one.
func (l *Loader) batchBodyLimit(n int) int64 {
	perKey := l.reg.maxValueSize()/3*4 + 4<<10
	one := perKey + 4<<10
	if perKey > (maxBatchBody-one)/int64(n) {
		return max(one, maxBatchBody)
	}
	return max(one, int64(n)*perKey+4<<10)
}

// The origin's tag headers.
const (
	// SurrogateKeyHeader lists a value's tags separated by spaces (Fastly,
	// Varnish's xkey).
	SurrogateKeyHeader = "Surrogate-Key"
	// CacheTagHeader lists a value's tags separated by commas (Cloudflare).
	CacheTagHeader = "Cache-Tag"
)

// parseTags returns the tags of an origin answer's headers: Surrogate-Key's
// then Cache-Tag's, each header possibly repeated.
func parseTags(h http.Header) []string {
	var tags []string
	for _, v := range h.Values(SurrogateKeyHeader) {
		tags = append(tags, strings.Fields(v)...)
	}
	for _, v := range h.Values(CacheTagHeader) {
		tags = append(tags, strings.Split(v, ",")...)
	}
	return cleanTags(tags)
}

// cleanTags trims tags and drops empty ones, repeats and those with a
// control character (a tag is one line, wherever it is written), keeping
// the first occurrence's order. It returns nil for none.
func cleanTags(tags []string) []string {
	var out []string
	seen := make(map[string]struct{}, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if _, dup := seen[t]; t == "" || dup || strings.ContainsFunc(t, unicode.IsControl) {
			continue
		}
		seen[t] = struct{}{}
		out = append(out, t)
	}
	return out
}
