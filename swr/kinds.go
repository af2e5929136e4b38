package swr

// AnswerKind is how a GETFILL answer was made: the kind label of
// stampedeless_fill_answers_total, and INFO stampede's answers_<kind>.
type AnswerKind string

// The answer kinds.
const (
	// AnswerFresh: a fresh entry.
	AnswerFresh AnswerKind = "fresh"
	// AnswerStale: a stale entry within its grace; its refresh started.
	AnswerStale AnswerKind = "stale"
	// AnswerStaleIfError: a stale entry while the key cools down after a
	// failed load.
	AnswerStaleIfError AnswerKind = "stale_if_error"
	// AnswerLoaded: the value of the flight the caller waited for.
	AnswerLoaded AnswerKind = "loaded"
	// AnswerNegative: the origin said the key does not exist, just now or
	// recently (remembered for --negative-ttl).
	AnswerNegative AnswerKind = "negative"
	// AnswerCooldown: the remembered failure, at once, without an origin
	// call.
	AnswerCooldown AnswerKind = "cooldown"
	// AnswerTimeout: the caller's TIMEOUT passed with nothing servable.
	AnswerTimeout AnswerKind = "timeout"
	// AnswerTimeoutStale: the caller's TIMEOUT passed; a stale entry was
	// served.
	AnswerTimeoutStale AnswerKind = "timeout_stale"
	// AnswerError: the flight failed.
	AnswerError AnswerKind = "error"
)

// AnswerKinds lists every AnswerKind, in INFO's order.
var AnswerKinds = [...]AnswerKind{AnswerFresh, AnswerStale, AnswerStaleIfError, AnswerLoaded, AnswerNegative,
	AnswerCooldown, AnswerTimeout, AnswerTimeoutStale, AnswerError}

// RefreshResult is what became of a stale read's background refresh: the
// result label of stampedeless_fill_refreshes_total.
type RefreshResult string

// The refresh results.
const (
	// RefreshStarted: the refresh runs.
	RefreshStarted RefreshResult = "started"
	// RefreshEarly: a fresh read started the refresh early (XFetch,
	// --early-refresh or GETFILL's EARLY); it runs.
	RefreshEarly RefreshResult = "early"
	// RefreshDropped: --max-background-refreshes were already running; a
	// later read tries again.
	RefreshDropped RefreshResult = "dropped"
)

// LeaseResult is what became of an application's lease (FILL.LEASE): the
// result label of stampedeless_fill_leases_total.
type LeaseResult string

// The lease results.
const (
	// LeaseGranted: a caller was handed a token and fills the key.
	LeaseGranted LeaseResult = "granted"
	// LeaseSet: its holder stored a value (or "no such key") with FILL.SET.
	LeaseSet LeaseResult = "set"
	// LeaseAborted: its holder gave up with FILL.ABORT; the key cools down.
	LeaseAborted LeaseResult = "aborted"
	// LeaseExpired: its holder did neither within LEASE ms; the next
	// waiter gets a new token.
	LeaseExpired LeaseResult = "expired"
	// LeaseLost: a FILL.SET or FILL.ABORT came with a token no longer valid,
	// or the key was written during the lease (-LEASELOST).
	LeaseLost LeaseResult = "lost"
)

// LeaseResults lists every LeaseResult, in INFO's order.
var LeaseResults = [...]LeaseResult{LeaseGranted, LeaseSet, LeaseAborted, LeaseExpired, LeaseLost}
