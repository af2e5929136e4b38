// Package readthrough is stampedeless's own family of commands: GETFILL
// and MGETFILL (read-through from a registered loader), FILL.LEASE,
// FILL.SET and FILL.ABORT (the same for values the application computes),
// FILL.INFO, PURGE.TAG and LOADER.REGISTER, UNREGISTER and LIST, and
// INFO's stampede section. It is the one family that imports swr and
// loader: its handlers ask the Filler and turn its answers and errors into
// replies; where a call may wait they hand the wait to the client
// (commands.Client.Await), which runs it outside the atomic section.
package readthrough

import (
	"log/slog"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/radar"
	"github.com/stampedeless/stampedeless/swr"
)

// Options are what the family serves with; all but LoaderCommands are
// required.
type Options struct {
	// Filler is database 0's; a command in another database asks that
	// database's (Filler.DB).
	Filler  *swr.Filler
	Loaders *loader.Registry
	// Metrics are the read-through counters INFO's stampede section reads.
	Metrics *metrics.Fill
	Logger  *slog.Logger
	// Radar is the stampede radar FILL.TOP and FILL.RADAR read; nil:
	// they answer empty.
	Radar *radar.Tracker
	// Replica names this replica in FILL.TOP's and FILL.RADAR's replies
	// (the fleet's replica id with --redis; empty alone): with --redis
	// each replica shows its own view.
	Replica string
	// LoaderCommands says who may register loaders: LoaderCommandsNo,
	// LoaderCommandsYes, or (if empty) LoaderCommandsLocal.
	LoaderCommands string
}

// family is the family's handlers, with what they serve with.
type family struct{ opts Options }

// filler is the Filler of the database c's command runs in: each database
// is a read-through cache of its own.
func (f *family) filler(c *commands.Ctx) *swr.Filler { return f.opts.Filler.DB(c.Store.Index()) }

// Commands are the family's commands, for the server's table.
func Commands(opts Options) []*commands.Spec {
	f := &family{opts: opts}
	return []*commands.Spec{
		{Name: "getfill", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.TrackRead, FirstKey: 1, LastKey: 1, Step: 1, Handler: f.cmdGetFill, ACL: acl.Read,
			Group: "string", Summary: "Returns the value of a key, loading it from its origin on a miss with one load per key; serves stale values within the grace while one refresh runs.",
			Usage: "key ttl grace [TIMEOUT ms] [EARLY beta]", Own: true, Since: "0.1.0"},
		{Name: "mgetfill", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.TrackRead | commands.NoScript | commands.MovableKeys, Handler: f.cmdMGetFill, KeysOf: mgetfillKeys,
			Group: "string", Summary: "Returns the values of keys, loading the missing ones from their origins with one load per key, the keys of a batch loader in requests of many keys.",
			Usage: "ttl grace [TIMEOUT ms] key [key ...]", Own: true, Since: "0.3.0"},
		{Name: "purge.tag", Arity: -2, Flags: commands.OwnSection | commands.Write | commands.NoScript, Handler: f.cmdPurgeTag,
			Group: "generic", Summary: "Deletes every key its origin tagged with any of the tags, or with SOFT makes them stale while one refresh runs; fleet-wide with --redis.",
			Usage: "[SOFT] tag [tag ...]", Own: true, Since: "0.3.0"},
		{Name: "fill.lease", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.TrackRead | commands.NoScript, FirstKey: 1, LastKey: 1, Step: 1, Handler: f.cmdFillLease,
			Group: "string", Summary: "Returns the value of a key the application fills, or a lease to fill it: one caller per key fills while the others wait or are served the stale value.",
			Usage: "key ttl grace [TIMEOUT ms] [LEASE ms]", Own: true, Since: "0.2.0"},
		{Name: "fill.set", Arity: -4, Flags: commands.OwnSection | commands.Write | commands.DenyOOM, FirstKey: 1, LastKey: 1, Step: 1, Handler: f.cmdFillSet,
			Group: "string", Summary: "Stores the value of a key under its fill lease and wakes the callers waiting for it.",
			Usage: "key token value [NOTFOUND]", Own: true, Since: "0.2.0"},
		{Name: "fill.abort", Arity: -3, Flags: commands.OwnSection | commands.Write, FirstKey: 1, LastKey: 1, Step: 1, Handler: f.cmdFillAbort,
			Group: "string", Summary: "Gives up a fill lease: its waiters get the failure and the key cools down.",
			Usage: "key token [message]", Own: true, Since: "0.2.0"},
		{Name: "fill.info", Arity: 2, Flags: commands.Readonly, FirstKey: 1, LastKey: 1, Step: 1, Handler: f.cmdFillInfo,
			Group: "string", Summary: "Describes a key's read-through state: fresh, stale, missing, loading or cooldown, its deadlines and its origin tags.",
			Usage: "key", Own: true, Since: "0.1.0"},
		{Name: "fill.top", Arity: -1, Flags: commands.Readonly | commands.Loading | commands.Stale, Handler: f.cmdFillTop,
			Group: "server", Summary: "Lists the keys with the most origin calls, coalesced waiters, stale answers, failures or load time over the last minute or ten (the stampede radar), among those the caller may read.",
			Usage: "[BY calls|waiters|stale|failures|latency] [COUNT n] [WINDOW 1m|10m]", Own: true, Since: "0.4.0"},
		{Name: "fill.radar", Arity: -1, Flags: commands.Readonly | commands.Loading | commands.Stale, Handler: f.cmdFillRadar,
			Group: "server", Summary: "Returns the stampede radar's loader health (in flight, calls, failures, cooldowns, p50/p99 load time) and reads against origin calls second by second.",
			Usage: "[WINDOW 1m|10m]", Own: true, Since: "0.4.0"},
		{Name: "loader.register", Arity: -3, Flags: commands.Admin | commands.NoScript, Handler: f.cmdLoaderRegister, KeyPrefix: 1,
			Group: "server", Summary: "Registers the origin URL that fills keys with a prefix.",
			Usage: "prefix url [TIMEOUT ms] [CONCURRENCY n] [BATCH n] [HEADER name value ...]", Own: true, Since: "0.1.0"},
		{Name: "loader.unregister", Arity: 2, Flags: commands.Admin | commands.NoScript, Handler: f.cmdLoaderUnregister, KeyPrefix: 1,
			Group: "server", Summary: "Removes the loader of a prefix.", Usage: "prefix", Own: true, Since: "0.1.0"},
		{Name: "loader.list", Arity: 1, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: f.cmdLoaderList,
			Group: "server", Summary: "Lists the registered loaders with their counters.", Own: true, Since: "0.1.0"},
	}
}

// InfoSections are the family's sections of INFO: stampede, each
// loader's read-through counters.
func InfoSections(opts Options) []commands.InfoSection {
	f := &family{opts: opts}
	return []commands.InfoSection{{Name: "stampede", Write: f.infoStampede}}
}
