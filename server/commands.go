package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/metrics"
)

// flags describe a command to COMMAND INFO and to the dispatcher.
type flags uint32

const (
	flagWrite           flags = 1 << iota // changes the keyspace
	flagReadonly                          // reads the keyspace
	flagFast                              // O(1) or O(log n)
	flagNoAuth                            // allowed before AUTH
	flagAdmin                             // administrative
	flagDenyOOM                           // may grow memory
	flagLoading                           // allowed while loading (always, here)
	flagStale                             // allowed with stale data (always, here)
	flagPubSub                            // a pub/sub command
	flagNoScript                          // scripts may not call it
	flagAllowBusy                         // runs while a script is busy
	flagSkipMonitor                       // not shown to MONITOR (EVAL)
	flagSkipSlowlog                       // not logged by SLOWLOG (EXEC: its commands are)
	flagNoMandatoryKeys                   // may be called without keys (EVAL)
	flagMovableKeys                       // its keys are found by parsing its arguments (EVAL's numkeys)
	flagNoMulti                           // refused inside MULTI (SHUTDOWN)
	flagBlocking                          // may block the client (BLPOP)
	// flagSubscriberOK: allowed to a RESP2 connection in subscriber mode.
	// Not a Redis flag: COMMAND INFO does not show it.
	flagSubscriberOK

	// Not shown by COMMAND INFO:
	flagNoQueue // runs at once inside MULTI instead of being queued
	// flagTrackRead: CLIENT TRACKING remembers the keys of this command,
	// which writes but answers its key's value as a read does (GETFILL,
	// FILL.LEASE).
	flagTrackRead
	// flagMayReplicate: may change state without writing keys (PUBLISH,
	// EVAL), so read-only scripts may not call it. A Redis flag that
	// Redis hides from COMMAND INFO too.
	flagMayReplicate
	// flagOwnSection: outside EXEC and scripts the handler runs outside
	// the store's atomic section, where it may wait: its store writes go
	// through the read-through layer, which enters the section around
	// each one and talks to the fleet outside it (swr.Caller).
	flagOwnSection
)

var flagNames = []struct {
	f    flags
	name string
}{
	// In the order of Redis's flag bits, which COMMAND INFO lists them in.
	{flagWrite, "write"}, {flagReadonly, "readonly"}, {flagDenyOOM, "denyoom"},
	{flagAdmin, "admin"}, {flagPubSub, "pubsub"}, {flagNoScript, "noscript"}, {flagBlocking, "blocking"},
	{flagLoading, "loading"}, {flagStale, "stale"}, {flagSkipMonitor, "skip_monitor"},
	{flagSkipSlowlog, "skip_slowlog"},
	{flagFast, "fast"}, {flagNoAuth, "no_auth"}, {flagNoMandatoryKeys, "no_mandatory_keys"},
	{flagNoMulti, "no_multi"}, {flagMovableKeys, "movablekeys"}, {flagAllowBusy, "allow_busy"},
}

// scriptFlags are the flags the commands running a script share, Redis's.
const scriptFlags = flagNoScript | flagSkipMonitor | flagNoMandatoryKeys | flagStale | flagMovableKeys

// command is one entry of the command table.
type command struct {
	name  string
	arity int // n: exactly n arguments with the name; -n: at least n
	flags flags
	// Key positions for COMMAND INFO: first and last argument index that
	// is a key (last -1: to the end) and the step between keys.
	firstKey, lastKey, step int

	handler func(c *Conn, args [][]byte)

	// subcommands, for a container such as CLIENT, are the commands its
	// first argument names, each with its full name ("client|list"),
	// arity and flags, as in Redis 7. A container's handler, if any, runs
	// when no subcommand is given (COMMAND alone).
	subcommands []*command

	// Documentation for COMMAND DOCS, which redis-cli turns into help and
	// argument hints. usage is the argument syntax as Redis's docs print it.
	group   string
	summary string
	usage   string
	since   string

	// acl are the command's ACL categories beyond those categories() derives
	// from its flags and group (@dangerous on KEYS, say). A container's are
	// its subcommands' too.
	acl acl.Category
	// aclNoGroup: the group adds no category; acl says them all (WAIT is
	// in Redis's generic group, yet @connection rather than @keyspace).
	aclNoGroup bool
	// access says what the command does to its keys, for %R~ and %W~ key
	// patterns; varAccess, if set, says it for one call (SET with GET reads).
	access    keyAccess
	varAccess func(args [][]byte) keyAccess
	// channels says which arguments are pub/sub channels, for & patterns.
	channels channelArgs
	// keyPrefix, if not 0, is the argument that names a key prefix whose
	// keys the command changes (LOADER.REGISTER's): the ACL lets it run
	// only for a user who may write every key under the prefix.
	keyPrefix int
	// aclCommand is the command in the ACL table, set by buildTable.
	aclCommand *acl.Command

	// own marks stampedeless's commands, which Redis does not have.
	own bool
	// flush marks the commands that empty the keyspace (FLUSHALL,
	// FLUSHDB), which --redis mode writes through as a flush.
	flush bool
	// keysOf, if set, finds the keys of a command with movable keys
	// (EVAL's numkeys, MGETFILL's options before its keys); firstKey is
	// 0 then, as COMMAND INFO shows, and flagMovableKeys is set.
	keysOf func(args [][]byte) [][]byte
	// script marks the commands that run a script, which take the
	// section exclusively themselves (scripting.go).
	script bool

	// blind, if set, reports whether a call's reply and effect do not depend
	// on its keys' current values (SET without NX/XX/GET/KEEPTTL, MSET), so
	// --redis mode need not fetch them from the shared tier first.
	blind func(args [][]byte) bool

	counters counters
}

// counters are a command's pre-resolved metric children, so counting a call
// costs one atomic add and no label lookup.
type counters struct {
	ok, fail prometheus.Counter
}

