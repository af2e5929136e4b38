// Package loader decides who may call an origin, and when: a registry of
// HTTP webhook loaders by key prefix, one flight per key (Group), a global
// fill budget (Budget), a cooldown after failures (Cooldown), and the
// addresses origins may be reached at (AllowList). The registry's
// registrations can be shared by a fleet of replicas through the Fleet
// interface, which package cluster implements.
//
// The pieces are independent so that the read-through policy above them
// (swr) can arrange them; nothing here knows about the store, RESP or
// Prometheus. Metrics are fed out through Observer and the counters in Info.
//
// # The loader contract
//
// Unlike groupcache's Getter, whose data "must be unversioned", an origin
// here is versioned: a value is fresh for a while, may be served stale for a
// while more, and carries the origin's validators (ETag, Last-Modified) so a
// refresh can be answered with 304 Not Modified. An origin answers a GET for
// one key with 200 and the value, 404 or 410 when the key does not exist, or
// 304 to a conditional request. Everything else is a failure.
//
// # Two deadlines
//
// A load has its own deadline, the loader's timeout, and never inherits a
// caller's: Fetch detaches from its ctx (keeping only its values), and
// Group runs each flight in its own goroutine that no caller can cancel.
// Callers bound only their own waiting.
package loader
