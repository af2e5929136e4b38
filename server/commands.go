package server

import (
	"fmt"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/resp"
)

// command is one entry of the server's command table: a family's Spec and
// what the server keeps beside it.
type command struct {
	*commands.Spec
	// subcommands are the Spec's, as entries of the table.
	subcommands []*command
	// aclCommand is the command in the ACL table, set by buildTable.
	aclCommand *acl.Command
	counters   counters
}

// counters are a command's metric children: calls that replied, calls that
// replied an error, and calls refused before they ran (Redis's
// rejected_calls: arity, authentication, permissions, a full store...).
// A subcommand has its own, as Redis's commandstats count it.
type counters struct {
	ok, fail, rejected lazyCounter
	// The bases are the counters at the last CONFIG RESETSTAT, where
	// INFO's commandstats start from: /metrics' counters never reset.
	okBase, failBase, rejectedBase atomic.Int64
	// usec is the µs the calls took since the last CONFIG RESETSTAT, as
	// the clock the slow log reads measures them (none while neither the
	// slow log nor the latency monitor times calls).
	usec atomic.Int64
}

// commandTable lists the server's own commands, those of the connection
// and the server, and Redis Cluster's, which answer as a redis-server
// without cluster support does (clusterSpecs; the families bring theirs,
// Options.Commands). It is a
// function, not a variable, so the handlers it names can refer back to the
// table (COMMAND) without an initialisation cycle.
func commandTable() []*commands.Spec {
	return append([]*commands.Spec{
		// Connection.
		{Name: "ping", Arity: -1, Flags: commands.Fast | commands.SubscriberOK, Handler: conn(cmdPing),
			Group: "connection", Summary: "Returns the server's liveliness response.", Usage: "[message]", Since: "1.0.0"},
		{Name: "echo", Arity: 2, Flags: commands.Fast | commands.Stale, Handler: conn(cmdEcho),
			Group: "connection", Summary: "Returns the given string.", Usage: "message", Since: "1.0.0"},
		{Name: "quit", Arity: -1, Flags: commands.Fast | commands.NoAuth | commands.Stale | commands.Loading | commands.SubscriberOK | commands.NoQueue | commands.NoScript | commands.AllowBusy, Handler: conn(cmdQuit),
			Group: "connection", Summary: "Closes the connection.", Since: "1.0.0"},
		{Name: "select", Arity: 2, Flags: commands.Fast | commands.Stale | commands.Loading, Handler: conn(cmdSelect),
			Group: "connection", Summary: "Changes the selected database for the current connection.", Usage: "index", Since: "1.0.0"},
		{Name: "auth", Arity: -2, Flags: commands.Fast | commands.NoAuth | commands.Stale | commands.Loading | commands.NoScript | commands.AllowBusy, Handler: conn(cmdAuth),
			Group: "connection", Summary: "Authenticates the connection.", Usage: "[username] password", Since: "1.0.0"},
		{Name: "hello", Arity: -1, Flags: commands.Fast | commands.NoAuth | commands.Stale | commands.Loading | commands.NoScript | commands.AllowBusy, Handler: conn(cmdHello),
			Group: "connection", Summary: "Handshakes with the server and selects the protocol, RESP2 or RESP3.", Usage: "[protover [AUTH username password] [SETNAME clientname]]", Since: "6.0.0"},
		{Name: "client", Arity: -2, Flags: commands.Stale | commands.Loading, Subcommands: []*commands.Spec{
			{Name: "client|caching", Arity: 3, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientCaching)},
			{Name: "client|getname", Arity: 2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientGetName)},
			{Name: "client|getredir", Arity: 2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientGetRedir)},
			{Name: "client|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdClientHelp)},
			{Name: "client|id", Arity: 2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientID)},
			{Name: "client|info", Arity: 2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientInfo)},
			{Name: "client|kill", Arity: -3, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientKill)},
			{Name: "client|list", Arity: -2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientList)},
			{Name: "client|no-evict", Arity: 3, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientNoEvict)},
			{Name: "client|no-touch", Arity: 3, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientNoTouch)},
			{Name: "client|pause", Arity: -3, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale, Handler: conn(cmdClientPause)},
			{Name: "client|unpause", Arity: 2, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale, Handler: conn(cmdClientUnpause)},
			{Name: "client|reply", Arity: 3, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientReply)},
			{Name: "client|setinfo", Arity: 4, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientSetInfo)},
			{Name: "client|setname", Arity: 3, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientSetName)},
			{Name: "client|tracking", Arity: -3, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientTracking)},
			{Name: "client|trackinginfo", Arity: 2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientTrackingInfo)},
			{Name: "client|unblock", Arity: -3, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdClientUnblock)},
		},
			Group: "connection", Summary: "Connection commands: SETNAME, GETNAME, ID, SETINFO, LIST, INFO, KILL, PAUSE, UNPAUSE, NO-EVICT, NO-TOUCH, TRACKING, CACHING, GETREDIR, TRACKINGINFO, UNBLOCK.", Usage: "subcommand [argument ...]", Since: "2.4.0"},
		{Name: "reset", Arity: 1, Flags: commands.Fast | commands.NoAuth | commands.Loading | commands.Stale | commands.SubscriberOK | commands.NoQueue | commands.NoScript | commands.AllowBusy, Handler: conn(cmdReset),
			Group: "connection", Summary: "Resets the connection: RESP2, no name, logged out if a password is required.", Since: "6.2.0"},

		// Pub/sub.
		{Name: "subscribe", Arity: -2, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.SubscriberOK | commands.NoScript, Handler: conn(cmdSubscribe), Channels: commands.ChannelsSubscribe,
			Group: "pubsub", Summary: "Listens for messages published to channels.", Usage: "channel [channel ...]", Since: "2.0.0"},
		{Name: "unsubscribe", Arity: -1, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.SubscriberOK | commands.NoScript, Handler: conn(cmdUnsubscribe),
			Group: "pubsub", Summary: "Stops listening to messages posted to channels.", Usage: "[channel [channel ...]]", Since: "2.0.0"},
		{Name: "psubscribe", Arity: -2, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.SubscriberOK | commands.NoScript, Handler: conn(cmdPSubscribe), Channels: commands.ChannelsPatterns,
			Group: "pubsub", Summary: "Listens for messages published to channels that match one or more patterns.", Usage: "pattern [pattern ...]", Since: "2.0.0"},
		{Name: "punsubscribe", Arity: -1, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.SubscriberOK | commands.NoScript, Handler: conn(cmdPUnsubscribe),
			Group: "pubsub", Summary: "Stops listening to messages published to channels that match one or more patterns.", Usage: "[pattern [pattern ...]]", Since: "2.0.0"},
		{Name: "ssubscribe", Arity: -2, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.SubscriberOK | commands.NoScript, FirstKey: 1, LastKey: -1, Step: 1, Handler: conn(cmdSSubscribe), Channels: commands.ChannelsSubscribe, KeySpecs: []commands.KeySpec{{Flags: commands.KNotKey, Index: 1, LastKey: -1}},
			Group: "pubsub", Summary: "Listens for messages published to shard channels.", Usage: "shardchannel [shardchannel ...]", Since: "7.0.0"},
		{Name: "sunsubscribe", Arity: -1, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.SubscriberOK | commands.NoScript, FirstKey: 1, LastKey: -1, Step: 1, Handler: conn(cmdSUnsubscribe), KeySpecs: []commands.KeySpec{{Flags: commands.KNotKey, Index: 1, LastKey: -1}},
			Group: "pubsub", Summary: "Stops listening to messages posted to shard channels.", Usage: "[shardchannel [shardchannel ...]]", Since: "7.0.0"},
		{Name: "publish", Arity: 3, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.Fast | commands.MayReplicate, Handler: conn(cmdPublish), Channels: commands.ChannelsPublish,
			Group: "pubsub", Summary: "Posts a message to a channel.", Usage: "channel message", Since: "2.0.0"},
		{Name: "spublish", Arity: 3, Flags: commands.PubSub | commands.Loading | commands.Stale | commands.Fast | commands.MayReplicate, FirstKey: 1, LastKey: 1, Step: 1, Handler: conn(cmdSPublish), Channels: commands.ChannelsPublish, KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KNotKey)},
			Group: "pubsub", Summary: "Post a message to a shard channel", Usage: "shardchannel message", Since: "7.0.0"},
		{Name: "pubsub", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "pubsub|channels", Arity: -2, Flags: commands.PubSub | commands.Loading | commands.Stale, Handler: conn(cmdPubSubChannels)},
			{Name: "pubsub|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdPubSubHelp)},
			{Name: "pubsub|numpat", Arity: 2, Flags: commands.PubSub | commands.Loading | commands.Stale, Handler: conn(cmdPubSubNumPat)},
			{Name: "pubsub|numsub", Arity: -2, Flags: commands.PubSub | commands.Loading | commands.Stale, Handler: conn(cmdPubSubNumSub)},
			{Name: "pubsub|shardchannels", Arity: -2, Flags: commands.PubSub | commands.Loading | commands.Stale, Handler: conn(cmdPubSubShardChannels)},
			{Name: "pubsub|shardnumsub", Arity: -2, Flags: commands.PubSub | commands.Loading | commands.Stale, Handler: conn(cmdPubSubShardNumSub)},
		},
			Group: "pubsub", Summary: "Pub/sub introspection: CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB.", Usage: "subcommand [argument ...]", Since: "2.8.0"},

		// Generic.
		{Name: "wait", Arity: 3, Flags: commands.NoScript, Handler: conn(cmdWait), ACL: acl.Connection, ACLNoGroup: true,
			Group: "generic", Summary: "Blocks until writes reach replicas; there are none, so it answers 0 at once.", Usage: "numreplicas timeout", Since: "3.0.0"},

		// Transactions.
		{Name: "multi", Arity: 1, Flags: commands.Fast | commands.Loading | commands.Stale | commands.NoQueue | commands.NoScript | commands.AllowBusy, Handler: conn(cmdMulti),
			Group: "transactions", Summary: "Starts a transaction.", Since: "1.2.0"},
		{Name: "exec", Arity: 1, Flags: commands.Loading | commands.Stale | commands.NoQueue | commands.NoScript | commands.SkipSlowlog, Handler: conn(cmdExec),
			Group: "transactions", Summary: "Executes all commands in a transaction.", Since: "1.2.0"},
		{Name: "discard", Arity: 1, Flags: commands.Fast | commands.Loading | commands.Stale | commands.NoQueue | commands.NoScript | commands.AllowBusy, Handler: conn(cmdDiscard),
			Group: "transactions", Summary: "Discards a transaction.", Since: "2.0.0"},
		{Name: "watch", Arity: -2, Flags: commands.Fast | commands.Loading | commands.Stale | commands.NoQueue | commands.NoScript | commands.AllowBusy, FirstKey: 1, LastKey: -1, Step: 1, Handler: conn(cmdWatch), Access: commands.KeysNone, KeySpecs: []commands.KeySpec{{Flags: commands.KRO, Index: 1, LastKey: -1}},
			Group: "transactions", Summary: "Monitors changes to keys to determine the execution of a transaction.", Usage: "key [key ...]", Since: "2.2.0"},
		{Name: "unwatch", Arity: 1, Flags: commands.Fast | commands.Loading | commands.Stale | commands.NoScript | commands.AllowBusy, Handler: conn(cmdUnwatch),
			Group: "transactions", Summary: "Forgets about watched keys of a transaction.", Since: "2.2.0"},

		// Scripting.
		{Name: "eval", Arity: -3, Flags: commands.ScriptFlags | commands.MayReplicate, Handler: conn(cmdEval), KeysOf: evalKeys, Script: true, KeySpecs: []commands.KeySpec{{Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", Flags: commands.KRW | commands.KAccess | commands.KUpdate, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1}},
			Group: "scripting", Summary: "Executes a server-side Lua script.", Usage: "script numkeys [key [key ...]] [arg [arg ...]]", Since: "2.6.0"},
		{Name: "evalsha", Arity: -3, Flags: commands.ScriptFlags | commands.MayReplicate, Handler: conn(cmdEvalSHA), KeysOf: evalKeys, Script: true, KeySpecs: []commands.KeySpec{{Flags: commands.KRW | commands.KAccess | commands.KUpdate, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1}},
			Group: "scripting", Summary: "Executes a server-side Lua script by SHA1 digest.", Usage: "sha1 numkeys [key [key ...]] [arg [arg ...]]", Since: "2.6.0"},
		{Name: "eval_ro", Arity: -3, Flags: commands.ScriptFlags | commands.Readonly, Handler: conn(cmdEvalRO), KeysOf: evalKeys, Script: true, KeySpecs: []commands.KeySpec{{Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", Flags: commands.KRO | commands.KAccess, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1}},
			Group: "scripting", Summary: "Executes a read-only server-side Lua script.", Usage: "script numkeys [key [key ...]] [arg [arg ...]]", Since: "7.0.0"},
		{Name: "evalsha_ro", Arity: -3, Flags: commands.ScriptFlags | commands.Readonly, Handler: conn(cmdEvalSHARO), KeysOf: evalKeys, Script: true, KeySpecs: []commands.KeySpec{{Flags: commands.KRO | commands.KAccess, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1}},
			Group: "scripting", Summary: "Executes a read-only server-side Lua script by SHA1 digest.", Usage: "sha1 numkeys [key [key ...]] [arg [arg ...]]", Since: "7.0.0"},
		{Name: "fcall", Arity: -3, Flags: commands.ScriptFlags | commands.MayReplicate, Handler: conn(cmdFCall), KeysOf: evalKeys, Script: true, KeySpecs: []commands.KeySpec{{Notes: "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE", Flags: commands.KRW | commands.KAccess | commands.KUpdate, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1}},
			Group: "scripting", Summary: "Invokes a function.", Usage: "function numkeys [key [key ...]] [arg [arg ...]]", Since: "7.0.0"},
		{Name: "fcall_ro", Arity: -3, Flags: commands.ScriptFlags | commands.Readonly, Handler: conn(cmdFCallRO), KeysOf: evalKeys, Script: true, KeySpecs: []commands.KeySpec{{Notes: "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS", Flags: commands.KRO | commands.KAccess, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1}},
			Group: "scripting", Summary: "Invokes a read-only function.", Usage: "function numkeys [key [key ...]] [arg [arg ...]]", Since: "7.0.0"},
		{Name: "function", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "function|delete", Arity: 3, Flags: commands.NoScript, Handler: conn(cmdFunction), ACL: acl.Write},
			{Name: "function|dump", Arity: 2, Flags: commands.NoScript, Handler: conn(cmdFunction)},
			{Name: "function|flush", Arity: -2, Flags: commands.NoScript, Handler: conn(cmdFunction), ACL: acl.Write},
			{Name: "function|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdFunction)},
			{Name: "function|kill", Arity: 2, Flags: commands.NoScript | commands.AllowBusy, Handler: conn(cmdFunction)},
			{Name: "function|list", Arity: -2, Flags: commands.NoScript, Handler: conn(cmdFunction)},
			{Name: "function|load", Arity: -3, Flags: commands.NoScript, Handler: conn(cmdFunction), ACL: acl.Write},
			{Name: "function|restore", Arity: -3, Flags: commands.NoScript, Handler: conn(cmdFunction), ACL: acl.Write},
			{Name: "function|stats", Arity: 2, Flags: commands.NoScript | commands.AllowBusy, Handler: conn(cmdFunction)},
		},
			Group: "scripting", Summary: "Manages the libraries of functions: LOAD, DELETE, FLUSH, LIST, DUMP, RESTORE, STATS, KILL, HELP.", Usage: "subcommand [argument ...]", Since: "7.0.0"},
		{Name: "script", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "script|debug", Arity: 3, Flags: commands.NoScript, Handler: conn(cmdScript)},
			{Name: "script|exists", Arity: -3, Flags: commands.NoScript, Handler: conn(cmdScript)},
			{Name: "script|flush", Arity: -2, Flags: commands.NoScript, Handler: conn(cmdScript)},
			{Name: "script|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdScript)},
			{Name: "script|kill", Arity: 2, Flags: commands.NoScript | commands.AllowBusy, Handler: conn(cmdScript)},
			{Name: "script|load", Arity: 3, Flags: commands.NoScript | commands.Stale, Handler: conn(cmdScript)},
		},
			Group: "scripting", Summary: "Manages the script cache: LOAD, EXISTS, FLUSH, KILL, HELP.", Usage: "subcommand [argument ...]", Since: "2.6.0"},

		// Server.
		{Name: "shutdown", Arity: -1, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale | commands.NoMulti | commands.AllowBusy, Handler: conn(cmdShutdown), ACL: acl.Dangerous,
			Group: "server", Summary: "Stops the server gracefully, as SIGTERM does, saving a snapshot first when --dir is set (unless NOSAVE).", Usage: "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]", Since: "1.0.0"},
		{Name: "save", Arity: 1, Flags: commands.Admin | commands.NoScript | commands.NoMulti, Handler: conn(cmdSave),
			Group: "server", Summary: "Saves a snapshot of the store to --dir/--dbfilename (other clients are served meanwhile).", Since: "1.0.0"},
		{Name: "bgsave", Arity: -1, Flags: commands.Admin | commands.NoScript, Handler: conn(cmdBGSave),
			Group: "server", Summary: "Saves a snapshot in the background.", Usage: "[SCHEDULE]", Since: "1.0.0"},
		{Name: "lastsave", Arity: 1, Flags: commands.Loading | commands.Stale | commands.Fast, Handler: conn(cmdLastSave), ACL: acl.Admin | acl.Dangerous,
			Group: "server", Summary: "Returns the Unix time of the last successful save.", Since: "1.0.0"},
		{Name: "info", Arity: -1, Flags: commands.Loading | commands.Stale, Handler: conn(cmdInfo), ACL: acl.Dangerous,
			Group: "server", Summary: "Returns information and statistics about the server.", Usage: "[section [section ...]]", Since: "1.0.0"},
		{Name: "debug", Arity: -2, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale | commands.Protected, Handler: conn(cmdDebug), ACL: acl.Dangerous,
			Group: "server", Summary: "A container for debugging commands", Usage: "subcommand [argument ...]", Since: "1.0.0"},
		{Name: "role", Arity: 1, Flags: commands.NoScript | commands.Loading | commands.Stale | commands.Fast, Handler: conn(cmdRole), ACL: acl.Admin | acl.Dangerous,
			Group: "server", Summary: "Returns the replication role.", Since: "2.8.12"},
		{Name: "replicaof", Arity: 3, Flags: commands.Admin | commands.NoScript | commands.Stale, Handler: conn(cmdReplicaOf),
			Group: "server", Summary: "Configures a server as replica of another, or promotes it to a master: only NO ONE here.", Usage: "host port", Since: "5.0.0"},
		{Name: "slaveof", Arity: 3, Flags: commands.Admin | commands.NoScript | commands.Stale, Handler: conn(cmdReplicaOf),
			Group: "server", Summary: "Sets a Redis server as a replica of another, or promotes it to being a master: only NO ONE here.", Usage: "host port", Since: "1.0.0"},
		{Name: "module", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "module|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdModuleHelp)},
			{Name: "module|list", Arity: 2, Flags: commands.Admin | commands.NoScript, Handler: conn(cmdModuleList)},
			{Name: "module|load", Arity: -3, Flags: commands.Admin | commands.NoScript | commands.Protected, Handler: conn(cmdModuleLoad)},
			{Name: "module|loadex", Arity: -3, Flags: commands.Admin | commands.NoScript | commands.Protected, Handler: conn(cmdModuleLoad)},
			{Name: "module|unload", Arity: 3, Flags: commands.Admin | commands.NoScript | commands.Protected, Handler: conn(cmdModuleUnload)},
		},
			Group: "server", Summary: "Modules: LIST (none; no module can be loaded), LOAD, LOADEX, UNLOAD.", Usage: "subcommand [argument ...]", Since: "4.0.0"},
		{Name: "lolwut", Arity: -1, Flags: commands.Readonly | commands.Fast, Handler: conn(cmdLolwut),
			Group: "server", Summary: "Displays the server's version (and, in Redis, computer art).", Usage: "[VERSION version]", Since: "5.0.0"},
		{Name: "monitor", Arity: 1, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale, Handler: conn(cmdMonitor),
			Group: "server", Summary: "Listens for all requests received by the server in real time.", Since: "1.0.0"},
		{Name: "slowlog", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "slowlog|get", Arity: -2, Flags: commands.Admin | commands.Loading | commands.Stale, Handler: conn(cmdSlowlogGet)},
			{Name: "slowlog|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdSlowlogHelp)},
			{Name: "slowlog|len", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale, Handler: conn(cmdSlowlogLen)},
			{Name: "slowlog|reset", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale, Handler: conn(cmdSlowlogReset)},
		},
			Group: "server", Summary: "The slow log: GET, LEN, RESET.", Usage: "subcommand [argument ...]", Since: "2.2.12"},
		{Name: "latency", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "latency|doctor", Arity: 2, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale, Handler: conn(cmdLatencyDoctor)},
			{Name: "latency|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdLatencyHelp)},
			{Name: "latency|history", Arity: 3, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale, Handler: conn(cmdLatencyHistory)},
			{Name: "latency|latest", Arity: 2, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale, Handler: conn(cmdLatencyLatest)},
			{Name: "latency|reset", Arity: -2, Flags: commands.Admin | commands.NoScript | commands.Loading | commands.Stale, Handler: conn(cmdLatencyReset)},
		},
			Group: "server", Summary: "The latency monitor: LATEST, HISTORY, RESET, DOCTOR.", Usage: "subcommand [argument ...]", Since: "2.8.13"},
		{Name: "config", Arity: -2, Flags: commands.Admin | commands.Loading | commands.Stale, Subcommands: []*commands.Spec{
			{Name: "config|get", Arity: -3, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdConfigGet)},
			{Name: "config|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdConfigHelp)},
			{Name: "config|resetstat", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdConfigResetStat)},
			{Name: "config|rewrite", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdConfigRewrite)},
			{Name: "config|set", Arity: -4, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdConfigSet)},
		},
			Group: "server", Summary: "Reads or changes the run-time configuration: GET, SET, RESETSTAT, REWRITE.", Usage: "subcommand [argument ...]", Since: "2.0.0"},
		{Name: "memory", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "memory|doctor", Arity: 2, Handler: conn(cmdMemoryDoctor)},
			{Name: "memory|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdMemoryHelp)},
			{Name: "memory|malloc-stats", Arity: 2, Handler: conn(cmdMemoryMallocStats)},
			{Name: "memory|purge", Arity: 2, Handler: conn(cmdMemoryPurge)},
			{Name: "memory|stats", Arity: 2, Handler: conn(cmdMemoryStats)},
			{Name: "memory|usage", Arity: -3, Flags: commands.Readonly, FirstKey: 2, LastKey: 2, Step: 1, Handler: conn(cmdMemoryUsage), Access: commands.KeysNone, KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO)}},
		},
			Group: "server", Summary: "Memory introspection: USAGE (what a key is charged), STATS, DOCTOR, PURGE.", Usage: "subcommand [argument ...]", Since: "4.0.0"},
		{Name: "acl", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "acl|cat", Arity: -2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLCat)},
			{Name: "acl|deluser", Arity: -3, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLDelUser)},
			{Name: "acl|dryrun", Arity: -4, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLDryRun)},
			{Name: "acl|genpass", Arity: -2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLGenPass)},
			{Name: "acl|getuser", Arity: 3, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLGetUser)},
			{Name: "acl|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdACLHelp)},
			{Name: "acl|list", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLList)},
			{Name: "acl|load", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLLoad)},
			{Name: "acl|log", Arity: -2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLLog)},
			{Name: "acl|save", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLSave)},
			{Name: "acl|setuser", Arity: -3, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLSetUser)},
			{Name: "acl|users", Arity: 2, Flags: commands.Admin | commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLUsers)},
			{Name: "acl|whoami", Arity: 2, Flags: commands.Loading | commands.Stale | commands.NoScript, Handler: conn(cmdACLWhoAmI)},
		},
			Group: "server", Summary: "Users and their permissions: SETUSER, GETUSER, DELUSER, LIST, USERS, CAT, LOG, DRYRUN, WHOAMI, GENPASS, LOAD, SAVE.",
			Usage: "subcommand [argument ...]", Since: "6.0.0"},
		{Name: "command", Arity: -1, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommand), ACL: acl.Connection, Subcommands: []*commands.Spec{
			{Name: "command|count", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommandCount)},
			{Name: "command|docs", Arity: -2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommandDocs)},
			{Name: "command|getkeys", Arity: -4, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommandGetKeys)},
			{Name: "command|getkeysandflags", Arity: -4, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommandGetKeysAndFlags)},
			{Name: "command|help", Arity: 2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommandHelp)},
			{Name: "command|info", Arity: -2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommandInfo)},
			{Name: "command|list", Arity: -2, Flags: commands.Loading | commands.Stale, Handler: conn(cmdCommandList)},
		},
			Group: "server", Summary: "Returns detailed information about commands: COUNT, DOCS, INFO, LIST, GETKEYS, GETKEYSANDFLAGS.", Usage: "[subcommand [argument ...]]", Since: "2.8.13"},
	}, append(clusterSpecs(), migrateSpec())...)
}

