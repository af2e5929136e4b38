// Package cluster is --redis mode: several stampedeless replicas sharing
// one Redis (a single server, Sentinel or Redis Cluster) so that a hot key
// is filled once per fleet, not once per replica.
//
// A Client is one replica's membership. It is swr's Fleet: through Claim
// and its Lease's Publish, Fail and Release, it gives swr a per-key lease
// (SET NX PX with a random token, every later step a Lua script that checks
// the token first), a shared tier of entries with their envelopes,
// fleet-wide failures and cooldowns, and a fleet-wide fill budget. It gives the server, through Fault, Written and Flushed,
// write-through of client writes and an invalidation channel whose messages
// every replica acknowledges, so a write returns once the fleet dropped its
// old copies.
//
// Redis is an accelerator, never a dependency: every operation is bounded by
// Options.Timeout, the first failure marks Redis down (logged once, in
// metrics and INFO), callers then go on as a single process would, and a
// heartbeat notices Redis coming back.
package cluster
