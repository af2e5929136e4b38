package swr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stampedeless/stampedeless/internal/batchorigin"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/swr"
)

// newBatchFiller is a Filler whose loader "b:" speaks the batch protocol
// to o with batch n, beside the loader "k:" of newTestFiller on plain.
func newBatchFiller(t *testing.T, o *batchorigin.Origin, n int, plainURL string, opts swr.Options) *testFiller {
	t.Helper()
	f := newTestFiller(t, plainURL, opts)
	if err := f.loaders.Register(loader.Config{Prefix: "b:", URL: o.URL + "/batch", Batch: n}); err != nil {
		t.Fatal(err)
	}
	return f
}

func requests(keys ...string) []swr.Request {
	reqs := make([]swr.Request, len(keys))
	for i, k := range keys {
		reqs[i] = swr.Request{Key: k, TTL: time.Minute, Grace: time.Minute, Timeout: -1}
	}
	return reqs
}

// getMany is an MGETFILL of keys.
func getMany(f *testFiller, keys ...string) []swr.KeyAnswer {
	answers, pending := f.StartMany(requests(keys...))
	if pending == nil {
		return answers
	}
	return pending.Wait(context.Background())
}

// TestManyBatchSizes: 1,000 missing keys of a loader of batch 100 take 10
// origin requests of 100 keys, and each key gets its own value.
func TestManyBatchSizes(t *testing.T) {
	o := batchorigin.New(t)
	f := newBatchFiller(t, o, 100, newTestOrigin(t).URL, swr.Options{})
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("b:%d", i)
	}
	answers := getMany(f, keys...)
	for i, a := range answers {
		if a.Err != nil || !a.Found || !bytesHasPrefix(a.Value, keys[i]+"@") {
			t.Fatalf("key %s: %+v", keys[i], a)
		}
	}
	reqs := o.Requests()
	if len(reqs) > 10 {
		t.Fatalf("%d origin requests for 1,000 keys of batch 100, want at most 10", len(reqs))
	}
	total := 0
	for _, r := range reqs {
		if len(r) > 100 {
			t.Fatalf("a request of %d keys, over the batch of 100", len(r))
		}
		total += len(r)
	}
	if total != 1000 {
		t.Fatalf("the requests asked for %d keys, want 1,000 once each", total)
	}
	if got := testutil.ToFloat64(f.m.BatchRequests.WithLabelValues("b:")); got != float64(len(reqs)) {
		t.Fatalf("batch requests metric %v, want %d", got, len(reqs))
	}
	// Now fresh: answered from the store, no request.
	getMany(f, keys...)
	if n := len(o.Requests()); n != len(reqs) {
		t.Fatalf("fresh keys made %d more requests", n-len(reqs))
	}
}

func bytesHasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// TestManyPerKeyAnswers: one request answers each key its own way: a value
// (binary), not found (nil, remembered), a failure of that key alone (its
// cooldown); keys of a plain loader load beside it, and a key without a
// loader gets ErrNoLoader, each in its place.
func TestManyPerKeyAnswers(t *testing.T) {
	o := batchorigin.New(t)
	o.SetStatus("b:gone", http.StatusNotFound)
	o.SetStatus("b:down", http.StatusServiceUnavailable)
	plain := newTestOrigin(t)
	f := newBatchFiller(t, o, 10, plain.URL, swr.Options{})
	answers := getMany(f, "b:ok", "k:plain", "b:gone", "none:x", "b:down")
	if a := answers[0]; a.Err != nil || string(a.Value) != batchorigin.Value("b:ok", 1) {
		t.Fatalf("b:ok: %+v", a)
	}
	if a := answers[1]; a.Err != nil || string(a.Value) != "k:plain#1" {
		t.Fatalf("k:plain: %+v", a)
	}
	if a := answers[2]; a.Err != nil || a.Found {
		t.Fatalf("b:gone: %+v, want not found", a)
	}
	if a := answers[3]; !errors.Is(a.Err, swr.ErrNoLoader) {
		t.Fatalf("none:x: %+v, want ErrNoLoader", a)
	}
	var oe *loader.OriginError
	if a := answers[4]; !errors.As(a.Err, &oe) || oe.Reason != "status 503" {
		t.Fatalf("b:down: %+v, want status 503", a)
	}
	if reqs := o.Requests(); len(reqs) != 1 || len(reqs[0]) != 3 {
		t.Fatalf("requests %q, want one of the 3 batch keys", reqs)
	}
	if got := f.Info("b:gone").State; got != "negative" {
		t.Fatalf("b:gone is %q, want negative", got)
	}
	if got := f.Info("b:down").State; got != "cooldown" {
		t.Fatalf("b:down is %q, want cooldown", got)
	}
}