// buildTable indexes the command table by name and resolves each command's
// and subcommand's metric children.
func buildTable(reg *metrics.Registry, specs []*commands.Spec) (map[string]*command, error) {
	table := make(map[string]*command, len(specs))
	for _, spec := range specs {
		if table[spec.Name] != nil {
			return nil, fmt.Errorf("server: the command %q is declared twice", spec.Name)
		}
		c := entry(spec)
		c.counters = newCounters(reg, c.Name)
		for _, sub := range spec.Subcommands {
			s := entry(sub)
			s.Group = c.Group
			s.ACL |= c.ACL
			s.counters = newCounters(reg, s.Name)
			c.subcommands = append(c.subcommands, s)
		}
		table[c.Name] = c
	}
	return table, nil
}

// newCounters are the metric children of the command named name: a
// subcommand is named container|subcommand, as Redis's commandstats name
// it.
func newCounters(reg *metrics.Registry, name string) counters {
	return counters{
		ok:       lazyCounter{vec: reg.Commands, labels: [2]string{name, "ok"}},
		fail:     lazyCounter{vec: reg.Commands, labels: [2]string{name, "error"}},
		rejected: lazyCounter{vec: reg.Commands, labels: [2]string{name, "rejected"}},
	}
}

// lazyCounter is one child of a counter vector, made on its first count,
// so that /metrics lists the commands and results that happened rather
// than every (sub)command's three; after that a count is one atomic load
// and the counter's add, with no label lookup.
type lazyCounter struct {
	vec    *prometheus.CounterVec
	labels [2]string
	child  atomic.Pointer[prometheus.Counter]
}

