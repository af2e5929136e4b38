package swr

import "time"

// flightObserver feeds the coalescing measurements of the Filler's flights
// into its metrics, by loader.
type flightObserver struct{ f *Filler }

func (o flightObserver) loaderName(key string) string {
	if ld, ok := o.f.opts.Loaders.Lookup(key); ok {
		return ld.Prefix()
	}
	return ""
}

// FlightDone records how many callers one load served.
func (o flightObserver) FlightDone(key string, callers int, _ time.Duration, _ error) {
	if callers > 0 {
		o.f.opts.Metrics.WaitersPerFlight.WithLabelValues(o.loaderName(key)).Observe(float64(callers))
	}
}

// Joined counts a caller that joined a load someone else started, as it
// starts waiting.
func (o flightObserver) Joined(key string) {
	o.f.opts.Metrics.Coalesced.WithLabelValues(o.loaderName(key)).Inc()
	o.f.opts.Radar.Joined(key)
}

// Waited records how long a caller waited.
func (o flightObserver) Waited(key string, d time.Duration, _ bool, _ error) {
	o.f.opts.Metrics.WaitSeconds.WithLabelValues(o.loaderName(key)).Observe(d.Seconds())
}