// commandTable lists every command. It is a function, not a variable, so the
// handlers it names can refer back to the table (COMMAND) without an
// initialisation cycle.
func commandTable() []*command {
	return []*command{
		// Connection.
		{name: "ping", arity: -1, flags: flagFast | flagSubscriberOK, handler: cmdPing,
			group: "connection", summary: "Returns the server's liveliness response.", usage: "[message]", since: "1.0.0"},
		{name: "echo", arity: 2, flags: flagFast | flagStale, handler: cmdEcho,
			group: "connection", summary: "Returns the given string.", usage: "message", since: "1.0.0"},
		{name: "quit", arity: -1, flags: flagFast | flagNoAuth | flagStale | flagLoading | flagSubscriberOK | flagNoQueue | flagNoScript | flagAllowBusy, handler: cmdQuit,
			group: "connection", summary: "Closes the connection.", since: "1.0.0"},
		{name: "select", arity: 2, flags: flagFast | flagStale | flagLoading, handler: cmdSelect,
			group: "connection", summary: "Changes the selected database; only database 0 exists.", usage: "index", since: "1.0.0"},
		{name: "auth", arity: -2, flags: flagFast | flagNoAuth | flagStale | flagLoading | flagNoScript | flagAllowBusy, handler: cmdAuth,
			group: "connection", summary: "Authenticates the connection.", usage: "[username] password", since: "1.0.0"},
		{name: "hello", arity: -1, flags: flagFast | flagNoAuth | flagStale | flagLoading | flagNoScript | flagAllowBusy, handler: cmdHello,
			group: "connection", summary: "Handshakes with the server and selects the protocol, RESP2 or RESP3.", usage: "[protover [AUTH username password] [SETNAME clientname]]", since: "6.0.0"},
		{name: "client", arity: -2, flags: flagStale | flagLoading, subcommands: []*command{
			{name: "client|caching", arity: 3, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientCaching},
			{name: "client|getname", arity: 2, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientGetName},
			{name: "client|getredir", arity: 2, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientGetRedir},
			{name: "client|help", arity: 2, flags: flagLoading | flagStale, handler: cmdClientHelp},
			{name: "client|id", arity: 2, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientID},
			{name: "client|info", arity: 2, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientInfo},
			{name: "client|kill", arity: -3, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdClientKill},
			{name: "client|list", arity: -2, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdClientList},
			{name: "client|no-evict", arity: 3, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdClientNoEvict},
			{name: "client|no-touch", arity: 3, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientNoTouch},
			{name: "client|reply", arity: 3, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientReply},
			{name: "client|setinfo", arity: 4, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientSetInfo},
			{name: "client|setname", arity: 3, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientSetName},
			{name: "client|tracking", arity: -3, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientTracking},
			{name: "client|trackinginfo", arity: 2, flags: flagLoading | flagStale | flagNoScript, handler: cmdClientTrackingInfo},
			{name: "client|unblock", arity: -3, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdClientUnblock},
		},
			group: "connection", summary: "Connection commands: SETNAME, GETNAME, ID, SETINFO, LIST, INFO, KILL, NO-EVICT, NO-TOUCH, TRACKING, CACHING, GETREDIR, TRACKINGINFO, UNBLOCK.", usage: "subcommand [argument ...]", since: "2.4.0"},
		{name: "reset", arity: 1, flags: flagFast | flagNoAuth | flagLoading | flagStale | flagSubscriberOK | flagNoQueue | flagNoScript | flagAllowBusy, handler: cmdReset,
			group: "connection", summary: "Resets the connection: RESP2, no name, logged out if a password is required.", since: "6.2.0"},

		// Pub/sub.
		{name: "subscribe", arity: -2, flags: flagPubSub | flagLoading | flagStale | flagSubscriberOK | flagNoScript, handler: cmdSubscribe, channels: channelsSubscribe,
			group: "pubsub", summary: "Listens for messages published to channels.", usage: "channel [channel ...]", since: "2.0.0"},
		{name: "unsubscribe", arity: -1, flags: flagPubSub | flagLoading | flagStale | flagSubscriberOK | flagNoScript, handler: cmdUnsubscribe,
			group: "pubsub", summary: "Stops listening to messages posted to channels.", usage: "[channel [channel ...]]", since: "2.0.0"},
		{name: "psubscribe", arity: -2, flags: flagPubSub | flagLoading | flagStale | flagSubscriberOK | flagNoScript, handler: cmdPSubscribe, channels: channelsPatterns,
			group: "pubsub", summary: "Listens for messages published to channels that match one or more patterns.", usage: "pattern [pattern ...]", since: "2.0.0"},
		{name: "punsubscribe", arity: -1, flags: flagPubSub | flagLoading | flagStale | flagSubscriberOK | flagNoScript, handler: cmdPUnsubscribe,
			group: "pubsub", summary: "Stops listening to messages published to channels that match one or more patterns.", usage: "[pattern [pattern ...]]", since: "2.0.0"},
		{name: "ssubscribe", arity: -2, flags: flagPubSub | flagLoading | flagStale | flagSubscriberOK | flagNoScript, firstKey: 1, lastKey: -1, step: 1, handler: cmdSSubscribe, channels: channelsSubscribe,
			group: "pubsub", summary: "Listens for messages published to shard channels.", usage: "shardchannel [shardchannel ...]", since: "7.0.0"},
		{name: "sunsubscribe", arity: -1, flags: flagPubSub | flagLoading | flagStale | flagSubscriberOK | flagNoScript, firstKey: 1, lastKey: -1, step: 1, handler: cmdSUnsubscribe,
			group: "pubsub", summary: "Stops listening to messages posted to shard channels.", usage: "[shardchannel [shardchannel ...]]", since: "7.0.0"},
		{name: "publish", arity: 3, flags: flagPubSub | flagLoading | flagStale | flagFast | flagMayReplicate, handler: cmdPublish, channels: channelsPublish,
			group: "pubsub", summary: "Posts a message to a channel.", usage: "channel message", since: "2.0.0"},
		{name: "spublish", arity: 3, flags: flagPubSub | flagLoading | flagStale | flagFast | flagMayReplicate, firstKey: 1, lastKey: 1, step: 1, handler: cmdSPublish, channels: channelsPublish,
			group: "pubsub", summary: "Post a message to a shard channel", usage: "shardchannel message", since: "7.0.0"},
		{name: "pubsub", arity: -2, subcommands: []*command{
			{name: "pubsub|channels", arity: -2, flags: flagPubSub | flagLoading | flagStale, handler: cmdPubSubChannels},
			{name: "pubsub|help", arity: 2, flags: flagLoading | flagStale, handler: cmdPubSubHelp},
			{name: "pubsub|numpat", arity: 2, flags: flagPubSub | flagLoading | flagStale, handler: cmdPubSubNumPat},
			{name: "pubsub|numsub", arity: -2, flags: flagPubSub | flagLoading | flagStale, handler: cmdPubSubNumSub},
			{name: "pubsub|shardchannels", arity: -2, flags: flagPubSub | flagLoading | flagStale, handler: cmdPubSubShardChannels},
			{name: "pubsub|shardnumsub", arity: -2, flags: flagPubSub | flagLoading | flagStale, handler: cmdPubSubShardNumSub},
		},
			group: "pubsub", summary: "Pub/sub introspection: CHANNELS, NUMSUB, NUMPAT, SHARDCHANNELS, SHARDNUMSUB.", usage: "subcommand [argument ...]", since: "2.8.0"},

		// Strings.
		{name: "get", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdGet,
			group: "string", summary: "Returns the string value of a key.", usage: "key", since: "1.0.0"},
		{name: "set", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdSet, varAccess: setKeys, blind: setIsBlind,
			group: "string", summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
			usage: "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]", since: "1.0.0"},
		{name: "setex", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdSetEx, access: keysWrite, blind: always,
			group: "string", summary: "Sets the string value and expiration time of a key.", usage: "key seconds value", since: "2.0.0"},
		{name: "psetex", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdPSetEx, access: keysWrite, blind: always,
			group: "string", summary: "Sets both string value and expiration time in milliseconds of a key.", usage: "key milliseconds value", since: "2.6.0"},
		{name: "setnx", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSetNX, access: keysWrite,
			group: "string", summary: "Sets the string value of a key only when the key doesn't exist.", usage: "key value", since: "1.0.0"},
		{name: "getex", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetEx,
			group: "string", summary: "Returns the string value of a key after setting its expiration time.",
			usage: "key [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|PERSIST]", since: "6.2.0"},
		{name: "getdel", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetDel,
			group: "string", summary: "Returns the string value of a key after deleting the key.", usage: "key", since: "6.2.0"},
		{name: "getset", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetSet,
			group: "string", summary: "Returns the previous string value of a key after setting it to a new value.", usage: "key value", since: "1.0.0"},
		{name: "mget", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdMGet,
			group: "string", summary: "Atomically returns the string values of one or more keys.", usage: "key [key ...]", since: "1.0.0"},
		{name: "mset", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2, handler: cmdMSet, access: keysWrite, blind: always,
			group: "string", summary: "Atomically creates or modifies the string values of one or more keys.", usage: "key value [key value ...]", since: "1.0.1"},
		{name: "msetnx", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2, handler: cmdMSetNX, access: keysWrite,
			group: "string", summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.", usage: "key value [key value ...]", since: "1.0.1"},
		{name: "append", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdAppend, access: keysWrite,
			group: "string", summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.", usage: "key value", since: "2.0.0"},
		{name: "strlen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdStrlen, access: keysNone,
			group: "string", summary: "Returns the length of a string value.", usage: "key", since: "2.2.0"},
		{name: "getrange", arity: 4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetRange,
			group: "string", summary: "Returns a substring of the string stored at a key.", usage: "key start end", since: "2.4.0"},
		{name: "setrange", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdSetRange, access: keysWrite,
			group: "string", summary: "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", usage: "key offset value", since: "2.2.0"},
		{name: "incr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdIncr,
			group: "string", summary: "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", usage: "key", since: "1.0.0"},
		{name: "decr", arity: 2, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdDecr,
			group: "string", summary: "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", usage: "key", since: "1.0.0"},
		{name: "incrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdIncrBy,
			group: "string", summary: "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", usage: "key increment", since: "1.0.0"},
		{name: "decrby", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdDecrBy,
			group: "string", summary: "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", usage: "key decrement", since: "1.0.0"},
		{name: "incrbyfloat", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdIncrByFloat,
			group: "string", summary: "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", usage: "key increment", since: "2.6.0"},

		{name: "lcs", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 2, step: 1, handler: cmdLCS,
			group: "string", summary: "Finds the longest common substring.", usage: "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]", since: "7.0.0"},

		// Bitmaps.
		{name: "setbit", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdSetBit,
			group: "bitmap", summary: "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", usage: "key offset value", since: "2.2.0"},
		{name: "getbit", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetBit,
			group: "bitmap", summary: "Returns a bit value by offset.", usage: "key offset", since: "2.2.0"},
		{name: "bitcount", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdBitCount,
			group: "bitmap", summary: "Counts the number of set bits (population counting) in a string.", usage: "key [start end [BYTE|BIT]]", since: "2.6.0"},
		{name: "bitpos", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdBitPos,
			group: "bitmap", summary: "Finds the first set (1) or clear (0) bit in a string.", usage: "key bit [start [end [BYTE|BIT]]]", since: "2.8.7"},
		{name: "bitop", arity: -4, flags: flagWrite | flagDenyOOM, firstKey: 2, lastKey: -1, step: 1, handler: cmdBitOp, access: keysDestFirst,
			group: "bitmap", summary: "Performs bitwise operations on multiple strings, and stores the result.", usage: "(AND|OR|XOR|NOT) destkey key [key ...]", since: "2.6.0"},
		{name: "bitfield", arity: -2, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdBitField,
			group: "bitmap", summary: "Performs arbitrary bitfield integer operations on strings.",
			usage: "key [GET encoding offset] [SET encoding offset value] [INCRBY encoding offset increment] [OVERFLOW (WRAP|SAT|FAIL)]", since: "3.2.0"},
		{name: "bitfield_ro", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdBitFieldRO,
			group: "bitmap", summary: "Performs arbitrary read-only bitfield integer operations on strings.", usage: "key [GET encoding offset [GET encoding offset ...]]", since: "6.0.0"},

		// Hashes.
		{name: "hset", arity: -4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHSet, access: keysWrite,
			group: "hash", summary: "Creates or modifies the value of a field in a hash.", usage: "key field value [field value ...]", since: "2.0.0"},
		{name: "hsetnx", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHSetNX, access: keysWrite,
			group: "hash", summary: "Sets the value of a field in a hash only when the field doesn't exist.", usage: "key field value", since: "2.0.0"},
		{name: "hmset", arity: -4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHSet, access: keysWrite,
			group: "hash", summary: "Sets the values of multiple fields (deprecated: HSET takes several).", usage: "key field value [field value ...]", since: "2.0.0"},
		{name: "hget", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHGet,
			group: "hash", summary: "Returns the value of a field in a hash.", usage: "key field", since: "2.0.0"},
		{name: "hmget", arity: -3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHMGet,
			group: "hash", summary: "Returns the values of all fields in a hash.", usage: "key field [field ...]", since: "2.0.0"},
		{name: "hgetall", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdHGetAll,
			group: "hash", summary: "Returns all fields and values in a hash.", usage: "key", since: "2.0.0"},
		{name: "hkeys", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdHKeys,
			group: "hash", summary: "Returns all fields in a hash.", usage: "key", since: "2.0.0"},
		{name: "hvals", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdHVals,
			group: "hash", summary: "Returns all values in a hash.", usage: "key", since: "2.0.0"},
		{name: "hdel", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHDel, access: keysWrite,
			group: "hash", summary: "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", usage: "key field [field ...]", since: "2.0.0"},
		{name: "hexists", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHExists, access: keysNone,
			group: "hash", summary: "Determines whether a field exists in a hash.", usage: "key field", since: "2.0.0"},
		{name: "hlen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHLen, access: keysNone,
			group: "hash", summary: "Returns the number of fields in a hash.", usage: "key", since: "2.0.0"},
		{name: "hstrlen", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHStrLen, access: keysNone,
			group: "hash", summary: "Returns the length of the value of a field.", usage: "key field", since: "3.2.0"},
		{name: "hincrby", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHIncrBy,
			group: "hash", summary: "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", usage: "key field increment", since: "2.0.0"},
		{name: "hincrbyfloat", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdHIncrByFloat,
			group: "hash", summary: "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", usage: "key field increment", since: "2.6.0"},
		{name: "hscan", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdHScan,
			group: "hash", summary: "Iterates over fields and values of a hash.", usage: "key cursor [MATCH pattern] [COUNT count]", since: "2.8.0"},
		{name: "hrandfield", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdHRandField,
			group: "hash", summary: "Returns one or more random fields from a hash.", usage: "key [count [WITHVALUES]]", since: "6.2.0"},

		// Sets.
		{name: "sadd", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSAdd,
			group: "set", summary: "Add one or more members to a set", usage: "key member [member ...]", since: "1.0.0"},
		{name: "srem", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSRem,
			group: "set", summary: "Remove one or more members from a set", usage: "key member [member ...]", since: "1.0.0"},
		{name: "smembers", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdSMembers,
			group: "set", summary: "Get all the members in a set", usage: "key", since: "1.0.0"},
		{name: "sismember", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSIsMember,
			group: "set", summary: "Determine if a given value is a member of a set", usage: "key member", since: "1.0.0"},
		{name: "smismember", arity: -3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSMIsMember,
			group: "set", summary: "Returns the membership associated with the given elements for a set", usage: "key member [member ...]", since: "6.2.0"},
		{name: "scard", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSCard,
			group: "set", summary: "Get the number of members in a set", usage: "key", since: "1.0.0"},
		{name: "spop", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSPop,
			group: "set", summary: "Remove and return one or multiple random members from a set", usage: "key [count]", since: "1.0.0"},
		{name: "srandmember", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdSRandMember,
			group: "set", summary: "Get one or multiple random members from a set", usage: "key [count]", since: "1.0.0"},
		{name: "smove", arity: 4, flags: flagWrite | flagFast, firstKey: 1, lastKey: 2, step: 1, handler: cmdSMove, access: keysRename,
			group: "set", summary: "Move a member from one set to another", usage: "source destination member", since: "1.0.0"},
		{name: "sinter", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: -1, step: 1, handler: cmdSInter,
			group: "set", summary: "Intersect multiple sets", usage: "key [key ...]", since: "1.0.0"},
		{name: "sintercard", arity: -3, flags: flagReadonly | flagMovableKeys, handler: cmdSInterCard, keysOf: numKeysFirst,
			group: "set", summary: "Intersect multiple sets and return the cardinality of the result", usage: "numkeys key [key ...] [LIMIT limit]", since: "7.0.0"},
		{name: "sunion", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: -1, step: 1, handler: cmdSUnion,
			group: "set", summary: "Add multiple sets", usage: "key [key ...]", since: "1.0.0"},
		{name: "sdiff", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: -1, step: 1, handler: cmdSDiff,
			group: "set", summary: "Subtract multiple sets", usage: "key [key ...]", since: "1.0.0"},
		{name: "sinterstore", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 1, handler: cmdSInterStore, access: keysDestFirst,
			group: "set", summary: "Intersect multiple sets and store the resulting set in a key", usage: "destination key [key ...]", since: "1.0.0"},
		{name: "sunionstore", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 1, handler: cmdSUnionStore, access: keysDestFirst,
			group: "set", summary: "Add multiple sets and store the resulting set in a key", usage: "destination key [key ...]", since: "1.0.0"},
		{name: "sdiffstore", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 1, handler: cmdSDiffStore, access: keysDestFirst,
			group: "set", summary: "Subtract multiple sets and store the resulting set in a key", usage: "destination key [key ...]", since: "1.0.0"},
		{name: "sscan", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdSScan,
			group: "set", summary: "Incrementally iterate Set elements", usage: "key cursor [MATCH pattern] [COUNT count]", since: "2.8.0"},

		// Sorted sets.
		{name: "zadd", arity: -4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZAdd,
			group: "sorted-set", summary: "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", usage: "key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]", since: "1.2.0"},
		{name: "zincrby", arity: 4, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZIncrBy,
			group: "sorted-set", summary: "Increments the score of a member in a sorted set.", usage: "key increment member", since: "1.2.0"},
		{name: "zscore", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZScore,
			group: "sorted-set", summary: "Returns the score of a member in a sorted set.", usage: "key member", since: "1.2.0"},
		{name: "zmscore", arity: -3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZMScore,
			group: "sorted-set", summary: "Returns the score of one or more members in a sorted set.", usage: "key member [member ...]", since: "6.2.0"},
		{name: "zcard", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZCard, access: keysNone,
			group: "sorted-set", summary: "Returns the number of members in a sorted set.", usage: "key", since: "1.2.0"},
		{name: "zcount", arity: 4, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZCount,
			group: "sorted-set", summary: "Returns the count of members in a sorted set that have scores within a range.", usage: "key min max", since: "2.0.0"},
		{name: "zlexcount", arity: 4, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZLexCount,
			group: "sorted-set", summary: "Returns the number of members in a sorted set within a lexicographical range.", usage: "key min max", since: "2.8.9"},
		{name: "zrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRange,
			group: "sorted-set", summary: "Returns members in a sorted set within a range of indexes, scores or members.", usage: "key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]", since: "1.2.0"},
		{name: "zrangestore", arity: -5, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 2, step: 1, handler: cmdZRangeStore, access: keysDestFirst,
			group: "sorted-set", summary: "Stores a range of members from a sorted set in a key.", usage: "dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]", since: "6.2.0"},
		{name: "zrangebyscore", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRangeByScore,
			group: "sorted-set", summary: "Returns members in a sorted set within a range of scores.", usage: "key min max [WITHSCORES] [LIMIT offset count]", since: "1.0.5"},
		{name: "zrevrangebyscore", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRevRangeByScore,
			group: "sorted-set", summary: "Returns members in a sorted set within a range of scores in reverse order.", usage: "key max min [WITHSCORES] [LIMIT offset count]", since: "2.2.0"},
		{name: "zrangebylex", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRangeByLex,
			group: "sorted-set", summary: "Returns members in a sorted set within a lexicographical range.", usage: "key min max [LIMIT offset count]", since: "2.8.9"},
		{name: "zrevrangebylex", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRevRangeByLex,
			group: "sorted-set", summary: "Returns members in a sorted set within a lexicographical range in reverse order.", usage: "key max min [LIMIT offset count]", since: "2.8.9"},
		{name: "zrevrange", arity: -4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRevRange,
			group: "sorted-set", summary: "Returns members in a sorted set within a range of indexes in reverse order.", usage: "key start stop [WITHSCORES]", since: "1.2.0"},
		{name: "zrank", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRank,
			group: "sorted-set", summary: "Returns the index of a member in a sorted set ordered by ascending scores.", usage: "key member", since: "2.0.0"},
		{name: "zrevrank", arity: 3, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRevRank,
			group: "sorted-set", summary: "Returns the index of a member in a sorted set ordered by descending scores.", usage: "key member", since: "2.0.0"},
		{name: "zrem", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRem,
			group: "sorted-set", summary: "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", usage: "key member [member ...]", since: "1.2.0"},
		{name: "zremrangebyrank", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRemRangeByRank,
			group: "sorted-set", summary: "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", usage: "key start stop", since: "2.0.0"},
		{name: "zremrangebyscore", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRemRangeByScore,
			group: "sorted-set", summary: "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", usage: "key min max", since: "1.2.0"},
		{name: "zremrangebylex", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRemRangeByLex,
			group: "sorted-set", summary: "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", usage: "key min max", since: "2.8.9"},
		{name: "zpopmin", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZPopMin,
			group: "sorted-set", summary: "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", usage: "key [count]", since: "5.0.0"},
		{name: "zpopmax", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdZPopMax,
			group: "sorted-set", summary: "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", usage: "key [count]", since: "5.0.0"},
		{name: "zmpop", arity: -4, flags: flagWrite | flagMovableKeys, handler: cmdZMPop, keysOf: numKeysFirst,
			group: "sorted-set", summary: "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", usage: "numkeys key [key ...] MIN|MAX [COUNT count]", since: "7.0.0"},
		{name: "bzpopmin", arity: -3, flags: flagWrite | flagNoScript | flagFast | flagBlocking, firstKey: 1, lastKey: -2, step: 1, handler: cmdBZPopMin,
			group: "sorted-set", summary: "Removes and returns the member with the lowest score from one or more sorted sets, or blocks until one is available.", usage: "key [key ...] timeout", since: "5.0.0"},
		{name: "bzpopmax", arity: -3, flags: flagWrite | flagNoScript | flagFast | flagBlocking, firstKey: 1, lastKey: -2, step: 1, handler: cmdBZPopMax,
			group: "sorted-set", summary: "Removes and returns the member with the highest score from one or more sorted sets, or blocks until one is available.", usage: "key [key ...] timeout", since: "5.0.0"},
		{name: "bzmpop", arity: -5, flags: flagWrite | flagBlocking | flagMovableKeys, handler: cmdBZMPop, keysOf: numKeysSecond,
			group: "sorted-set", summary: "Removes and returns the members with the lowest or highest scores from one or more sorted sets, or blocks until one is available.", usage: "timeout numkeys key [key ...] MIN|MAX [COUNT count]", since: "7.0.0"},
		{name: "zrandmember", arity: -2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZRandMember,
			group: "sorted-set", summary: "Returns one or more random members from a sorted set.", usage: "key [count [WITHSCORES]]", since: "6.2.0"},
		{name: "zscan", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdZScan,
			group: "sorted-set", summary: "Iterates over members and scores of a sorted set.", usage: "key cursor [MATCH pattern] [COUNT count]", since: "2.8.0"},
		{name: "zunion", arity: -3, flags: flagReadonly | flagMovableKeys, handler: cmdZUnion, keysOf: numKeysFirst,
			group: "sorted-set", summary: "Returns the union of multiple sorted sets.", usage: "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]", since: "6.2.0"},
		{name: "zinter", arity: -3, flags: flagReadonly | flagMovableKeys, handler: cmdZInter, keysOf: numKeysFirst,
			group: "sorted-set", summary: "Returns the intersect of multiple sorted sets.", usage: "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]", since: "6.2.0"},
		{name: "zdiff", arity: -3, flags: flagReadonly | flagMovableKeys, handler: cmdZDiff, keysOf: numKeysFirst,
			group: "sorted-set", summary: "Returns the difference between multiple sorted sets.", usage: "numkeys key [key ...] [WITHSCORES]", since: "6.2.0"},
		{name: "zunionstore", arity: -4, flags: flagWrite | flagDenyOOM | flagMovableKeys, firstKey: 1, lastKey: 1, step: 1, handler: cmdZUnionStore, keysOf: zsetStoreKeys, access: keysDestFirst,
			group: "sorted-set", summary: "Stores the union of multiple sorted sets in a key.", usage: "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]", since: "2.0.0"},
		{name: "zinterstore", arity: -4, flags: flagWrite | flagDenyOOM | flagMovableKeys, firstKey: 1, lastKey: 1, step: 1, handler: cmdZInterStore, keysOf: zsetStoreKeys, access: keysDestFirst,
			group: "sorted-set", summary: "Stores the intersect of multiple sorted sets in a key.", usage: "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]", since: "2.0.0"},
		{name: "zdiffstore", arity: -4, flags: flagWrite | flagDenyOOM | flagMovableKeys, firstKey: 1, lastKey: 1, step: 1, handler: cmdZDiffStore, keysOf: zsetStoreKeys, access: keysDestFirst,
			group: "sorted-set", summary: "Stores the difference of multiple sorted sets in a key.", usage: "destination numkeys key [key ...]", since: "6.2.0"},
		{name: "zintercard", arity: -3, flags: flagReadonly | flagMovableKeys, handler: cmdZInterCard, keysOf: numKeysFirst,
			group: "sorted-set", summary: "Returns the number of members of the intersect of multiple sorted sets.", usage: "numkeys key [key ...] [LIMIT limit]", since: "7.0.0"},

		// HyperLogLog.
		{name: "pfadd", arity: -2, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPFAdd, access: keysWrite,
			group: "hyperloglog", summary: "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", usage: "key [element [element ...]]", since: "2.8.9"},
		{name: "pfcount", arity: -2, flags: flagReadonly | flagMayReplicate, firstKey: 1, lastKey: -1, step: 1, handler: cmdPFCount,
			group: "hyperloglog", summary: "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", usage: "key [key ...]", since: "2.8.9"},
		{name: "pfmerge", arity: -2, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 1, handler: cmdPFMerge, access: keysMerge,
			group: "hyperloglog", summary: "Merges one or more HyperLogLog values into a single key.", usage: "destkey [sourcekey [sourcekey ...]]", since: "2.8.9"},
		{name: "pfdebug", arity: 3, flags: flagWrite | flagDenyOOM | flagAdmin, firstKey: 2, lastKey: 2, step: 1, handler: cmdPFDebug, access: keysRead,
			group: "hyperloglog", summary: "Internal commands for debugging HyperLogLog values.", usage: "subcommand key", since: "2.8.9"},
		{name: "pfselftest", arity: 1, flags: flagAdmin, handler: cmdPFSelfTest,
			group: "hyperloglog", summary: "An internal command for testing HyperLogLog values.", since: "2.8.9"},
		// Lists.
		{name: "lpush", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdLPush, access: keysWrite,
			group: "list", summary: "Prepend one or multiple elements to a list", usage: "key element [element ...]", since: "1.0.0"},
		{name: "rpush", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdRPush, access: keysWrite,
			group: "list", summary: "Append one or multiple elements to a list", usage: "key element [element ...]", since: "1.0.0"},
		{name: "lpushx", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdLPushX, access: keysWrite,
			group: "list", summary: "Prepend an element to a list, only if the list exists", usage: "key element [element ...]", since: "2.2.0"},
		{name: "rpushx", arity: -3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdRPushX, access: keysWrite,
			group: "list", summary: "Append an element to a list, only if the list exists", usage: "key element [element ...]", since: "2.2.0"},
		{name: "lpop", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdLPop,
			group: "list", summary: "Remove and get the first elements in a list", usage: "key [count]", since: "1.0.0"},
		{name: "rpop", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdRPop,
			group: "list", summary: "Remove and get the last elements in a list", usage: "key [count]", since: "1.0.0"},
		{name: "llen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdLLen, access: keysNone,
			group: "list", summary: "Get the length of a list", usage: "key", since: "1.0.0"},
		{name: "lrange", arity: 4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdLRange,
			group: "list", summary: "Get a range of elements from a list", usage: "key start stop", since: "1.0.0"},
		{name: "lindex", arity: 3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdLIndex,
			group: "list", summary: "Get an element from a list by its index", usage: "key index", since: "1.0.0"},
		{name: "lset", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdLSet, access: keysWrite,
			group: "list", summary: "Set the value of an element in a list by its index", usage: "key index element", since: "1.0.0"},
		{name: "linsert", arity: 5, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdLInsert, access: keysWrite,
			group: "list", summary: "Insert an element before or after another element in a list", usage: "key BEFORE|AFTER pivot element", since: "2.2.0"},
		{name: "lrem", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, handler: cmdLRem, access: keysWrite,
			group: "list", summary: "Remove elements from a list", usage: "key count element", since: "1.0.0"},
		{name: "ltrim", arity: 4, flags: flagWrite, firstKey: 1, lastKey: 1, step: 1, handler: cmdLTrim, access: keysWrite,
			group: "list", summary: "Trim a list to the specified range", usage: "key start stop", since: "1.0.0"},
		{name: "lpos", arity: -3, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdLPos,
			group: "list", summary: "Return the index of matching elements on a list", usage: "key element [RANK rank] [COUNT num-matches] [MAXLEN len]", since: "6.0.6"},
		{name: "lmove", arity: 5, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 2, step: 1, handler: cmdLMove, access: keysRename,
			group: "list", summary: "Pop an element from a list, push it to another list and return it", usage: "source destination LEFT|RIGHT LEFT|RIGHT", since: "6.2.0"},
		{name: "rpoplpush", arity: 3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 2, step: 1, handler: cmdRPopLPush, access: keysRename,
			group: "list", summary: "Remove the last element in a list, prepend it to another list and return it", usage: "source destination", since: "1.2.0"},
		{name: "lmpop", arity: -4, flags: flagWrite | flagMovableKeys, handler: cmdLMPop, keysOf: numKeysFirst,
			group: "list", summary: "Pop elements from a list", usage: "numkeys key [key ...] LEFT|RIGHT [COUNT count]", since: "7.0.0"},
		{name: "blpop", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, firstKey: 1, lastKey: -2, step: 1, handler: cmdBLPop,
			group: "list", summary: "Remove and get the first element in a list, or block until one is available", usage: "key [key ...] timeout", since: "2.0.0"},
		{name: "brpop", arity: -3, flags: flagWrite | flagNoScript | flagBlocking, firstKey: 1, lastKey: -2, step: 1, handler: cmdBRPop,
			group: "list", summary: "Remove and get the last element in a list, or block until one is available", usage: "key [key ...] timeout", since: "2.0.0"},
		{name: "blmove", arity: 6, flags: flagWrite | flagDenyOOM | flagNoScript | flagBlocking, firstKey: 1, lastKey: 2, step: 1, handler: cmdBLMove, access: keysRename,
			group: "list", summary: "Pop an element from a list, push it to another list and return it; or block until one is available", usage: "source destination LEFT|RIGHT LEFT|RIGHT timeout", since: "6.2.0"},
		{name: "brpoplpush", arity: 4, flags: flagWrite | flagDenyOOM | flagNoScript | flagBlocking, firstKey: 1, lastKey: 2, step: 1, handler: cmdBRPopLPush, access: keysRename,
			group: "list", summary: "Pop an element from a list, push it to another list and return it; or block until one is available", usage: "source destination timeout", since: "2.2.0"},
		{name: "blmpop", arity: -5, flags: flagWrite | flagBlocking | flagMovableKeys, handler: cmdBLMPop, keysOf: numKeysSecond,
			group: "list", summary: "Pop elements from a list, or block until one is available", usage: "timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]", since: "7.0.0"},

		// Read-through.
		{name: "getfill", arity: -4, flags: flagWrite | flagDenyOOM | flagTrackRead, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetFill, acl: acl.Read,
			group: "string", summary: "Returns the value of a key, loading it from its origin on a miss with one load per key; serves stale values within the grace while one refresh runs.",
			usage: "key ttl grace [TIMEOUT ms] [EARLY beta]", own: true, since: "0.1.0"},
		{name: "mgetfill", arity: -4, flags: flagWrite | flagDenyOOM | flagTrackRead | flagNoScript | flagMovableKeys, handler: cmdMGetFill, keysOf: mgetfillKeys,
			group: "string", summary: "Returns the values of keys, loading the missing ones from their origins with one load per key, the keys of a batch loader in requests of many keys.",
			usage: "ttl grace [TIMEOUT ms] key [key ...]", own: true, since: "0.3.0"},
		{name: "purge.tag", arity: -2, flags: flagOwnSection | flagWrite | flagNoScript, handler: cmdPurgeTag,
			group: "generic", summary: "Deletes every key its origin tagged with any of the tags, or with SOFT makes them stale while one refresh runs; fleet-wide with --redis.",
			usage: "[SOFT] tag [tag ...]", own: true, since: "0.3.0"},
		{name: "fill.lease", arity: -4, flags: flagWrite | flagDenyOOM | flagTrackRead | flagNoScript, firstKey: 1, lastKey: 1, step: 1, handler: cmdFillLease,
			group: "string", summary: "Returns the value of a key the application fills, or a lease to fill it: one caller per key fills while the others wait or are served the stale value.",
			usage: "key ttl grace [TIMEOUT ms] [LEASE ms]", own: true, since: "0.2.0"},
		{name: "fill.set", arity: -4, flags: flagOwnSection | flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdFillSet,
			group: "string", summary: "Stores the value of a key under its fill lease and wakes the callers waiting for it.",
			usage: "key token value [NOTFOUND]", own: true, since: "0.2.0"},
		{name: "fill.abort", arity: -3, flags: flagOwnSection | flagWrite, firstKey: 1, lastKey: 1, step: 1, handler: cmdFillAbort,
			group: "string", summary: "Gives up a fill lease: its waiters get the failure and the key cools down.",
			usage: "key token [message]", own: true, since: "0.2.0"},
		{name: "fill.info", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdFillInfo,
			group: "string", summary: "Describes a key's read-through state: fresh, stale, missing, loading or cooldown, its deadlines and its origin tags.",
			usage: "key", own: true, since: "0.1.0"},
		{name: "loader.register", arity: -3, flags: flagAdmin | flagNoScript, handler: cmdLoaderRegister, keyPrefix: 1,
			group: "server", summary: "Registers the origin URL that fills keys with a prefix.",
			usage: "prefix url [TIMEOUT ms] [CONCURRENCY n] [BATCH n] [HEADER name value ...]", own: true, since: "0.1.0"},
		{name: "loader.unregister", arity: 2, flags: flagAdmin | flagNoScript, handler: cmdLoaderUnregister, keyPrefix: 1,
			group: "server", summary: "Removes the loader of a prefix.", usage: "prefix", own: true, since: "0.1.0"},
		{name: "loader.list", arity: 1, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdLoaderList,
			group: "server", summary: "Lists the registered loaders with their counters.", own: true, since: "0.1.0"},

		// Keys.
		{name: "del", arity: -2, flags: flagWrite, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel, access: keysWrite,
			group: "generic", summary: "Deletes one or more keys.", usage: "key [key ...]", since: "1.0.0"},
		{name: "unlink", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel, access: keysWrite,
			group: "generic", summary: "Deletes one or more keys.", usage: "key [key ...]", since: "4.0.0"},
		{name: "exists", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdExists, access: keysNone,
			group: "generic", summary: "Determines whether one or more keys exist.", usage: "key [key ...]", since: "1.0.0"},
		{name: "type", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdType, access: keysNone,
			group: "generic", summary: "Determines the type of value stored at a key.", usage: "key", since: "1.0.0"},
		{name: "touch", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdTouch, access: keysNone,
			group: "generic", summary: "Returns the number of existing keys out of those specified after updating the time they were last accessed.", usage: "key [key ...]", since: "3.2.1"},
		{name: "expire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdExpire, access: keysWrite,
			group: "generic", summary: "Sets the expiration time of a key in seconds.", usage: "key seconds [NX|XX|GT|LT]", since: "1.0.0"},
		{name: "pexpire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPExpire, access: keysWrite,
			group: "generic", summary: "Sets the expiration time of a key in milliseconds.", usage: "key milliseconds [NX|XX|GT|LT]", since: "2.6.0"},
		{name: "expireat", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdExpireAt, access: keysWrite,
			group: "generic", summary: "Sets the expiration time of a key to a Unix timestamp.", usage: "key unix-time-seconds [NX|XX|GT|LT]", since: "1.2.0"},
		{name: "pexpireat", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPExpireAt, access: keysWrite,
			group: "generic", summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.", usage: "key unix-time-milliseconds [NX|XX|GT|LT]", since: "2.6.0"},
		{name: "ttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdTTL,
			group: "generic", summary: "Returns the expiration time in seconds of a key.", usage: "key", since: "1.0.0"},
		{name: "pttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPTTL,
			group: "generic", summary: "Returns the expiration time in milliseconds of a key.", usage: "key", since: "2.6.0"},
		{name: "expiretime", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdExpireTime,
			group: "generic", summary: "Returns the expiration time of a key as a Unix timestamp.", usage: "key", since: "7.0.0"},
		{name: "pexpiretime", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPExpireTime,
			group: "generic", summary: "Returns the expiration time of a key as a Unix milliseconds timestamp.", usage: "key", since: "7.0.0"},
		{name: "persist", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPersist, access: keysWrite,
			group: "generic", summary: "Removes the expiration time of a key.", usage: "key", since: "2.2.0"},
		{name: "rename", arity: 3, flags: flagWrite, firstKey: 1, lastKey: 2, step: 1, handler: cmdRename, access: keysRename,
			group: "generic", summary: "Renames a key and overwrites the destination.", usage: "key newkey", since: "1.0.0"},
		{name: "renamenx", arity: 3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 2, step: 1, handler: cmdRenameNX, access: keysRename,
			group: "generic", summary: "Renames a key only when the target key name doesn't exist.", usage: "key newkey", since: "1.0.0"},
		{name: "dump", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdDump,
			group: "generic", summary: "Returns a serialized representation of the value stored at a key (Redis's RDB serialization).", usage: "key", since: "2.6.0"},
		{name: "restore", arity: -4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdRestore, access: keysWrite, acl: acl.Dangerous,
			group: "generic", summary: "Creates a key from the serialized representation of a value (DUMP's, here or from redis-server).", usage: "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]", since: "2.6.0"},
		{name: "copy", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 2, step: 1, handler: cmdCopy, access: keysCopy,
			group: "generic", summary: "Copies the value of a key to a new key.", usage: "source destination [DB destination-db] [REPLACE]", since: "6.2.0"},
		{name: "object", arity: -2, subcommands: []*command{
			{name: "object|encoding", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectEncoding},
			{name: "object|freq", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectFreq},
			{name: "object|help", arity: 2, flags: flagLoading | flagStale, handler: cmdObjectHelp},
			{name: "object|idletime", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectIdleTime},
			{name: "object|refcount", arity: 3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, handler: cmdObjectRefCount},
		},
			group: "generic", summary: "Introspects a key's value: ENCODING, REFCOUNT, FREQ, IDLETIME.", usage: "subcommand key", since: "2.2.3"},
		{name: "wait", arity: 3, flags: flagNoScript, handler: cmdWait, acl: acl.Connection, aclNoGroup: true,
			group: "generic", summary: "Blocks until writes reach replicas; there are none, so it answers 0 at once.", usage: "numreplicas timeout", since: "3.0.0"},
		{name: "keys", arity: 2, flags: flagReadonly, handler: cmdKeys, acl: acl.Dangerous,
			group: "generic", summary: "Returns all key names that match a pattern.", usage: "pattern", since: "1.0.0"},
		{name: "scan", arity: -2, flags: flagReadonly, handler: cmdScan,
			group: "generic", summary: "Iterates over the key names in the database.", usage: "cursor [MATCH pattern] [COUNT count] [TYPE type]", since: "2.8.0"},
		{name: "randomkey", arity: 1, flags: flagReadonly, handler: cmdRandomKey,
			group: "generic", summary: "Returns a random key name from the database.", since: "1.0.0"},

		// Transactions.
		{name: "multi", arity: 1, flags: flagFast | flagLoading | flagStale | flagNoQueue | flagNoScript | flagAllowBusy, handler: cmdMulti,
			group: "transactions", summary: "Starts a transaction.", since: "1.2.0"},
		{name: "exec", arity: 1, flags: flagLoading | flagStale | flagNoQueue | flagNoScript | flagSkipSlowlog, handler: cmdExec,
			group: "transactions", summary: "Executes all commands in a transaction.", since: "1.2.0"},
		{name: "discard", arity: 1, flags: flagFast | flagLoading | flagStale | flagNoQueue | flagNoScript | flagAllowBusy, handler: cmdDiscard,
			group: "transactions", summary: "Discards a transaction.", since: "2.0.0"},
		{name: "watch", arity: -2, flags: flagFast | flagLoading | flagStale | flagNoQueue | flagNoScript | flagAllowBusy, firstKey: 1, lastKey: -1, step: 1, handler: cmdWatch,
			group: "transactions", summary: "Monitors changes to keys to determine the execution of a transaction.", usage: "key [key ...]", since: "2.2.0"},
		{name: "unwatch", arity: 1, flags: flagFast | flagLoading | flagStale | flagNoScript | flagAllowBusy, handler: cmdUnwatch,
			group: "transactions", summary: "Forgets about watched keys of a transaction.", since: "2.2.0"},

		// Scripting.
		{name: "eval", arity: -3, flags: scriptFlags | flagMayReplicate, handler: cmdEval, keysOf: evalKeys, script: true,
			group: "scripting", summary: "Executes a server-side Lua script.", usage: "script numkeys [key [key ...]] [arg [arg ...]]", since: "2.6.0"},
		{name: "evalsha", arity: -3, flags: scriptFlags | flagMayReplicate, handler: cmdEvalSHA, keysOf: evalKeys, script: true,
			group: "scripting", summary: "Executes a server-side Lua script by SHA1 digest.", usage: "sha1 numkeys [key [key ...]] [arg [arg ...]]", since: "2.6.0"},
		{name: "eval_ro", arity: -3, flags: scriptFlags | flagReadonly, handler: cmdEvalRO, keysOf: evalKeys, script: true,
			group: "scripting", summary: "Executes a read-only server-side Lua script.", usage: "script numkeys [key [key ...]] [arg [arg ...]]", since: "7.0.0"},
		{name: "evalsha_ro", arity: -3, flags: scriptFlags | flagReadonly, handler: cmdEvalSHARO, keysOf: evalKeys, script: true,
			group: "scripting", summary: "Executes a read-only server-side Lua script by SHA1 digest.", usage: "sha1 numkeys [key [key ...]] [arg [arg ...]]", since: "7.0.0"},
		{name: "fcall", arity: -3, flags: scriptFlags | flagMayReplicate, handler: cmdFCall, keysOf: evalKeys, script: true,
			group: "scripting", summary: "Invokes a function.", usage: "function numkeys [key [key ...]] [arg [arg ...]]", since: "7.0.0"},
		{name: "fcall_ro", arity: -3, flags: scriptFlags | flagReadonly, handler: cmdFCallRO, keysOf: evalKeys, script: true,
			group: "scripting", summary: "Invokes a read-only function.", usage: "function numkeys [key [key ...]] [arg [arg ...]]", since: "7.0.0"},
		{name: "function", arity: -2, subcommands: []*command{
			{name: "function|delete", arity: 3, flags: flagNoScript, handler: cmdFunction, acl: acl.Write},
			{name: "function|dump", arity: 2, flags: flagNoScript, handler: cmdFunction},
			{name: "function|flush", arity: -2, flags: flagNoScript, handler: cmdFunction, acl: acl.Write},
			{name: "function|help", arity: 2, flags: flagLoading | flagStale, handler: cmdFunction},
			{name: "function|kill", arity: 2, flags: flagNoScript | flagAllowBusy, handler: cmdFunction},
			{name: "function|list", arity: -2, flags: flagNoScript, handler: cmdFunction},
			{name: "function|load", arity: -3, flags: flagNoScript, handler: cmdFunction, acl: acl.Write},
			{name: "function|restore", arity: -3, flags: flagNoScript, handler: cmdFunction, acl: acl.Write},
			{name: "function|stats", arity: 2, flags: flagNoScript | flagAllowBusy, handler: cmdFunction},
		},
			group: "scripting", summary: "Manages the libraries of functions: LOAD, DELETE, FLUSH, LIST, DUMP, RESTORE, STATS, KILL, HELP.", usage: "subcommand [argument ...]", since: "7.0.0"},
		{name: "script", arity: -2, subcommands: []*command{
			{name: "script|debug", arity: 3, flags: flagNoScript, handler: cmdScript},
			{name: "script|exists", arity: -3, flags: flagNoScript, handler: cmdScript},
			{name: "script|flush", arity: -2, flags: flagNoScript, handler: cmdScript},
			{name: "script|help", arity: 2, flags: flagLoading | flagStale, handler: cmdScript},
			{name: "script|kill", arity: 2, flags: flagNoScript | flagAllowBusy, handler: cmdScript},
			{name: "script|load", arity: 3, flags: flagNoScript | flagStale, handler: cmdScript},
		},
			group: "scripting", summary: "Manages the script cache: LOAD, EXISTS, FLUSH, KILL, HELP.", usage: "subcommand [argument ...]", since: "2.6.0"},

		// Server.
		{name: "dbsize", arity: 1, flags: flagReadonly | flagFast, handler: cmdDBSize, acl: acl.Keyspace,
			group: "server", summary: "Returns the number of keys in the database.", since: "1.0.0"},
		{name: "flushdb", arity: -1, flags: flagWrite, handler: cmdFlush, flush: true, acl: acl.Keyspace | acl.Dangerous,
			group: "server", summary: "Removes all keys from the current database.", usage: "[ASYNC|SYNC]", since: "1.0.0"},
		{name: "shutdown", arity: -1, flags: flagAdmin | flagNoScript | flagLoading | flagStale | flagNoMulti | flagAllowBusy, handler: cmdShutdown, acl: acl.Dangerous,
			group: "server", summary: "Stops the server gracefully, as SIGTERM does, saving a snapshot first when --dir is set (unless NOSAVE).", usage: "[NOSAVE|SAVE] [NOW] [FORCE] [ABORT]", since: "1.0.0"},
		{name: "save", arity: 1, flags: flagAdmin | flagNoScript | flagNoMulti, handler: cmdSave,
			group: "server", summary: "Saves a snapshot of the store to --dir/--dbfilename (other clients are served meanwhile).", since: "1.0.0"},
		{name: "bgsave", arity: -1, flags: flagAdmin | flagNoScript, handler: cmdBGSave,
			group: "server", summary: "Saves a snapshot in the background.", usage: "[SCHEDULE]", since: "1.0.0"},
		{name: "lastsave", arity: 1, flags: flagLoading | flagStale | flagFast, handler: cmdLastSave, acl: acl.Admin | acl.Dangerous,
			group: "server", summary: "Returns the Unix time of the last successful save.", since: "1.0.0"},
		{name: "flushall", arity: -1, flags: flagWrite, handler: cmdFlush, flush: true, acl: acl.Keyspace | acl.Dangerous,
			group: "server", summary: "Removes all keys from all databases.", usage: "[ASYNC|SYNC]", since: "1.0.0"},
		{name: "time", arity: 1, flags: flagFast | flagLoading | flagStale, handler: cmdTime,
			group: "server", summary: "Returns the server time.", since: "2.6.0"},
		{name: "info", arity: -1, flags: flagLoading | flagStale, handler: cmdInfo, acl: acl.Dangerous,
			group: "server", summary: "Returns information and statistics about the server.", usage: "[section [section ...]]", since: "1.0.0"},
		{name: "monitor", arity: 1, flags: flagAdmin | flagNoScript | flagLoading | flagStale, handler: cmdMonitor,
			group: "server", summary: "Listens for all requests received by the server in real time.", since: "1.0.0"},
		{name: "slowlog", arity: -2, subcommands: []*command{
			{name: "slowlog|get", arity: -2, flags: flagAdmin | flagLoading | flagStale, handler: cmdSlowlogGet},
			{name: "slowlog|help", arity: 2, flags: flagLoading | flagStale, handler: cmdSlowlogHelp},
			{name: "slowlog|len", arity: 2, flags: flagAdmin | flagLoading | flagStale, handler: cmdSlowlogLen},
			{name: "slowlog|reset", arity: 2, flags: flagAdmin | flagLoading | flagStale, handler: cmdSlowlogReset},
		},
			group: "server", summary: "The slow log: GET, LEN, RESET.", usage: "subcommand [argument ...]", since: "2.2.12"},
		{name: "latency", arity: -2, subcommands: []*command{
			{name: "latency|doctor", arity: 2, flags: flagAdmin | flagNoScript | flagLoading | flagStale, handler: cmdLatencyDoctor},
			{name: "latency|help", arity: 2, flags: flagLoading | flagStale, handler: cmdLatencyHelp},
			{name: "latency|history", arity: 3, flags: flagAdmin | flagNoScript | flagLoading | flagStale, handler: cmdLatencyHistory},
			{name: "latency|latest", arity: 2, flags: flagAdmin | flagNoScript | flagLoading | flagStale, handler: cmdLatencyLatest},
			{name: "latency|reset", arity: -2, flags: flagAdmin | flagNoScript | flagLoading | flagStale, handler: cmdLatencyReset},
		},
			group: "server", summary: "The latency monitor: LATEST, HISTORY, RESET, DOCTOR.", usage: "subcommand [argument ...]", since: "2.8.13"},
		{name: "config", arity: -2, flags: flagAdmin | flagLoading | flagStale, subcommands: []*command{
			{name: "config|get", arity: -3, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdConfigGet},
			{name: "config|help", arity: 2, flags: flagLoading | flagStale, handler: cmdConfigHelp},
			{name: "config|resetstat", arity: 2, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdConfigResetStat},
			{name: "config|set", arity: -4, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdConfigSet},
		},
			group: "server", summary: "Reads or changes the run-time configuration: GET, SET, RESETSTAT.", usage: "subcommand [argument ...]", since: "2.0.0"},
		{name: "memory", arity: -2, subcommands: []*command{
			{name: "memory|doctor", arity: 2, handler: cmdMemoryDoctor},
			{name: "memory|help", arity: 2, flags: flagLoading | flagStale, handler: cmdMemoryHelp},
			{name: "memory|malloc-stats", arity: 2, handler: cmdMemoryMallocStats},
			{name: "memory|purge", arity: 2, handler: cmdMemoryPurge},
			{name: "memory|stats", arity: 2, handler: cmdMemoryStats},
			{name: "memory|usage", arity: -3, flags: flagReadonly, firstKey: 2, lastKey: 2, step: 1, handler: cmdMemoryUsage},
		},
			group: "server", summary: "Memory introspection: USAGE (what a key is charged), STATS, DOCTOR, PURGE.", usage: "subcommand [argument ...]", since: "4.0.0"},
		{name: "acl", arity: -2, subcommands: []*command{
			{name: "acl|cat", arity: -2, flags: flagLoading | flagStale | flagNoScript, handler: cmdACLCat},
			{name: "acl|deluser", arity: -3, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLDelUser},
			{name: "acl|dryrun", arity: -4, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLDryRun},
			{name: "acl|genpass", arity: -2, flags: flagLoading | flagStale | flagNoScript, handler: cmdACLGenPass},
			{name: "acl|getuser", arity: 3, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLGetUser},
			{name: "acl|help", arity: 2, flags: flagLoading | flagStale, handler: cmdACLHelp},
			{name: "acl|list", arity: 2, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLList},
			{name: "acl|load", arity: 2, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLLoad},
			{name: "acl|log", arity: -2, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLLog},
			{name: "acl|save", arity: 2, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLSave},
			{name: "acl|setuser", arity: -3, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLSetUser},
			{name: "acl|users", arity: 2, flags: flagAdmin | flagLoading | flagStale | flagNoScript, handler: cmdACLUsers},
			{name: "acl|whoami", arity: 2, flags: flagLoading | flagStale | flagNoScript, handler: cmdACLWhoAmI},
		},
			group: "server", summary: "Users and their permissions: SETUSER, GETUSER, DELUSER, LIST, USERS, CAT, LOG, DRYRUN, WHOAMI, GENPASS, LOAD, SAVE.",
			usage: "subcommand [argument ...]", since: "6.0.0"},
		{name: "command", arity: -1, flags: flagLoading | flagStale, handler: cmdCommand, acl: acl.Connection, subcommands: []*command{
			{name: "command|count", arity: 2, flags: flagLoading | flagStale, handler: cmdCommandCount},
			{name: "command|docs", arity: -2, flags: flagLoading | flagStale, handler: cmdCommandDocs},
			{name: "command|getkeys", arity: -4, flags: flagLoading | flagStale, handler: cmdCommandGetKeys},
			{name: "command|help", arity: 2, flags: flagLoading | flagStale, handler: cmdCommandHelp},
			{name: "command|info", arity: -2, flags: flagLoading | flagStale, handler: cmdCommandInfo},
			{name: "command|list", arity: -2, flags: flagLoading | flagStale, handler: cmdCommandList},
		},
			group: "server", summary: "Returns detailed information about commands: COUNT, DOCS, INFO, LIST, GETKEYS.", usage: "[subcommand [argument ...]]", since: "2.8.13"},
	}
}

// buildTable indexes the command table by name and resolves each command's
// metric children; subcommands are counted as their container.
func buildTable(reg *metrics.Registry) map[string]*command {
	table := make(map[string]*command)
	for _, c := range commandTable() {
		c.counters = counters{
			ok:   reg.Commands.WithLabelValues(c.name, "ok"),
			fail: reg.Commands.WithLabelValues(c.name, "error"),
		}
		for _, sub := range c.subcommands {
			sub.group = c.group
			sub.acl |= c.acl
		}
		table[c.name] = c
	}
	return table
}

// usesKeyspace reports whether cmd reads or writes keys, and so runs inside
// the store's atomic section.
func (cmd *command) usesKeyspace() bool {
	return !cmd.script && (cmd.hasKeys() || cmd.flags&(flagWrite|flagReadonly) != 0)
}

// hasKeys reports whether some of cmd's arguments are keys: those at fixed
// positions (firstKey) or those keysOf finds, but not shard channels,
// which COMMAND INFO shows as keys and Redis's key specs mark not-key. It
// is the one such test: the ACL, tracking, the shared tier (shared,
// faultKeys) and COMMAND GETKEYS all ask it, and all take the keys from
// cmd.keys, so that no two of them can disagree on which arguments are
// keys (SINTERCARD once went through the shared tier inside MULTI only).
func (cmd *command) hasKeys() bool {
	return (cmd.firstKey > 0 || cmd.keysOf != nil) && cmd.flags&flagPubSub == 0
}

// arityOK reports whether a command of n arguments, its name included,
// has cmd's arity.
func (cmd *command) arityOK(n int) bool {
	return (cmd.arity <= 0 || n == cmd.arity) && n >= -cmd.arity
}

// subcommand returns the subcommand named name, in any case, or nil.
func (cmd *command) subcommand(name []byte) *command {
	prefix := len(cmd.name) + 1 // "client|"
	for _, sub := range cmd.subcommands {
		if equalFold(name, sub.name[prefix:]) {
			return sub
		}
	}
	return nil
}
