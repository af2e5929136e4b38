package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
)

// registerLoaderMetrics exports the loaders' allow-list refusals
// (--loader-allow) as stampedeless_loader_refused_total{reason}: register (a
// loader URL), redirect (an origin's redirect) and dial (a connection, after
// resolving). It lives where the two are wired, so that metrics imports no
// package of the project.
func registerLoaderMetrics(r *metrics.Registry, l *loader.Registry) {
	for reason, count := range map[string]func(loader.Refusals) uint64{
		loader.RefusedRegister: func(f loader.Refusals) uint64 { return f.Register },
		loader.RefusedRedirect: func(f loader.Refusals) uint64 { return f.Redirect },
		loader.RefusedDial:     func(f loader.Refusals) uint64 { return f.Dial },
	} {
		r.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace:   metrics.Namespace,
			Name:        "loader_refused_total",
			Help:        "Origin addresses refused by --loader-allow, by where: register (a loader URL), redirect (an origin's redirect), dial (a connection, after resolving its host).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(count(l.Refusals())) }))
	}
}
