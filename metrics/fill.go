package metrics

import (
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
	reg.MustRegister(f.Loads, f.LoadSeconds, f.InFlight, f.Answers, f.Coalesced, f.WaitersPerFlight, f.WaitSeconds,
		f.Refreshes, f.Leases, f.PastGrace)
	return f
}

// ObserveLoad records one origin call.
func (f *Fill) ObserveLoad(loader, result string, d time.Duration) {
	f.Loads.WithLabelValues(loader, result).Inc()
	f.LoadSeconds.WithLabelValues(loader).Observe(d.Seconds())
}

// Answer counts one GETFILL reply.
func (f *Fill) Answer(loader, kind string) { f.Answers.WithLabelValues(loader, kind).Inc() }