// Inc counts one.
func (l *lazyCounter) Inc() {
	c := l.child.Load()
	if c == nil {
		// Two first counts at once make the same child.
		made := l.vec.WithLabelValues(l.labels[0], l.labels[1])
		l.child.CompareAndSwap(nil, &made)
		c = l.child.Load()
	}
	(*c).Inc()
}

// value is the count so far.
func (l *lazyCounter) value() int64 {
	if c := l.child.Load(); c != nil {
		return int64(metrics.Value(*c))
	}
	return 0
}

// entry makes spec an entry of the table, copied: the table changes its
// subcommands' group and categories, and the caller's Specs stay as given.
func entry(spec *commands.Spec) *command {
	s := *spec
	return &command{Spec: &s}
}

// conn adapts a handler of the server's own, which needs the connection, to
// a Spec's Handler: the Ctx's Client is the connection.
func conn(h func(c *Conn, args [][]byte)) commands.Handler {
	return func(x *commands.Ctx, args [][]byte) { h(x.Client.(*Conn), args) }
}

// usesKeyspace reports whether cmd reads or writes keys, and so runs inside
// the store's atomic section.
func (cmd *command) usesKeyspace() bool {
	return !cmd.Script && (cmd.hasKeys() || cmd.Flags&(commands.Write|commands.Readonly) != 0)
}

// hasKeys reports whether some of cmd's arguments are keys: those at fixed
// positions (firstKey) or those keysOf finds, but not shard channels,
// which COMMAND INFO shows as keys and Redis's key specs mark not-key. It
// is the one such test: the ACL, tracking, the shared tier (shared,
// faultKeys) and COMMAND GETKEYS all ask it, and all take the keys from
// cmd.keys, so that no two of them can disagree on which arguments are
// keys (SINTERCARD once went through the shared tier inside MULTI only).
func (cmd *command) hasKeys() bool {
	return (cmd.FirstKey > 0 || cmd.KeysOf != nil) && cmd.Flags&commands.PubSub == 0
}

// arityOK reports whether a command of n arguments, its name included,
// has cmd's arity.
func (cmd *command) arityOK(n int) bool {
	return (cmd.Arity <= 0 || n == cmd.Arity) && n >= -cmd.Arity
}

// subcommand returns the subcommand named name, in any case, or nil.
func (cmd *command) subcommand(name []byte) *command {
	prefix := len(cmd.Name) + 1 // "client|"
	for _, sub := range cmd.subcommands {
		if resp.EqualFold(name, sub.Name[prefix:]) {
			return sub
		}
	}
	return nil
}
