package server

import (
	"slices"
	"strings"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/internal/glob"
	"github.com/stampedeless/stampedeless/resp"
)

// cmdCommand implements COMMAND without a subcommand; the handlers below
// implement COUNT, INFO [name ...], DOCS [name ...] and LIST. That is
// enough for redis-cli to show help and argument hints for every command,
// ours included.
func cmdCommand(c *Conn, _ [][]byte) {
	cmds := c.srv.sortedCommands()
	c.w.Array(len(cmds))
	for _, cmd := range cmds {
		writeCommandInfo(c, cmd)
	}
}

func cmdCommandCount(c *Conn, _ [][]byte) { c.w.Int(int64(len(c.srv.table))) }

// cmdCommandList implements COMMAND LIST [FILTERBY MODULE name|ACLCAT
// category|PATTERN pattern]. There are no modules; an unknown category
// lists nothing. As in Redis, each command is followed by its
// subcommands ("config|get"), each kept or not by the filter on its own.
func cmdCommandList(c *Conn, args [][]byte) {
	keep := func(*command) bool { return true }
	switch {
	case len(args) == 2:
	case len(args) == 5 && resp.EqualFold(args[2], "filterby"):
		arg := args[4]
		switch by := args[3]; {
		case resp.EqualFold(by, "module"):
			keep = func(*command) bool { return false }
		case resp.EqualFold(by, "aclcat"):
			cat, _ := acl.ParseCategory(string(arg))
			keep = func(cmd *command) bool { return cmd.categories()&cat != 0 }
		case resp.EqualFold(by, "pattern"):
			pattern := resp.Lower(arg)
			keep = func(cmd *command) bool { return glob.Match(pattern, cmd.Name) }
		default:
			c.w.Error(commands.ErrSyntax)
			return
		}
	default:
		c.w.Error(commands.ErrSyntax)
		return
	}
	var names []string
	for _, cmd := range c.srv.sortedCommands() {
		if keep(cmd) {
			names = append(names, cmd.Name)
		}
		for _, sub := range cmd.subcommands {
			if keep(sub) {
				names = append(names, sub.Name)
			}
		}
	}
	c.w.Array(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

func cmdCommandInfo(c *Conn, args [][]byte) {
	cmds := c.srv.commandsNamed(args[2:])
	c.w.Array(len(cmds))
	for _, cmd := range cmds {
		if cmd == nil {
			c.w.Null()
		} else {
			writeCommandInfo(c, cmd)
		}
	}
}

func cmdCommandDocs(c *Conn, args [][]byte) {
	var cmds []*command
	for _, cmd := range c.srv.commandsNamed(args[2:]) {
		if cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	c.w.Map(len(cmds))
	for _, cmd := range cmds {
		c.w.BulkString(cmd.Name)
		commands.WriteDocs(c.w, cmd.Spec, cmd.keySpecs())
	}
}

func cmdCommandHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "COMMAND",
		"(no subcommand)", "    Return details about all commands.",
		"COUNT", "    Return the total number of commands.",
		"DOCS [<command-name> ...]", "    Return documentation details about commands.",
		"INFO [<command-name> ...]", "    Return details about the named commands, or all of them.",
		"GETKEYS <full-command>", "    Return the keys from a full command.",
		"GETKEYSANDFLAGS <full-command>", "    Return the keys and the access flags from a full command.",
		"LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]", "    Return a list of all commands.")
}

// cmdCommandGetKeys implements COMMAND GETKEYS command [arg ...]: the
// arguments of the full command that are keys, as the ACL, tracking and
// the shared tier find them (cmd.keys), with Redis 7's errors in its
// order.
func cmdCommandGetKeys(c *Conn, args [][]byte) { getKeys(c, args, false) }

// cmdCommandGetKeysAndFlags implements COMMAND GETKEYSANDFLAGS command
// [arg ...]: GETKEYS's keys, each with its key spec flags (keySpecFlags).
func cmdCommandGetKeysAndFlags(c *Conn, args [][]byte) { getKeys(c, args, true) }

// getKeys is COMMAND GETKEYS, and with flags GETKEYSANDFLAGS.
func getKeys(c *Conn, args [][]byte, flags bool) {
	full := args[2:]
	cmd := c.srv.lookup(c, full[0])
	if cmd != nil && len(cmd.subcommands) > 0 {
		cmd = cmd.subcommand(full[1])
	}
	switch {
	case cmd == nil:
		c.w.Error("ERR Invalid command specified")
		return
	case !cmd.hasKeys():
		c.w.Error("ERR The command has no key arguments")
		return
	case !cmd.arityOK(len(full)):
		c.w.Error("ERR Invalid number of arguments specified for command")
		return
	}
	keys := cmd.keys(full)
	if len(keys) == 0 && cmd.Flags&commands.NoMandatoryKeys == 0 {
		c.w.Error("ERR Invalid arguments specified for command")
		return
	}
	c.w.Array(len(keys))
	for i, k := range keys {
		if !flags {
			c.w.Bulk(k)
			continue
		}
		c.w.Array(2)
		c.w.Bulk(k)
		f := cmd.keySpecFlags(full, i)
		c.w.Set(len(f))
		for _, name := range f {
			c.w.Status(name)
		}
	}
}

// keySpecFlags are Redis 7's key spec flags of cmd's i-th key in a call
// with args: those of the key spec that finds it (specOfKey), as Redis's
// getKeysFromCommandWithSpecs; where no spec says (a command without
// specs, one whose flags vary with the call, one whose specs cannot find
// every key: SET, SORT, EVAL's own), derived from what the ACL knows of
// it (keyUse): RO access for a key read, OW update for one written
// without being read, RW access update for both, RO for one neither; a
// source that RENAME and the moves take away is RW access delete, and
// PFMERGE's destination RW access insert.
func (cmd *command) keySpecFlags(args [][]byte, i int) []string {
	if spec, ok := cmd.specOfKey(args, i); ok {
		return spec.Flags.Names()
	}
	read, write := cmd.keyUse(args, i)
	switch {
	case cmd.Access == commands.KeysRename && i == 0, cmd.Access == commands.KeysMove:
		return []string{"RW", "access", "delete"}
	case cmd.Access == commands.KeysMerge && i == 0:
		return []string{"RW", "access", "insert"}
	case read && write:
		return []string{"RW", "access", "update"}
	case write:
		return []string{"OW", "update"}
	case read:
		return []string{"RO", "access"}
	}
	return []string{"RO"}
}

// keySpecs are cmd's key specs: its Spec's, or one derived from its key
// positions and access (keySpecFlags), or none for a command without keys.
func (cmd *command) keySpecs() []commands.KeySpec {
	if cmd.KeySpecs != nil || cmd.FirstKey <= 0 {
		return cmd.KeySpecs
	}
	// The access of a call without arguments: a VarAccess reads them.
	sp := *cmd.Spec
	sp.VarAccess = nil
	plain := command{Spec: &sp}
	var flags commands.KeySpecFlags
	for _, name := range plain.keySpecFlags(nil, 0) {
		for _, f := range commands.KeySpecFlagNames {
			if f.Name == name {
				flags |= f.Flag
			}
		}
	}
	last := cmd.LastKey
	if last > 0 {
		last -= cmd.FirstKey
	}
	return []commands.KeySpec{{Flags: flags, Index: cmd.FirstKey, LastKey: last, Step: cmd.Step}}
}

// specOfKey finds the key spec of cmd that finds its i-th key in a call
// with args, walking its specs in order as Redis does; ok is false when
// a spec is unknown or incomplete, or its flags vary, and for a command
// whose Spec states none.
func (cmd *command) specOfKey(args [][]byte, i int) (commands.KeySpec, bool) {
	n := 0
	for _, ks := range cmd.KeySpecs {
		if ks.Unknown || ks.Flags&(commands.KIncomplete|commands.KVariableFlags) != 0 {
			return commands.KeySpec{}, false
		}
		found := ks.CountKeys(args)
		if i < n+found {
			return ks, true
		}
		n += found
	}
	return commands.KeySpec{}, false
}

func (s *Server) sortedCommands() []*command {
	cmds := make([]*command, 0, len(s.table))
	for _, cmd := range s.table {
		cmds = append(cmds, cmd)
	}
	slices.SortFunc(cmds, func(a, b *command) int { return strings.Compare(a.Name, b.Name) })
	return cmds
}

// commandsNamed returns the commands named in names (nil for unknown ones),
// or all of them when names is empty.
func (s *Server) commandsNamed(names [][]byte) []*command {
	if len(names) == 0 {
		return s.sortedCommands()
	}
	out := make([]*command, len(names))
	for i, n := range names {
		out[i] = s.table[string(resp.Lower(n))]
	}
	return out
}

// writeCommandInfo writes a command's COMMAND INFO entry in Redis 7's
// ten-element shape. In RESP3 the flags, categories, tips and key specs are
// sets, and so is the list of subcommands when it is empty (an array
// otherwise), as Redis writes them.
func writeCommandInfo(c *Conn, cmd *command) {
	c.w.Array(10)
	c.w.BulkString(cmd.Name)
	c.w.Int(int64(cmd.Arity))
	var names []string
	for _, f := range commands.FlagNames {
		if cmd.Flags&f.Flag != 0 {
			names = append(names, f.Name)
		}
	}
	commands.WriteStatusSet(c.w, names...)
	c.w.Int(int64(cmd.FirstKey))
	c.w.Int(int64(cmd.LastKey))
	c.w.Int(int64(cmd.Step))
	cats := cmd.categories().Names()
	for i, n := range cats {
		cats[i] = "@" + n
	}
	commands.WriteStatusSet(c.w, cats...)
	c.w.Set(0) // tips
	commands.WriteKeySpecs(c.w, cmd.keySpecs())
	if len(cmd.subcommands) == 0 {
		c.w.Set(0)
		return
	}
	c.w.Array(len(cmd.subcommands))
	for _, sub := range cmd.subcommands {
		writeCommandInfo(c, sub)
	}
}
