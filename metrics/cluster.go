package metrics

import "github.com/prometheus/client_golang/prometheus"

// Cluster holds the metrics of --redis mode. They are registered whether or
// not the mode is on, so dashboards and alerts see zeros rather than gaps.
type Cluster struct {
	// RedisUp is 1 while Redis answers, 0 while replicas fall back to
	// per-process coalescing.
	RedisUp prometheus.Gauge
	// RedisErrors counts Redis operations that failed (timeouts, refused
	// connections, errors other than a missing key).
	RedisErrors prometheus.Counter
	// Leases counts lease outcomes: acquired (won at the first try),
	// contended (another replica held it), takeover (won after waiting:
	// the holder published nothing and its lease expired), lost (the lease
	// was gone when the holder came to publish).
	Leases *prometheus.CounterVec
	// SharedLookups counts looks into the shared tier: hit or miss.
	SharedLookups *prometheus.CounterVec
	// Publications counts values and failures a lease holder published:
	// published, or rejected because its lease was no longer held (fencing).
	Publications *prometheus.CounterVec
	// InvalidationsSent counts writes this replica fanned out to the fleet.
	InvalidationsSent prometheus.Counter
	// InvalidationsReceived counts invalidations from other replicas.
	InvalidationsReceived prometheus.Counter
	// LeaseWaitFallbacks counts fills that waited --lease-wait for another
	// replica's value, got none, and tried to take its lease over (with
	// --fleet-max-concurrent-fills, once they held a slot of their own, or
	// failed when none came); the winners count as takeovers in Leases.
	LeaseWaitFallbacks prometheus.Counter
	// FleetSlotWaitSeconds is how long loads (lease holders, and followers
	// past --lease-wait) waited for a slot of --fleet-max-concurrent-fills.
	FleetSlotWaitSeconds prometheus.Histogram
	// Peers is how many other replicas this one hears on the event channel.
	Peers prometheus.Gauge
	// PubSubRelayed counts pub/sub messages relayed through Redis: sent
	// (a client published here) or received (published on another
	// replica, delivered to this one's subscribers).
	PubSubRelayed *prometheus.CounterVec
	// LoaderRegistrations counts the fleet's loader registrations as this
	// replica saw them: stored (by this replica in the shared Redis),
	// applied (another replica's, heard or read at a resync), refused (one
	// this replica would not build; its prefix has no loader here),
	// resync (reconciliations with the shared Redis).
	LoaderRegistrations *prometheus.CounterVec
}

// newCluster makes the cluster metrics and registers them.
func newCluster(reg *prometheus.Registry) *Cluster {
	c := &Cluster{
		RedisUp: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "cluster_redis_up",
			Help: "1 while the shared Redis answers (--redis), 0 while replicas fall back to per-process coalescing."}),
		RedisErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_redis_errors_total",
			Help: "Operations on the shared Redis that failed (timeouts, refused connections)."}),
		Leases: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_leases_total",
			Help: "Fill leases by outcome: acquired, contended (another replica held it), takeover (won after the holder's lease expired), lost (gone before publishing)."},
			[]string{"result"}),
		SharedLookups: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_shared_lookups_total",
			Help: "Looks into the shared tier after a local miss, by result: hit or miss."}, []string{"result"}),
		Publications: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_publications_total",
			Help: "Fill results a lease holder published to the fleet: published, or rejected because its lease was no longer held."},
			[]string{"result"}),
		InvalidationsSent: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_invalidations_sent_total",
			Help: "Client writes this replica fanned out to the other replicas."}),
		InvalidationsReceived: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_invalidations_received_total",
			Help: "Invalidations received from other replicas."}),
		LeaseWaitFallbacks: prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_lease_wait_fallbacks_total",
			Help: "Fills that waited --lease-wait for another replica, got no value and tried to take its lease over (under a fleet fill slot of their own, if there is a fleet budget)."}),
		FleetSlotWaitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "cluster_fleet_slot_wait_seconds",
			Help:    "How long loads (lease holders, and followers past --lease-wait) waited for a slot of --fleet-max-concurrent-fills.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}}),
		Peers: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: "cluster_peers",
			Help: "Other replicas heard on the shared Redis's event channel."}),
		PubSubRelayed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_pubsub_relayed_total",
			Help: "Pub/sub messages relayed through the shared Redis: sent (published here) or received (published on another replica)."},
			[]string{"direction"}),
		LoaderRegistrations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "cluster_loader_registrations_total",
			Help: "The fleet's loader registrations as this replica saw them: stored here, heard from another replica, refused here, and resyncs with the shared Redis."},
			[]string{"event"}),
	}
	// Children exist from the start so every series is exported at zero.
	for _, r := range []string{"acquired", "contended", "takeover", "lost"} {
		c.Leases.WithLabelValues(r)
	}
	for _, r := range []string{"hit", "miss"} {
		c.SharedLookups.WithLabelValues(r)
	}
	for _, r := range []string{"published", "rejected"} {
		c.Publications.WithLabelValues(r)
	}
	for _, d := range []string{"sent", "received"} {
		c.PubSubRelayed.WithLabelValues(d)
	}
	for _, e := range []string{"stored", "heard", "refused", "resync"} {
		c.LoaderRegistrations.WithLabelValues(e)
	}
	reg.MustRegister(c.RedisUp, c.RedisErrors, c.Leases, c.SharedLookups, c.Publications,
		c.InvalidationsSent, c.InvalidationsReceived, c.LeaseWaitFallbacks, c.FleetSlotWaitSeconds, c.Peers, c.PubSubRelayed,
		c.LoaderRegistrations)
	return c
}
