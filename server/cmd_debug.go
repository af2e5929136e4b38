package server

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/digest"
	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/internal/redisnum"
	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/resp"
)

// The values of enable-debug-command (and of Redis's enable-module-command):
// who may run a protected command.
const (
	ProtectedNo    = "no"
	ProtectedYes   = "yes"
	ProtectedLocal = "local" // only from loopback or the unix socket
)

// protectedRefusal is Redis's reply to a protected command its setting
// does not allow, or "" if it does.
func (s *Server) protectedRefusal(c *Conn, cmd *command) string {
	name, option, setting := "DEBUG", "enable-debug-command", s.opts.EnableDebugCommand
	if cmd.Name != "debug" {
		name, option = "MODULE", "enable-module-command"
		setting = findConfigParam(option).get(s)
	}
	if setting == ProtectedYes || setting == ProtectedLocal && c.Local() {
		return ""
	}
	return "ERR " + name + " command not allowed. If the " + option + " option is set to \"local\", " +
		"you can run it from a local connection, otherwise you need to set this option " +
		"in the configuration file, and then restart the server."
}

// cmdDebug implements the DEBUG subcommands that clients' test suites and
// Redis's own use, each as Redis answers it where it applies to this
// store; the others get Redis's reply to an unknown subcommand.
func cmdDebug(c *Conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	n := len(args)
	switch {
	case sub == "help" && n == 2:
		debugHelp(c)
	case sub == "sleep" && n == 3:
		debugSleep(c, args[2])
	case sub == "object" && n == 3:
		debugObject(c, args[2])
	case sub == "listpack" && n == 3:
		debugEncodingDump(c, args[2], "listpack", "Listpack")
	case sub == "quicklist" && (n == 3 || n == 4):
		debugEncodingDump(c, args[2], "quicklist", "Quicklist")
	case sub == "reload":
		debugReload(c, args[2:])
	case sub == "set-active-expire" && n == 3:
		c.srv.store.SetActiveExpire(atoi(args[2]) != 0)
		c.w.OK()
	case sub == "quicklist-packed-threshold" && n == 3:
		// Lists here have no packed/plain threshold: the value is checked
		// as Redis checks it, and changes nothing.
		if sz, err := memsize.Parse(string(args[2])); err != nil || sz > 1<<32-1<<20 {
			c.w.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
			return
		}
		c.w.OK()
	case sub == "error" && n == 3:
		c.w.Error(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(args[2])))
	case sub == "digest" && n == 2:
		debugDigest(c)
	case sub == "digest-value":
		debugDigestValue(c, args[2:])
	case sub == "stringmatch-test" && n == 2:
		c.w.Status("Apparently Redis did not crash: test passed")
	case sub == "log" && n == 3:
		c.srv.log.Warn("DEBUG LOG: " + string(args[2]))
		c.w.OK()
	case sub == "protocol" && n == 3:
		debugProtocol(c, strings.ToLower(string(args[2])))
	case sub == "set-disable-deny-scripts" && n == 3:
		c.srv.denyScriptsOff.Store(atoi(args[2]) != 0)
		c.w.OK()
	case sub == "change-repl-id" && n == 2,
		// Switches of Redis's internals this server does not have: each
		// answers OK and changes nothing.
		(sub == "set-skip-checksum-validation" ||
			sub == "pause-cron" || sub == "aof-flush-sleep") && n == 3:
		c.w.OK()
	default:
		c.w.Error("ERR unknown subcommand or wrong number of arguments for '" +
			string(commands.Truncate(args[1], 128)) + "'. Try DEBUG HELP.")
	}
}

