package resp

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/metrics"
)

// flags describe a command to COMMAND INFO and to the dispatcher.
type flags uint16

const (
	flagWrite    flags = 1 << iota // changes the keyspace
	flagReadonly                   // reads the keyspace
	flagFast                       // O(1) or O(log n)
	flagNoAuth                     // allowed before AUTH
	flagAdmin                      // administrative
	flagDenyOOM                    // may grow memory
	flagLoading                    // allowed while loading (always, here)
	flagStale                      // allowed with stale data (always, here)

	// Not shown by COMMAND INFO:
	flagNoQueue // runs at once inside MULTI instead of being queued
)

var flagNames = []struct {
	f    flags
	name string
}{
	{flagWrite, "write"}, {flagReadonly, "readonly"}, {flagDenyOOM, "denyoom"},
	{flagAdmin, "admin"}, {flagNoAuth, "no_auth"}, {flagLoading, "loading"},
	{flagStale, "stale"}, {flagFast, "fast"},
}

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

	// own marks stampedeless's commands, which Redis does not have.
	own bool
	// flush marks the commands that empty the keyspace (FLUSHALL,
	// FLUSHDB), which --redis mode writes through as a flush.
	flush bool
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
		{name: "ping", arity: -1, flags: flagFast | flagStale, handler: cmdPing,
			group: "connection", summary: "Returns the server's liveliness response.", usage: "[message]", since: "1.0.0"},
		{name: "echo", arity: 2, flags: flagFast | flagStale, handler: cmdEcho,
			group: "connection", summary: "Returns the given string.", usage: "message", since: "1.0.0"},
		{name: "quit", arity: -1, flags: flagFast | flagNoAuth | flagStale | flagLoading | flagNoQueue, handler: cmdQuit,
			group: "connection", summary: "Closes the connection.", since: "1.0.0"},
		{name: "select", arity: 2, flags: flagFast | flagStale | flagLoading, handler: cmdSelect,
			group: "connection", summary: "Changes the selected database; only database 0 exists.", usage: "index", since: "1.0.0"},
		{name: "auth", arity: -2, flags: flagFast | flagNoAuth | flagStale | flagLoading, handler: cmdAuth,
			group: "connection", summary: "Authenticates the connection.", usage: "[username] password", since: "1.0.0"},
		{name: "hello", arity: -1, flags: flagFast | flagNoAuth | flagStale | flagLoading, handler: cmdHello,
			group: "connection", summary: "Handshakes with the server; only RESP2 is spoken.", usage: "[protover [AUTH username password] [SETNAME clientname]]", since: "6.0.0"},
		{name: "client", arity: -2, flags: flagStale | flagLoading, subcommands: []*command{
			{name: "client|getname", arity: 2, flags: flagLoading | flagStale, handler: cmdClientGetName},
			{name: "client|help", arity: 2, flags: flagLoading | flagStale, handler: cmdClientHelp},
			{name: "client|id", arity: 2, flags: flagLoading | flagStale, handler: cmdClientID},
			{name: "client|info", arity: 2, flags: flagLoading | flagStale, handler: cmdClientInfo},
			{name: "client|list", arity: -2, flags: flagAdmin | flagLoading | flagStale, handler: cmdClientList},
			{name: "client|setinfo", arity: 4, flags: flagLoading | flagStale, handler: cmdClientSetInfo},
			{name: "client|setname", arity: 3, flags: flagLoading | flagStale, handler: cmdClientSetName},
		},
			group: "connection", summary: "Connection commands: SETNAME, GETNAME, ID, SETINFO, LIST, INFO.", usage: "subcommand [argument ...]", since: "2.4.0"},

		// Strings.
		{name: "get", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdGet,
			group: "string", summary: "Returns the string value of a key.", usage: "key", since: "1.0.0"},
		{name: "set", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdSet, blind: setIsBlind,
			group: "string", summary: "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.",
			usage: "key value [NX|XX] [GET] [EX seconds|PX milliseconds|EXAT unix-time-seconds|PXAT unix-time-milliseconds|KEEPTTL]", since: "1.0.0"},
		{name: "setex", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdSetEx, blind: always,
			group: "string", summary: "Sets the string value and expiration time of a key.", usage: "key seconds value", since: "2.0.0"},
		{name: "psetex", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdPSetEx, blind: always,
			group: "string", summary: "Sets both string value and expiration time in milliseconds of a key.", usage: "key milliseconds value", since: "2.6.0"},
		{name: "setnx", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdSetNX,
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
		{name: "mset", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2, handler: cmdMSet, blind: always,
			group: "string", summary: "Atomically creates or modifies the string values of one or more keys.", usage: "key value [key value ...]", since: "1.0.1"},
		{name: "msetnx", arity: -3, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: -1, step: 2, handler: cmdMSetNX,
			group: "string", summary: "Atomically modifies the string values of one or more keys only when all keys don't exist.", usage: "key value [key value ...]", since: "1.0.1"},
		{name: "append", arity: 3, flags: flagWrite | flagDenyOOM | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdAppend,
			group: "string", summary: "Appends a string to the value of a key. Creates the key if it doesn't exist.", usage: "key value", since: "2.0.0"},
		{name: "strlen", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdStrlen,
			group: "string", summary: "Returns the length of a string value.", usage: "key", since: "2.2.0"},
		{name: "getrange", arity: 4, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetRange,
			group: "string", summary: "Returns a substring of the string stored at a key.", usage: "key start end", since: "2.4.0"},
		{name: "setrange", arity: 4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdSetRange,
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

		// Read-through.
		{name: "getfill", arity: -4, flags: flagWrite | flagDenyOOM, firstKey: 1, lastKey: 1, step: 1, handler: cmdGetFill,
			group: "string", summary: "Returns the value of a key, loading it from its origin on a miss with one load per key; serves stale values within the grace while one refresh runs.",
			usage: "key ttl grace [TIMEOUT ms]", own: true, since: "0.1.0"},
		{name: "fill.info", arity: 2, flags: flagReadonly, firstKey: 1, lastKey: 1, step: 1, handler: cmdFillInfo,
			group: "string", summary: "Describes a key's read-through state: fresh, stale, missing, loading or cooldown, and its deadlines.",
			usage: "key", own: true, since: "0.1.0"},
		{name: "loader.register", arity: -3, flags: flagAdmin, handler: cmdLoaderRegister,
			group: "server", summary: "Registers the origin URL that fills keys with a prefix.",
			usage: "prefix url [TIMEOUT ms] [CONCURRENCY n]", own: true, since: "0.1.0"},
		{name: "loader.unregister", arity: 2, flags: flagAdmin, handler: cmdLoaderUnregister,
			group: "server", summary: "Removes the loader of a prefix.", usage: "prefix", own: true, since: "0.1.0"},
		{name: "loader.list", arity: 1, flags: flagLoading | flagStale, handler: cmdLoaderList,
			group: "server", summary: "Lists the registered loaders with their counters.", own: true, since: "0.1.0"},

		// Keys.
		{name: "del", arity: -2, flags: flagWrite, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel,
			group: "generic", summary: "Deletes one or more keys.", usage: "key [key ...]", since: "1.0.0"},
		{name: "unlink", arity: -2, flags: flagWrite | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdDel,
			group: "generic", summary: "Deletes one or more keys.", usage: "key [key ...]", since: "4.0.0"},
		{name: "exists", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdExists,
			group: "generic", summary: "Determines whether one or more keys exist.", usage: "key [key ...]", since: "1.0.0"},
		{name: "type", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdType,
			group: "generic", summary: "Determines the type of value stored at a key.", usage: "key", since: "1.0.0"},
		{name: "touch", arity: -2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: -1, step: 1, handler: cmdTouch,
			group: "generic", summary: "Returns the number of existing keys out of those specified after updating the time they were last accessed.", usage: "key [key ...]", since: "3.2.1"},
		{name: "expire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdExpire,
			group: "generic", summary: "Sets the expiration time of a key in seconds.", usage: "key seconds [NX|XX|GT|LT]", since: "1.0.0"},
		{name: "pexpire", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPExpire,
			group: "generic", summary: "Sets the expiration time of a key in milliseconds.", usage: "key milliseconds [NX|XX|GT|LT]", since: "2.6.0"},
		{name: "expireat", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdExpireAt,
			group: "generic", summary: "Sets the expiration time of a key to a Unix timestamp.", usage: "key unix-time-seconds [NX|XX|GT|LT]", since: "1.2.0"},
		{name: "pexpireat", arity: -3, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPExpireAt,
			group: "generic", summary: "Sets the expiration time of a key to a Unix milliseconds timestamp.", usage: "key unix-time-milliseconds [NX|XX|GT|LT]", since: "2.6.0"},
		{name: "ttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdTTL,
			group: "generic", summary: "Returns the expiration time in seconds of a key.", usage: "key", since: "1.0.0"},
		{name: "pttl", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPTTL,
			group: "generic", summary: "Returns the expiration time in milliseconds of a key.", usage: "key", since: "2.6.0"},
		{name: "expiretime", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdExpireTime,
			group: "generic", summary: "Returns the expiration time of a key as a Unix timestamp.", usage: "key", since: "7.0.0"},
		{name: "pexpiretime", arity: 2, flags: flagReadonly | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPExpireTime,
			group: "generic", summary: "Returns the expiration time of a key as a Unix milliseconds timestamp.", usage: "key", since: "7.0.0"},
		{name: "persist", arity: 2, flags: flagWrite | flagFast, firstKey: 1, lastKey: 1, step: 1, handler: cmdPersist,
			group: "generic", summary: "Removes the expiration time of a key.", usage: "key", since: "2.2.0"},
		{name: "keys", arity: 2, flags: flagReadonly, handler: cmdKeys,
			group: "generic", summary: "Returns all key names that match a pattern.", usage: "pattern", since: "1.0.0"},
		{name: "scan", arity: -2, flags: flagReadonly, handler: cmdScan,
			group: "generic", summary: "Iterates over the key names in the database.", usage: "cursor [MATCH pattern] [COUNT count] [TYPE type]", since: "2.8.0"},
		{name: "randomkey", arity: 1, flags: flagReadonly, handler: cmdRandomKey,
			group: "generic", summary: "Returns a random key name from the database.", since: "1.0.0"},

		// Transactions.
		{name: "multi", arity: 1, flags: flagFast | flagLoading | flagStale | flagNoQueue, handler: cmdMulti,
			group: "transactions", summary: "Starts a transaction.", since: "1.2.0"},
		{name: "exec", arity: 1, flags: flagLoading | flagStale | flagNoQueue, handler: cmdExec,
			group: "transactions", summary: "Executes all commands in a transaction.", since: "1.2.0"},
		{name: "discard", arity: 1, flags: flagFast | flagLoading | flagStale | flagNoQueue, handler: cmdDiscard,
			group: "transactions", summary: "Discards a transaction.", since: "2.0.0"},
		{name: "watch", arity: -2, flags: flagFast | flagLoading | flagStale | flagNoQueue, firstKey: 1, lastKey: -1, step: 1, handler: cmdWatch,
			group: "transactions", summary: "Monitors changes to keys to determine the execution of a transaction.", usage: "key [key ...]", since: "2.2.0"},
		{name: "unwatch", arity: 1, flags: flagFast | flagLoading | flagStale, handler: cmdUnwatch,
			group: "transactions", summary: "Forgets about watched keys of a transaction.", since: "2.2.0"},

		// Server.
		{name: "dbsize", arity: 1, flags: flagReadonly | flagFast, handler: cmdDBSize,
			group: "server", summary: "Returns the number of keys in the database.", since: "1.0.0"},
		{name: "flushdb", arity: -1, flags: flagWrite, handler: cmdFlush, flush: true,
			group: "server", summary: "Removes all keys from the current database.", usage: "[ASYNC|SYNC]", since: "1.0.0"},
		{name: "flushall", arity: -1, flags: flagWrite, handler: cmdFlush, flush: true,
			group: "server", summary: "Removes all keys from all databases.", usage: "[ASYNC|SYNC]", since: "1.0.0"},
		{name: "time", arity: 1, flags: flagFast | flagLoading | flagStale, handler: cmdTime,
			group: "server", summary: "Returns the server time.", since: "2.6.0"},
		{name: "info", arity: -1, flags: flagLoading | flagStale, handler: cmdInfo,
			group: "server", summary: "Returns information and statistics about the server.", usage: "[section [section ...]]", since: "1.0.0"},
		{name: "config", arity: -2, flags: flagAdmin | flagLoading | flagStale, subcommands: []*command{
			{name: "config|get", arity: -3, flags: flagAdmin | flagLoading | flagStale, handler: cmdConfigGet},
			{name: "config|help", arity: 2, flags: flagLoading | flagStale, handler: cmdConfigHelp},
			{name: "config|resetstat", arity: 2, flags: flagAdmin | flagLoading | flagStale, handler: cmdConfigResetStat},
			{name: "config|set", arity: -4, flags: flagAdmin | flagLoading | flagStale, handler: cmdConfigSet},
		},
			group: "server", summary: "Reads or changes the run-time configuration: GET, SET, RESETSTAT.", usage: "subcommand [argument ...]", since: "2.0.0"},
		{name: "command", arity: -1, flags: flagLoading | flagStale, handler: cmdCommand, subcommands: []*command{
			{name: "command|count", arity: 2, flags: flagLoading | flagStale, handler: cmdCommandCount},
			{name: "command|docs", arity: -2, flags: flagLoading | flagStale, handler: cmdCommandDocs},
			{name: "command|help", arity: 2, flags: flagLoading | flagStale, handler: cmdCommandHelp},
			{name: "command|info", arity: -2, flags: flagLoading | flagStale, handler: cmdCommandInfo},
			{name: "command|list", arity: -2, flags: flagLoading | flagStale, handler: cmdCommandList},
		},
			group: "server", summary: "Returns detailed information about commands: COUNT, DOCS, INFO, LIST.", usage: "[subcommand [argument ...]]", since: "2.8.13"},
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
		}
		table[c.name] = c
	}
	return table
}

// usesKeyspace reports whether cmd reads or writes keys, and so runs inside
// the store's atomic section.
func (cmd *command) usesKeyspace() bool {
	return cmd.firstKey > 0 || cmd.flags&(flagWrite|flagReadonly) != 0
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
