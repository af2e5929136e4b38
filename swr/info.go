package swr

import "time"

// KeyInfo describes a key's read-through state, for FILL.INFO.
type KeyInfo struct {
	// State is fresh, stale, missing, loading (missing, a load is running),
	// cooldown (missing, loads paused after a failure) or negative
	// (missing, the origin said so recently).
	State string
	// FreshIn and StaleIn are the time left to the fresh and stale
	// deadlines; zero when past or when there is no entry, and -1 when the
	// entry has no such deadline.
	FreshIn, StaleIn time.Duration
	// Loader is the prefix of the key's loader, if one is registered, else
	// AppLoader if the application fills the key (FILL.LEASE).
	Loader string
	// InFlight: a load runs, or the application holds the key's lease.
	InFlight bool
	// Tags are the origin's tags of the key's entry, which PURGE.TAG names.
	Tags []string
}

// Info returns key's read-through state without touching hit counters.
func (f *Filler) Info(key string) KeyInfo {
	now := f.now()
	env, found := f.opts.Store.Peek([]byte(key))
	_, _, cooling := f.cooldown.Check(key, now)
	leasing := f.leaseActive(key)
	in := KeyInfo{InFlight: f.group.InFlight(key) || leasing}
	switch ld, ok := f.opts.Loaders.Lookup(key); {
	case ok:
		in.Loader = ld.Prefix()
	case leasing || found && env.Fill != nil && env.Fill.Loader == AppLoader:
		in.Loader = AppLoader
	}
	left := func(deadline int64) time.Duration {
		switch {
		case !found:
			return 0
		case deadline == 0:
			return -1
		}
		return max(time.Duration(deadline-now.UnixNano()), 0)
	}
	in.FreshIn, in.StaleIn = left(env.FreshUntil), left(env.StaleUntil)
	if found {
		in.Tags = f.tags.of(key, env)
	}
	switch Decide(env, found, now.UnixNano(), false) {
	case Serve:
		in.State = "fresh"
	case ServeAndRefresh:
		in.State = "stale"
	default:
		switch {
		case in.InFlight:
			in.State = "loading"
		case cooling:
			in.State = "cooldown"
		case f.isNegative(key, now):
			in.State = "negative"
		default:
			in.State = "missing"
		}
	}
	return in
}

// Waiters reports how many callers wait for key's flight. Tests read it to
// know a caller is waiting before they let the origin answer.
func (f *Filler) Waiters(key string) int { return f.group.Waiters(key) }
