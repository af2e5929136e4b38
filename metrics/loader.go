package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/loader"
)

// Loaders exports the loaders' allow-list refusals (--loader-allow) as
// stampedeless_loader_refused_total{reason}: register (a loader URL),
// redirect (an origin's redirect) and dial (a connection, after resolving).
func (r *Registry) Loaders(l *loader.Registry) {
	for reason, count := range map[string]func(loader.Refusals) uint64{
		loader.RefusedRegister: func(f loader.Refusals) uint64 { return f.Register },
		loader.RefusedRedirect: func(f loader.Refusals) uint64 { return f.Redirect },
		loader.RefusedDial:     func(f loader.Refusals) uint64 { return f.Dial },
	} {
		r.prom.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace:   namespace,
			Name:        "loader_refused_total",
			Help:        "Origin addresses refused by --loader-allow, by where: register (a loader URL), redirect (an origin's redirect), dial (a connection, after resolving its host).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(count(l.Refusals())) }))
	}
}