// debugProtocol answers one reply of each RESP type, Redis's samples, for
// clients' and scripts' tests of their parsers.
func debugProtocol(c *Conn, name string) {
	w := c.w
	resp3 := w.Protocol() == 3
	switch name {
	case "string":
		w.BulkString("Hello World")
	case "integer":
		w.Int(12345)
	case "double":
		w.Double(3.141)
	case "bignum":
		const big = "1234567999999999999999999999999999999"
		if resp3 {
			w.Raw([]byte("(" + big + "\r\n"))
		} else {
			w.BulkString(big)
		}
	case "null":
		w.Null()
	case "array", "set", "map":
		switch name {
		case "array":
			w.Array(3)
		case "set":
			w.Set(3)
		default:
			w.Map(3)
		}
		for j := range 3 {
			w.Int(int64(j))
			if name == "map" {
				w.Bool(j == 1)
			}
		}
	case "attrib":
		if resp3 {
			w.Raw([]byte("|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n"))
		}
		w.BulkString("Some real reply following the attribute")
	case "push":
		if !resp3 {
			w.Error("ERR RESP2 is not supported by this command")
			return
		}
		w.Push(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
		w.BulkString("Some real reply following the push reply")
	case "true", "false":
		w.Bool(name == "true")
	case "verbatim":
		w.Verbatim("txt", "This is a verbatim\nstring")
	default:
		w.Error("ERR Wrong protocol type name. Please use one of the following: " +
			"string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

func debugHelp(c *Conn) {
	commands.WriteHelp(c.w, "DEBUG",
		"CHANGE-REPL-ID",
		"    Change the replication IDs of the instance.",
		"    Dangerous: should be used only for testing the replication subsystem.",
		"DIGEST",
		"    Output a hex signature representing the current DB content.",
		"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys.",
		"ERROR <string>",
		"    Return a Redis protocol error with <string> as message. Useful for clients",
		"    unit tests to simulate Redis errors.",
		"LOG <message>",
		"    Write <message> to the server log.",
		"OBJECT <key>",
		"    Show low level info about `key` and associated value.",
		"RELOAD [option ...]",
		"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
		"    * MERGE: conflicting keys will be loaded from RDB.",
		"    * NOFLUSH: the existing database will not be removed before load, but",
		"      conflicting keys will generate an exception and kill the server.",
		"    * NOSAVE: the database will be loaded from an existing RDB file.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not",
		"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
		"    default.",
		"QUICKLIST-PACKED-THRESHOLD <size>",
		"    Sets the threshold for elements to be inserted as plain vs packed nodes",
		"    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
		"SLEEP <seconds>",
		"    Stop the server for <seconds>. Decimals allowed.",
		"STRINGMATCH-TEST",
		"    Run a fuzz tester against the stringmatchlen() function.",
		"LISTPACK <key>",
		"    Show low level info about the listpack encoding of <key>.",
		"QUICKLIST <key> [<0|1>]",
		"    Show low level info about the quicklist encoding of <key>.",
		"    The optional argument (0 by default) sets the level of detail")
}

// debugSleep answers after the seconds given (what strtod reads of them,
// 0 for what is no number). Redis stops the whole server meanwhile;
// here the connection waits parked, off its event loop, and every other
// client is served. Inside EXEC or a script, which hold the atomic
// section, it sleeps holding it: the commands of every other client wait,
// as Redis's do, and the time passes for the transaction or script (a
// script's keys expire by the time it started, HoldClock, as Redis's).
func debugSleep(c *Conn, arg []byte) {
	secs, _, _ := redisnum.Strtod(arg)
	if secs <= 0 || math.IsNaN(secs) {
		c.w.OK()
		return
	}
	d := time.Duration(min(secs, float64(math.MaxInt64/int64(time.Second))) * float64(time.Second))
	if c.InSection() {
		time.Sleep(d)
		c.w.OK()
		return
	}
	c.Await(func(ctx context.Context) func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return c.w.OK
	})
}

// atoi reads b as C's atoi: an optional sign and the digits that follow,
// 0 if none.
func atoi(b []byte) int64 {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && '0' <= s[end] && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64)
	return n
}

// debugLookup finds a DEBUG subcommand's key without touching it, or
// replies Redis's error for a missing one.
func debugLookup(c *Conn, key []byte) (engine.Envelope, bool) {
	env, ok := c.x.Store.Inspect(key)
	if !ok {
		c.w.Error("ERR no such key")
	}
	return env, ok
}

// encodingOf is the encoding OBJECT ENCODING reports for key's value in
// database db.
func encodingOf(db *engine.Store, key []byte) string {
	enc, _ := db.Encoding(key)
	return enc
}

// debugObject answers Redis's line of low level facts about key's value:
// an address (a hash of the key, for values here have none that lasts),
// the refcount OBJECT REFCOUNT answers, the encoding OBJECT ENCODING
// answers, the length of the value as a snapshot writes it, and the LRU
// clock and idle seconds of the key's last access (0 under an LFU policy,
// which keeps none).
func debugObject(c *Conn, key []byte) {
	// A key past its deadline is found until it is removed, as Redis
	// finds it (with active expiry off, Redis's tests look so).
	enc, ok := c.x.Store.EncodingPast(key)
	if !ok {
		c.w.Error("ERR no such key")
		return
	}
	h := fnv.New64a()
	h.Write(key)
	serialized := 0
	if payload, found := persist.Dump(c.x.Store, key); found {
		// A DUMP payload is the type byte, the value, then the RDB
		// version and the checksum: 11 bytes around what a snapshot
		// writes of the value.
		serialized = max(len(payload)-11, 0)
	}
	idle, _, err := c.x.Store.IdleTime(key)
	if err != nil {
		idle = 0
	}
	const lruClockMax = 1<<24 - 1 // Redis's 24-bit LRU clock, in seconds
	lru := (time.Now().Unix() - idle) & lruClockMax
	c.w.Status(fmt.Sprintf("Value at:0x%x refcount:1 encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		h.Sum64()&0xffffffffffff, enc, serialized, lru, idle))
}

// debugEncodingDump answers DEBUG LISTPACK and QUICKLIST: Redis prints the
// structure on its standard output; there is nothing of it to print here.
func debugEncodingDump(c *Conn, key []byte, enc, title string) {
	_, ok := debugLookup(c, key)
	switch {
	case !ok:
	case encodingOf(c.x.Store, key) != enc:
		c.w.Error("ERR Not a " + enc + " encoded object.")
	default:
		c.w.Status(title + " structure printed on stdout")
	}
}

// debugReload implements DEBUG RELOAD [MERGE|NOFLUSH|NOSAVE ...]. Redis
// saves the snapshot, empties the dataset and loads the file back. Here
// the store holds exactly what loading the file would give it, so the
// save is made (with --dir; without it there is no file) and the dataset
// kept as it is. NOFLUSH without MERGE loads the file over what the
// dataset holds: Redis refuses the libraries it finds again (and stops on
// a key it finds again), so a dataset with keys or libraries answers its
// error.
func debugReload(c *Conn, opts [][]byte) {
	save, flush, merge := true, true, false
	for _, o := range opts {
		switch {
		case resp.EqualFold(o, "merge"):
			merge = true
		case resp.EqualFold(o, "noflush"):
			flush = false
		case resp.EqualFold(o, "nosave"):
			save = false
		default:
			c.w.Error("ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.")
			return
		}
	}
	if save {
		if err := c.srv.opts.Saver.Save(); err != nil && !errors.Is(err, persist.ErrOff) {
			c.w.Error("ERR") // Redis's reply; the log says why
			return
		}
	}
	if !flush && !merge && (c.srv.keyCount() > 0 || c.srv.scripts.eng.Libraries() > 0) {
		c.w.Error("ERR Error trying to load the RDB dump")
		return
	}
	c.w.OK()
}

// debugDigest answers Redis's digest of the whole dataset, 40 zeros when
// empty.
func debugDigest(c *Conn) {
	d := digest.Store(c.srv.store)
	c.w.Status(hex.EncodeToString(d[:]))
}

// debugDigestValue answers the digest of each key's value, 40 zeros for a
// missing key.
func debugDigestValue(c *Conn, keys [][]byte) {
	c.w.Array(len(keys))
	for _, k := range keys {
		var d [20]byte
		if it, ok := c.x.Store.SnapshotKey(k); ok {
			d = digest.Item(&it)
		}
		c.w.Status(hex.EncodeToString(d[:]))
	}
}
