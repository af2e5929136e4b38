package commands

// Flags describe a command to COMMAND INFO and to the dispatcher.
type Flags uint32

const (
	Write           Flags = 1 << iota // changes the keyspace
	Readonly                          // reads the keyspace
	Fast                              // O(1) or O(log n)
	NoAuth                            // allowed before AUTH
	Admin                             // administrative
	DenyOOM                           // may grow memory
	Loading                           // allowed while loading (always, here)
	Stale                             // allowed with stale data (always, here)
	PubSub                            // a pub/sub command
	NoScript                          // scripts may not call it
	AllowBusy                         // runs while a script is busy
	SkipMonitor                       // not shown to MONITOR (EVAL)
	SkipSlowlog                       // not logged by SLOWLOG (EXEC: its commands are)
	NoMandatoryKeys                   // may be called without keys (EVAL)
	MovableKeys                       // its keys are found by parsing its arguments (EVAL's numkeys)
	NoMulti                           // refused inside MULTI (SHUTDOWN)
	Blocking                          // may block the client (BLPOP)
	// SubscriberOK: allowed to a RESP2 connection in subscriber mode.
	// Not a Redis flag: COMMAND INFO does not show it.
	SubscriberOK

	// Not shown by COMMAND INFO:
	NoQueue // runs at once inside MULTI instead of being queued
	// TrackRead: CLIENT TRACKING remembers the keys of this command,
	// which writes but answers its key's value as a read does (GETFILL,
	// FILL.LEASE).
	TrackRead
	// MayReplicate: may change state without writing keys (PUBLISH,
	// EVAL), so read-only scripts may not call it. A Redis flag that
	// Redis hides from COMMAND INFO too.
	MayReplicate
	// OwnSection: outside EXEC and scripts the handler runs outside
	// the store's atomic section, where it may wait: its store writes go
	// through the read-through layer, which enters the section around
	// each one and talks to the fleet outside it (swr.Caller), or it
	// enters the section itself around its store calls and waits between
	// them (MIGRATE, for its target).
	OwnSection
	// Protected: refused unless its enable-*-command setting allows the
	// connection (DEBUG, MODULE LOAD). A Redis flag that Redis hides from
	// COMMAND INFO too.
	Protected
)

// FlagNames are the flags COMMAND INFO shows, with Redis's names.
var FlagNames = []struct {
	Flag Flags
	Name string
}{
	// In the order of Redis's flag bits, which COMMAND INFO lists them in.
	{Write, "write"}, {Readonly, "readonly"}, {DenyOOM, "denyoom"},
	{Admin, "admin"}, {PubSub, "pubsub"}, {NoScript, "noscript"}, {Blocking, "blocking"},
	{Loading, "loading"}, {Stale, "stale"}, {SkipMonitor, "skip_monitor"},
	{SkipSlowlog, "skip_slowlog"},
	{Fast, "fast"}, {NoAuth, "no_auth"}, {NoMandatoryKeys, "no_mandatory_keys"},
	{NoMulti, "no_multi"}, {MovableKeys, "movablekeys"}, {AllowBusy, "allow_busy"},
}

// ScriptFlags are the flags the commands running a script share, Redis's.
const ScriptFlags = NoScript | SkipMonitor | NoMandatoryKeys | Stale | MovableKeys
