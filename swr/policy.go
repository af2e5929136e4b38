package swr

import (
	"math"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// Action is what a read-through read does.
type Action uint8

// The actions, one per row of the decision table (docs/design.md, section
// The swr decision table).
const (
	// Load: nothing servable is stored; the caller waits, within its
	// TIMEOUT, for the key's one flight (joining it or starting it).
	Load Action = iota
	// Serve: the entry is fresh; answer with it, no origin work.
	Serve
	// ServeAndRefresh: the entry is stale but within its grace; answer
	// with it at once and start the key's one background refresh.
	ServeAndRefresh
	// ServeStale: the entry is stale and the key is cooling down after a
	// failed load; answer with the stale value and leave the origin alone
	// (stale-if-error).
	ServeStale
	// Fail: nothing servable is stored and the key is cooling down; answer
	// with the remembered failure at once, without calling the origin.
	Fail
)

var actionNames = [...]string{Load: "load", Serve: "serve", ServeAndRefresh: "serve_and_refresh",
	ServeStale: "serve_stale", Fail: "fail"}

// String names the action for logs and metric labels.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "unknown"
}

// Decide returns the action for a read at now (Unix nanoseconds) of a key
// whose store lookup gave env and found, while cooling says whether the key
// is in its failure cooldown. An entry is fresh before its FreshUntil,
// servable-stale from then until its StaleUntil, and gone after; zero
// deadlines mean never.
func Decide(env engine.Envelope, found bool, now int64, cooling bool) Action {
	servable := Servable(env, found, now)
	fresh := servable && (env.FreshUntil == 0 || now < env.FreshUntil)
	switch {
	case fresh:
		return Serve
	case servable && cooling:
		return ServeStale
	case servable:
		return ServeAndRefresh
	case cooling:
		return Fail
	}
	return Load
}

// EarlyRefresh is XFetch (Vattani, Chierichetti and Lowenstein, "Optimal
// Probabilistic Cache Stampede Prevention", VLDB 2015): a read at now of an
// entry fresh until freshUntil, whose last load took delta, refreshes it
// early when now - delta*beta*ln(u) ≥ freshUntil, u uniform in (0, 1]. The
// closer the deadline and the slower the load, the likelier; beta > 1
// favours earlier refreshes. Without a fresh deadline or a load time it
// never does.
func EarlyRefresh(freshUntil int64, delta time.Duration, now int64, beta, u float64) bool {
	if freshUntil == 0 || delta <= 0 || beta <= 0 {
		return false
	}
	// -ln(u) for u in [0, 1) as the random source gives it: 1-u is in (0, 1].
	gap := float64(delta) * beta * -math.Log(1-u)
	return float64(now)+gap >= float64(freshUntil)
}

// Servable reports whether a stored entry may be answered with at now: it
// exists and its stale deadline has not passed. A caller whose TIMEOUT ends
// before its flight answers with the entry if it is servable, else with the
// timeout error; the flight goes on either way.
func Servable(env engine.Envelope, found bool, now int64) bool {
	return found && (env.StaleUntil == 0 || now < env.StaleUntil)
}
