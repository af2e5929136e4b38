package metrics

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Fill holds the read-through metrics, labelled by loader (its prefix), a
// set the operator bounds by registering loaders; never by key. The seeds'
// success test reads straight off them: K concurrent GETFILLs of an expired
// key show one load and K-1 coalesced waiters.
type Fill struct {
	// Loads counts origin calls by result: ok, not_found, not_modified, error.
	Loads *prometheus.CounterVec
	// LoadSeconds is how long origin calls took.
	LoadSeconds *prometheus.HistogramVec
	// InFlight is origin calls running now.
	InFlight *prometheus.GaugeVec
	// Answers counts GETFILL replies by loader and kind, how they were
	// made: the kinds are swr's AnswerKinds, which say what each means.
	Answers *prometheus.CounterVec
	// Coalesced counts callers that joined a flight someone else started.
	Coalesced *prometheus.CounterVec
	// WaitersPerFlight is how many callers each flight served.
	WaitersPerFlight *prometheus.HistogramVec
	// WaitSeconds is how long each caller waited for its flight.
	WaitSeconds *prometheus.HistogramVec
	// Refreshes counts background refreshes by loader and result: swr's
	// RefreshResult (started for a stale read, early for a fresh one by
	// early refresh, or dropped at --max-background-refreshes).
	Refreshes *prometheus.CounterVec
	// Leases counts the application's fill leases (FILL.LEASE) by result:
	// swr's LeaseResults (granted, set, aborted, expired, lost). The
	// loader label is "app".
	Leases *prometheus.CounterVec
	// PastGrace counts GETFILL reads that found their entry past its stale
	// deadline: the grace was too short to cover the refresh, or the key
	// was not read during it.
	PastGrace *prometheus.CounterVec
	// BatchRequests counts a batch loader's origin requests, and BatchKeys
	// how many keys each carried; Loads counts each key of one.
	BatchRequests *prometheus.CounterVec
	BatchKeys     *prometheus.HistogramVec
	// TagPurges counts PURGE.TAG runs by mode (hard, soft) and origin
	// (local: a client's, fleet: another replica's), and TagPurgedKeys the
	// keys they purged in this replica's store.
	TagPurges     *prometheus.CounterVec
	TagPurgedKeys *prometheus.CounterVec
	// TagEntries is the number of (key, tag) pairs the tag index holds, and
	// TagBytes what it charges to --max-memory.
	TagEntries prometheus.Gauge
	TagBytes   prometheus.Gauge
	// TagsDropped counts tags an origin gave that are not kept, by loader
	// and reason: per_key (past --max-tags-per-key), length (over 1024
	// bytes). TagEvictions counts tagged keys removed from the store to
	// make room in a full tag index (--max-tag-entries).
	TagsDropped  *prometheus.CounterVec
	TagEvictions prometheus.Counter

	// answers holds Answers' counters by answerKey, copied on write:
	// every GETFILL reply counts one, and finding the counter of a label
	// pair in the vector hashes both labels under its lock (a twentieth of
	// a pipelined hit's time), as a sync.Map hashes them through an
	// interface; a map of the pair is read with its own hash and no lock.
	// Loaders are never removed from the vectors, so neither are they
	// from here, and new pairs are rare: a loader's first answer of a kind.
	answers    atomic.Pointer[map[answerKey]*answer]
	answersMu  sync.Mutex             // held while answers is copied
	lastAnswer atomic.Pointer[answer] // the pair Answer counted last
}

type answerKey struct{ loader, kind string }

// answer is a pair's counter.
type answer struct {
	key     answerKey
	counter prometheus.Counter
}

