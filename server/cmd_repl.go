package server

import (
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// The commands of what this server lacks (replication, modules) and
// LOLWUT: each answers as a Redis master with no replicas and no modules
// would, where that is an answer.

// cmdRole answers a master's ROLE: no replicas, nothing replicated.
func cmdRole(c *Conn, _ [][]byte) {
	c.w.Array(3)
	c.w.BulkString("master")
	c.w.Int(0)
	c.w.Array(0)
}

// cmdReplicaOf implements REPLICAOF (and SLAVEOF): NO ONE is a master's
// no-op, as in Redis; anything else is refused, once its port is checked
// as Redis checks it, for there is no replication to start.
func cmdReplicaOf(c *Conn, args [][]byte) {
	if resp.EqualFold(args[1], "no") && resp.EqualFold(args[2], "one") {
		c.w.OK()
		return
	}
	if port, ok := resp.ParseInt(args[2]); !ok || port < 0 || port > 65535 {
		c.w.Error("ERR Invalid master port")
		return
	}
	c.w.Error("ERR " + string(args[0]) + " is not supported: this server has no replication (REPLICAOF NO ONE is accepted)")
}

// cmdModuleList answers that no module is loaded; no module can be.
func cmdModuleList(c *Conn, _ [][]byte) { c.w.Array(0) }

// cmdModuleLoad answers MODULE LOAD and LOADEX as Redis does when loading
// fails, which it always does here.
func cmdModuleLoad(c *Conn, _ [][]byte) {
	c.w.Error("ERR Error loading the extension. Please check the server logs.")
}

func cmdModuleUnload(c *Conn, _ [][]byte) {
	c.w.Error("ERR Error unloading module: no such module with that name")
}

func cmdModuleHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "MODULE",
		"LIST",
		"    Return a list of loaded modules.",
		"LOAD <path> [<arg> ...]",
		"    Load a module library from <path>, passing to it any optional arguments.",
		"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
		"    Load a module library from <path>, while passing it module configurations and optional arguments.",
		"UNLOAD <name>",
		"    Unload a module.")
}

// cmdLolwut implements LOLWUT [VERSION v] [arguments]. Redis's own version
// (7.x) answers only its version line, as here; VERSION 5 and 6 draw
// Redis's computer art, which is not drawn here: their arguments are
// checked as Redis checks them, and the version line answered.
func cmdLolwut(c *Conn, args [][]byte) {
	args = args[1:]
	if len(args) >= 2 && resp.EqualFold(args[0], "version") {
		v, ok := resp.ParseInt(args[1])
		if !ok {
			c.w.Error(commands.ErrNotInteger)
			return
		}
		args = args[2:]
		// Redis reads the version as an unsigned int, and draws 5's art
		// for 5 and 6's for 6.
		switch uint32(v) {
		case 5:
			args = args[:min(len(args), 3)]
		case 6:
			args = args[:min(len(args), 2)]
		default:
			args = nil
		}
		for _, a := range args {
			if _, ok := resp.ParseInt(a); !ok {
				c.w.Error(commands.ErrNotInteger)
				return
			}
		}
	}
	c.w.Verbatim("txt", "Redis ver. "+RedisVersion+"\n")
}