// TestManyCoalescesWithGet: a key an MGETFILL asks for while a GETFILL
// loads it joins that load, and stays out of the batch; a GETFILL of a key
// an MGETFILL loads joins the MGETFILL's flight.
func TestManyCoalescesWithGet(t *testing.T) {
	o := batchorigin.New(t)
	o.Gate = make(chan struct{})
	f := newBatchFiller(t, o, 10, newTestOrigin(t).URL, swr.Options{})
	ctx := context.Background()
	req := requests("b:shared")[0]

	got := make(chan swr.Answer, 1)
	go func() {
		a, _ := f.Get(ctx, req)
		got <- a
	}()
	testwait.For(t, "the GETFILL's request", func() bool { return o.Calls.Load() == 1 })
	many := make(chan []swr.KeyAnswer, 1)
	go func() { many <- getMany(f, "b:shared", "b:other") }()
	testwait.For(t, "the MGETFILL's request and its wait", func() bool {
		return o.Calls.Load() == 2 && f.Waiters("b:shared") == 2
	})
	// The GETFILL's flight answers first, then the batch of b:other.
	o.Gate <- struct{}{}
	o.Gate <- struct{}{}
	a, answers := <-got, <-many
	if string(a.Value) != string(answers[0].Value) {
		t.Fatalf("GETFILL got %q, MGETFILL %q: not one load", a.Value, answers[0].Value)
	}
	has := func(reqs [][]string, keys ...string) bool {
		return slices.ContainsFunc(reqs, func(r []string) bool { return slices.Equal(r, keys) })
	}
	if reqs := o.Requests(); len(reqs) != 2 || !has(reqs, "b:shared") || !has(reqs, "b:other") {
		t.Fatalf("requests %q, want [b:shared] and [b:other]", reqs)
	}

	// The other way round: the MGETFILL's batch loads, a GETFILL joins it.
	many2 := make(chan []swr.KeyAnswer, 1)
	go func() { many2 <- getMany(f, "b:x", "b:y") }()
	testwait.For(t, "the batch request", func() bool { return o.Calls.Load() == 3 })
	go func() {
		a, _ := f.Get(ctx, requests("b:y")[0])
		got <- a
	}()
	testwait.For(t, "the GETFILL to join", func() bool { return f.Waiters("b:y") == 2 })
	o.Gate <- struct{}{}
	answers, a = <-many2, <-got
	if string(a.Value) != string(answers[1].Value) || o.Calls.Load() != 3 {
		t.Fatalf("GETFILL got %q, MGETFILL %q, %d requests: want one load", a.Value, answers[1].Value, o.Calls.Load())
	}
}

// TestManyTimeout: keys whose load outlasts the MGETFILL's TIMEOUT are
// answered with a *TimeoutError; the load goes on and stores them.
func TestManyTimeout(t *testing.T) {
	o := batchorigin.New(t)
	o.Gate = make(chan struct{})
	f := newBatchFiller(t, o, 10, newTestOrigin(t).URL, swr.Options{})
	reqs := requests("b:1", "b:2")
	for i := range reqs {
		reqs[i].Timeout = 0
	}
	answers, pending := f.StartMany(reqs)
	answers = pending.Wait(context.Background())
	for _, a := range answers {
		if !errors.Is(a.Err, swr.ErrTimeout) {
			t.Fatalf("answers %+v, want timeouts", answers)
		}
	}
	o.Gate <- struct{}{}
	testwait.For(t, "the load to be stored", func() bool { return f.Info("b:2").State == "fresh" })
}
