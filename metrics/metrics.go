// Package metrics holds stampedeless's Prometheus registry. Every package
// that matters to an operator is fed in here through a small type or a
// function; labels are bounded sets (command names, results, close reasons),
// never keys. It imports no package of the project, so any of them may feed
// it: what reads another package's state (the store's gauges) is registered
// where the two are wired, in cmd/stampedeless.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
)

// Namespace prefixes every metric's name (stampedeless_...).
const Namespace = "stampedeless"

// Registry is the set of metrics one server exports.
type Registry struct {
	prom *prometheus.Registry

	// Commands counts commands by name, a subcommand as
	// "container|subcommand", and result: "ok", "error" (it ran and
	// replied an error) or "rejected" (refused before it ran: arity,
	// permissions, a full store...). Commands and subcommands not in the
	// table are counted under the name "unknown".
	Commands *prometheus.CounterVec
	// ConnectionsAccepted counts client connections accepted.
	ConnectionsAccepted prometheus.Counter
	// ConnectionsRejected counts connections refused at --max-clients.
	ConnectionsRejected prometheus.Counter
	// ConnectionsClosed counts closed connections by reason (see server's
	// close reasons).
	ConnectionsClosed *prometheus.CounterVec
	// Parks counts commands that waited off their connection's event loop
	// (a load, a blocked pop, the atomic section, a script, Redis).
	Parks prometheus.Counter
	// OutputBlocked counts the times a client's socket took less output
	// than it was given: its input waits until it drains.
	OutputBlocked prometheus.Counter
	// Transactions counts EXECs by result: "exec" (ran), "watch_changed"
	// (a watched key changed: nothing ran), "execabort" (a command was
	// refused while queuing: nothing ran).
	Transactions *prometheus.CounterVec
	// TrackingInvalidations counts invalidated keys queued for clients
	// that track keys (CLIENT TRACKING), a BCAST message's each, by
	// reason: write, expired,
	// evicted, rejected, flush, replica, table_full.
	TrackingInvalidations *prometheus.CounterVec
	// Scripts counts scripting events: "run" (an EVAL, EVALSHA, EVAL_RO or
	// EVALSHA_RO reached the engine, NOSCRIPT included), "busy_reply" (a command answered
	// BUSY because a script ran past busy-reply-threshold), "killed" (a
	// SCRIPT KILL that stopped one).
	Scripts *prometheus.CounterVec
	// Fill holds the read-through (GETFILL) metrics.
	Fill *Fill
	// Cluster holds the --redis mode metrics.
	Cluster *Cluster
}

// New returns a Registry with the Go runtime and process collectors.
func New() *Registry {
	r := &Registry{
		prom: prometheus.NewRegistry(),
		Commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "commands_total",
			Help:      "Commands processed, by command name (a subcommand as container|subcommand) and result: ok, error (ran and replied an error) or rejected (refused before it ran).",
		}, []string{"command", "result"}),
		ConnectionsAccepted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "connections_accepted_total",
			Help:      "Client connections accepted.",
		}),
		ConnectionsRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "connections_rejected_total",
			Help:      "Client connections refused because --max-clients was reached.",
		}),
		ConnectionsClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "connections_closed_total",
			Help:      "Client connections closed, by reason.",
		}, []string{"reason"}),
		Parks: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "event_loop_parks_total",
			Help:      "Commands that waited off their connection's event loop, which served its other connections meanwhile: a GETFILL or FILL.LEASE waiting for a load, a blocked list or sorted-set pop, a command waiting for a transaction or script, a script, a write through to Redis (--redis).",
		}),
		OutputBlocked: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "event_loop_output_blocked_total",
			Help:      "Times a client's socket took less output than it was given; its further input waits until the socket drains, or the write timeout closes it.",
		}),
		Transactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "transactions_total",
			Help:      "EXECs by result: exec (the transaction ran), watch_changed (a WATCHed key changed; nothing ran), execabort (a command was refused while queuing; nothing ran).",
		}, []string{"result"}),
		TrackingInvalidations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "tracking_invalidations_total",
			Help:      "Invalidations queued for clients that track keys (CLIENT TRACKING), one per key (a BCAST message of several keys counts each), by reason: write (a write, DEL, a fill or refresh), expired, evicted, rejected (admission), flush (one null message per client), replica (another replica's write, --redis), table_full (dropped from a full tracking table).",
		}, []string{"reason"}),
		Scripts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace,
			Name:      "scripts_total",
			Help:      "Scripting events: run (an EVAL, EVALSHA, EVAL_RO or EVALSHA_RO reached the scripting engine, NOSCRIPT and compile errors included), busy_reply (a command answered BUSY while a script ran past busy-reply-threshold), killed (SCRIPT KILL stopped a script).",
		}, []string{"event"}),
	}
	r.Fill = newFill(r.prom)
	r.Cluster = newCluster(r.prom)
	r.prom.MustRegister(
		r.Commands, r.ConnectionsAccepted, r.ConnectionsRejected, r.ConnectionsClosed, r.Parks, r.OutputBlocked,
		r.Transactions, r.TrackingInvalidations, r.Scripts,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return r
}

// Handler serves the registry in the Prometheus exposition format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.prom, promhttp.HandlerOpts{Registry: r.prom})
}

// Gauge registers a gauge read from fn at each scrape.
func (r *Registry) Gauge(name, help string, fn func() float64) {
	r.prom.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: name, Help: help,
	}, fn))
}

// Counter registers a counter read from fn at each scrape; fn must never
// decrease.
func (r *Registry) Counter(name, help string, fn func() float64) {
	r.prom.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace, Name: name, Help: help,
	}, fn))
}

// MustRegister adds collectors owned by other packages.
func (r *Registry) MustRegister(cs ...prometheus.Collector) { r.prom.MustRegister(cs...) }

// Value reads a counter's or gauge's current value, for INFO.
func Value(m prometheus.Metric) float64 {
	var out dto.Metric
	if err := m.Write(&out); err != nil {
		return 0
	}
	switch {
	case out.Counter != nil:
		return out.Counter.GetValue()
	case out.Gauge != nil:
		return out.Gauge.GetValue()
	}
	return 0
}