// newFill makes the read-through metrics and registers them.
func newFill(reg *prometheus.Registry) *Fill {
	latency := []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	f := &Fill{
		Loads: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_loads_total",
			Help: "Origin calls by loader and result (ok, not_found, not_modified, error)."}, []string{"loader", "result"}),
		LoadSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "fill_load_seconds",
			Help: "Duration of origin calls by loader.", Buckets: latency}, []string{"loader"}),
		InFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "fill_loads_in_flight",
			Help: "Origin calls running now, by loader."}, []string{"loader"}),
		Answers: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_answers_total",
			Help: "GETFILL replies by loader and how they were made (kind; the README lists the kinds)."},
			[]string{"loader", "kind"}),
		Coalesced: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_coalesced_waiters_total",
			Help: "GETFILL callers that joined a load another caller started, by loader."}, []string{"loader"}),
		WaitersPerFlight: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "fill_waiters_per_flight",
			Help:    "Callers served by each load, by loader.",
			Buckets: []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000}}, []string{"loader"}),
		WaitSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "fill_wait_seconds",
			Help: "How long GETFILL callers waited for a load, by loader.", Buckets: latency}, []string{"loader"}),
		Refreshes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_refreshes_total",
			Help: "Background refreshes by loader: started (a stale read), early (a fresh read, --early-refresh), or dropped at --max-background-refreshes."},
			[]string{"loader", "result"}),
		Leases: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_leases_total",
			Help: "Fill leases handed to the application (FILL.LEASE) by loader (app) and result: granted, set, aborted, expired, lost."},
			[]string{"loader", "result"}),
		PastGrace: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_past_grace_total",
			Help: "GETFILL reads that found their entry past its stale deadline, by loader."}, []string{"loader"}),
	}
	f.BatchRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_batch_requests_total",
		Help: "Origin requests of batch loaders, each for one or more keys, by loader."}, []string{"loader"})
	f.BatchKeys = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "fill_batch_keys",
		Help:    "Keys per origin request of batch loaders, by loader.",
		Buckets: []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 5000}}, []string{"loader"})
	f.TagPurges = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_tag_purges_total",
		Help: "PURGE.TAG runs by mode (hard, soft) and origin (local, fleet: another replica's)."}, []string{"mode", "origin"})
	f.TagPurgedKeys = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_tag_purged_keys_total",
		Help: "Keys PURGE.TAG purged in this replica's store, by mode (hard, soft) and origin (local, fleet)."}, []string{"mode", "origin"})
	f.TagEntries = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "fill_tag_entries",
		Help: "(key, tag) pairs in the tag index (bounded by --max-tag-entries)."})
	f.TagBytes = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "fill_tag_bytes",
		Help: "Bytes the tag index charges to --max-memory."})
	f.TagsDropped = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_tags_dropped_total",
		Help: "Origin tags not kept, by loader and reason: per_key (past --max-tags-per-key), length (over 1024 bytes)."},
		[]string{"loader", "reason"})
	f.TagEvictions = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "fill_tag_evictions_total",
		Help: "Tagged keys removed from the store to make room in a full tag index (--max-tag-entries)."})
	reg.MustRegister(f.Loads, f.LoadSeconds, f.InFlight, f.Answers, f.Coalesced, f.WaitersPerFlight, f.WaitSeconds,
		f.Refreshes, f.Leases, f.PastGrace, f.BatchRequests, f.BatchKeys, f.TagPurges, f.TagPurgedKeys, f.TagEntries,
		f.TagBytes, f.TagsDropped, f.TagEvictions)
	return f
}

// ObserveLoad records one origin call.
func (f *Fill) ObserveLoad(loader, result string, d time.Duration) {
	f.Loads.WithLabelValues(loader, result).Inc()
	f.LoadSeconds.WithLabelValues(loader).Observe(d.Seconds())
}

// Answer counts one GETFILL reply.
func (f *Fill) Answer(loader, kind string) {
	k := answerKey{loader, kind}
	// The last pair answered: a run of hits of one loader compares two
	// strings the caller passes from the same places (a loader's prefix,
	// a constant kind), which Go finds equal by their pointers.
	if a := f.lastAnswer.Load(); a != nil && a.key == k {
		a.counter.Inc()
		return
	}
	if m := f.answers.Load(); m != nil {
		if a, ok := (*m)[k]; ok {
			f.lastAnswer.Store(a)
			a.counter.Inc()
			return
		}
	}
	a := f.newAnswer(k)
	f.lastAnswer.Store(a)
	a.counter.Inc()
}

// newAnswer returns the counter of k, adding it to answers.
func (f *Fill) newAnswer(k answerKey) *answer {
	f.answersMu.Lock()
	defer f.answersMu.Unlock()
	old := f.answers.Load()
	if old != nil {
		if a, ok := (*old)[k]; ok {
			return a
		}
	}
	m := map[answerKey]*answer{}
	if old != nil {
		m = maps.Clone(*old)
	}
	a := &answer{key: k, counter: f.Answers.WithLabelValues(k.loader, k.kind)}
	m[k] = a
	f.answers.Store(&m)
	return a
}
