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
		writeCommandDocs(c, cmd)
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
	case cmd.Access == commands.KeysRename && i == 0:
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
		found := specKeys(ks, args)
		if i < n+found {
			return ks, true
		}
		n += found
	}
	return commands.KeySpec{}, false
}

// specKeys counts the keys ks finds in args, as Redis's
// getKeysUsingKeySpecs: none if its search runs out of the arguments.
func specKeys(ks commands.KeySpec, args [][]byte) int {
	first := ks.Index
	if ks.Keyword != "" {
		first = keywordStart(ks, args)
	}
	if first <= 0 || first >= len(args) {
		return 0
	}
	step := max(ks.Step, 1)
	var last int
	switch {
	case ks.KeyNum:
		if first+ks.NumKeys >= len(args) {
			return 0
		}
		n, ok := resp.ParseInt(args[first+ks.NumKeys])
		if !ok || n < 0 {
			return 0
		}
		first += ks.FirstKey
		last = first + int(n-1)*step
	case ks.LastKey >= 0:
		last = first + ks.LastKey
	default:
		last = len(args) + ks.LastKey
		if ks.Limit > 1 {
			last = first + (last-first+1)/ks.Limit - 1
		}
	}
	if last >= len(args) {
		last = len(args) - 1
	}
	if last < first {
		return 0
	}
	return (last-first)/step + 1
}

// keywordStart is the argument after ks's keyword, searched for from its
// StartFrom, or 0 if it is not there.
func keywordStart(ks commands.KeySpec, args [][]byte) int {
	start, end, dir := ks.StartFrom, len(args), 1
	if start < 0 {
		start, end, dir = len(args)+start, 0, -1
	}
	for j := start; j != end && j > 0 && j < len(args); j += dir {
		if resp.EqualFold(args[j], ks.Keyword) {
			return j + 1
		}
	}
	return 0
}

// writeKeySpecs writes key specs as COMMAND INFO does: a set of maps.
func writeKeySpecs(c *Conn, specs []commands.KeySpec) {
	c.w.Set(len(specs))
	for _, ks := range specs {
		n := 3
		if ks.Notes != "" {
			n++
			c.w.Map(n)
			c.w.BulkString("notes")
			c.w.BulkString(ks.Notes)
		} else {
			c.w.Map(n)
		}
		c.w.BulkString("flags")
		writeStatusSet(c, ks.Flags.Names()...)
		step := int64(max(ks.Step, 1))
		c.w.BulkString("begin_search")
		switch {
		case ks.Unknown:
			writeSearch(c, "unknown")
		case ks.Keyword != "":
			writeSearch(c, "keyword", "keyword", ks.Keyword, "startfrom", int64(ks.StartFrom))
		default:
			writeSearch(c, "index", "index", int64(ks.Index))
		}
		c.w.BulkString("find_keys")
		switch {
		case ks.Unknown:
			writeSearch(c, "unknown")
		case ks.KeyNum:
			writeSearch(c, "keynum", "keynumidx", int64(ks.NumKeys), "firstkey", int64(ks.FirstKey), "keystep", step)
		default:
			writeSearch(c, "range", "lastkey", int64(ks.LastKey), "keystep", step, "limit", int64(ks.Limit))
		}
	}
}

// writeSearch writes a key spec's begin_search or find_keys: its type and
// its spec, a map of the name and value pairs in fields.
func writeSearch(c *Conn, typ string, fields ...any) {
	c.w.Map(2)
	c.w.BulkString("type")
	c.w.BulkString(typ)
	c.w.BulkString("spec")
	c.w.Map(len(fields) / 2)
	for i := 0; i+1 < len(fields); i += 2 {
		c.w.BulkString(fields[i].(string))
		switch v := fields[i+1].(type) {
		case string:
			c.w.BulkString(v)
		case int64:
			c.w.Int(v)
		}
	}
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
	writeStatusSet(c, names...)
	c.w.Int(int64(cmd.FirstKey))
	c.w.Int(int64(cmd.LastKey))
	c.w.Int(int64(cmd.Step))
	cats := cmd.categories().Names()
	for i, n := range cats {
		cats[i] = "@" + n
	}
	writeStatusSet(c, cats...)
	c.w.Set(0) // tips
	writeKeySpecs(c, cmd.keySpecs())
	if len(cmd.subcommands) == 0 {
		c.w.Set(0)
		return
	}
	c.w.Array(len(cmd.subcommands))
	for _, sub := range cmd.subcommands {
		writeCommandInfo(c, sub)
	}
}

// writeStatusSet writes a set of simple strings (an array in RESP2), Redis's
// form for flags and categories.
func writeStatusSet(c *Conn, items ...string) {
	c.w.Set(len(items))
	for _, s := range items {
		c.w.Status(s)
	}
}

// writeCommandDocs writes a command's COMMAND DOCS map (a flat array in RESP2).
func writeCommandDocs(c *Conn, cmd *command) {
	args := parseUsage(cmd.Usage)
	n := 4
	if len(args) > 0 {
		n++
	}
	c.w.Map(n)
	c.w.BulkString("summary")
	c.w.BulkString(cmd.Summary)
	c.w.BulkString("since")
	c.w.BulkString(cmd.Since)
	c.w.BulkString("group")
	c.w.BulkString(cmd.Group)
	c.w.BulkString("complexity")
	c.w.BulkString(complexity(cmd))
	if len(args) > 0 {
		c.w.BulkString("arguments")
		numberKeyArgs(args, cmd.keySpecs(), &keyArgCounter{})
		writeDocArgs(c, args)
	}
}

func complexity(cmd *command) string {
	if cmd.Flags&commands.Fast != 0 {
		return "O(1)"
	}
	return "O(N)"
}

// docArg is one argument in COMMAND DOCS.
type docArg struct {
	name     string
	typ      string // key, string, integer, pattern, pure-token, oneof, block
	token    string
	optional bool
	multiple bool
	args     []docArg
	// keySpec is the index of the key spec of a key argument, plus one
	// (0: none).
	keySpec int
}

// keyArgCounter is where numberKeyArgs is in a command's key specs.
type keyArgCounter struct {
	next    int // the spec of the next key argument
	pattern int // the spec of the patterns, plus one, once one had it
}

// numberKeyArgs gives the key arguments, in their order, the key specs of
// the command: the n-th key argument the n-th spec, the ones past the
// last spec the last (LCS's key1 and key2 are its one); and the patterns
// that name keys (SORT's BY and GET), the unknown spec they come to.
func numberKeyArgs(args []docArg, specs []commands.KeySpec, at *keyArgCounter) {
	for i := range args {
		switch a := &args[i]; {
		case len(specs) == 0:
		case a.typ == "key":
			a.keySpec = min(at.next, len(specs)-1) + 1
			at.next++
		case a.typ == "pattern" && at.pattern > 0:
			a.keySpec = at.pattern
		case a.typ == "pattern" && at.next < len(specs) && specs[at.next].Unknown:
			at.next++
			a.keySpec, at.pattern = at.next, at.next
		}
		numberKeyArgs(args[i].args, specs, at)
	}
}

// writeDocArgs writes an argument list: an array of maps, each argument's
// flags a set.
func writeDocArgs(c *Conn, args []docArg) {
	c.w.Array(len(args))
	for _, a := range args {
		n := 2
		if a.token != "" {
			n++
		}
		if a.keySpec > 0 {
			n++
		}
		var flags []string
		if a.optional {
			flags = append(flags, "optional")
		}
		if a.multiple {
			flags = append(flags, "multiple")
		}
		if len(flags) > 0 {
			n++
		}
		if len(a.args) > 0 {
			n++
		}
		c.w.Map(n)
		c.w.BulkString("name")
		c.w.BulkString(a.name)
		c.w.BulkString("type")
		c.w.BulkString(a.typ)
		if a.keySpec > 0 {
			c.w.BulkString("key_spec_index")
			c.w.Int(int64(a.keySpec - 1))
		}
		if a.token != "" {
			c.w.BulkString("token")
			c.w.BulkString(a.token)
		}
		if len(flags) > 0 {
			c.w.BulkString("flags")
			writeStatusSet(c, flags...)
		}
		if len(a.args) > 0 {
			c.w.BulkString("arguments")
			writeDocArgs(c, a.args)
		}
	}
}

// parseUsage turns a usage line such as
// "key value [NX|XX] [EX seconds|PX milliseconds|KEEPTTL] [key value ...]"
// into COMMAND DOCS arguments: upper-case words are tokens, "a|b" inside
// brackets or parentheses is a choice, brackets make an argument optional
// (parentheses only group, as in "(AND|OR) destkey"), and "[x ...]" after
// x makes x repeatable.
func parseUsage(usage string) []docArg {
	tokens := strings.Fields(strings.NewReplacer("[", " [ ", "]", " ] ", "(", " ( ", ")", " ) ", "|", " | ").Replace(usage))
	args, _ := parseUsageSeq(tokens)
	return args
}

// parseUsageSeq parses tokens up to an unmatched "]" or ")" and returns
// the arguments and how many tokens it used.
func parseUsageSeq(tokens []string) ([]docArg, int) {
	var out []docArg
	i := 0
	for i < len(tokens) && !isClose(tokens[i]) {
		t := tokens[i]
		switch {
		case t == "(":
			inner, n := parseUsageGroup(tokens[i+1:])
			i += n + 2
			out = append(out, inner)
		case t == "[":
			inner, n := parseUsageGroup(tokens[i+1:])
			i += n + 2 // the group and its brackets
			if seq, ok := repeated(inner, out); ok {
				out = out[:len(out)-len(seq)]
				rep := seq[0]
				if len(seq) > 1 {
					rep = docArg{name: "data", typ: "block", args: seq}
				}
				rep.multiple = true
				out = append(out, rep)
				continue
			}
			inner.optional = true
			out = append(out, inner)
		case t == "...":
			if len(out) > 0 {
				out[len(out)-1].multiple = true
			}
			i++
		case isToken(t) && i+1 < len(tokens) && !isToken(tokens[i+1]) && !isPunct(tokens[i+1]):
			a := plainArg(tokens[i+1])
			a.token = t
			out = append(out, a)
			i += 2
		case isToken(t):
			out = append(out, docArg{name: strings.ToLower(t), typ: "pure-token", token: t})
			i++
		default:
			out = append(out, plainArg(t))
			i++
		}
	}
	return out, i
}

// parseUsageGroup parses the inside of brackets. It returns a oneof for
// alternatives, the single argument for a group of one, or a block.
func parseUsageGroup(tokens []string) (docArg, int) {
	var alts []docArg
	i := 0
	for {
		seq, n := parseUsageSeqUntilBar(tokens[i:])
		i += n
		alts = append(alts, seqArg(seq))
		if i < len(tokens) && tokens[i] == "|" {
			i++
			continue
		}
		break
	}
	if len(alts) == 1 {
		return alts[0], i
	}
	return docArg{name: alts[0].name + "-choice", typ: "oneof", args: alts}, i
}

// parseUsageSeqUntilBar is parseUsageSeq stopping at a top-level "|" too.
func parseUsageSeqUntilBar(tokens []string) ([]docArg, int) {
	depth, end := 0, len(tokens)
	for j, t := range tokens {
		if t == "[" || t == "(" {
			depth++
		} else if isClose(t) {
			if depth == 0 {
				end = j
				break
			}
			depth--
		} else if t == "|" && depth == 0 {
			end = j
			break
		}
	}
	seq, _ := parseUsageSeq(tokens[:end])
	return seq, end
}

// seqArg makes one argument of a sequence: itself if it has one element,
// else a block named after its token or first argument.
func seqArg(seq []docArg) docArg {
	if len(seq) == 1 {
		return seq[0]
	}
	block := docArg{typ: "block", args: seq}
	if len(seq) > 0 && seq[0].typ == "pure-token" {
		block.name, block.token, block.args = seq[0].name, seq[0].token, seq[1:]
	} else if len(seq) > 0 {
		block.name = seq[0].name
	}
	return block
}

// repeated reports whether group is "x ..." repeating the arguments just
// before it, as in "key [key ...]", and returns those arguments.
func repeated(group docArg, before []docArg) ([]docArg, bool) {
	seq := []docArg{group}
	if group.typ == "block" && group.token == "" {
		seq = group.args
	}
	if !seq[len(seq)-1].multiple && !(group.typ == "block" && group.multiple) {
		return nil, false
	}
	if len(seq) > len(before) {
		return nil, false
	}
	tail := before[len(before)-len(seq):]
	for i := range seq {
		if seq[i].name != tail[i].name || seq[i].typ != tail[i].typ {
			return nil, false
		}
	}
	// A copy: the caller overwrites these slots of before with the result.
	return slices.Clone(tail), true
}

func isToken(t string) bool {
	return t != "" && strings.ToUpper(t) == t && strings.ToLower(t) != t
}

func isPunct(t string) bool {
	return t == "[" || t == "]" || t == "(" || t == ")" || t == "|" || t == "..."
}

func isClose(t string) bool { return t == "]" || t == ")" }

func plainArg(name string) docArg {
	typ := "string"
	switch name {
	case "key", "key1", "key2", "newkey", "destkey", "source", "destination", "sourcekey", "src", "dst":
		typ = "key"
	case "pattern":
		typ = "pattern"
	case "seconds", "milliseconds", "ms", "count", "cursor", "index", "offset", "start", "end",
		"increment", "decrement", "ttl", "grace", "protover", "n", "bit", "destination-db", "min-match-len",
		"numreplicas", "timeout":
		typ = "integer"
	case "unix-time-seconds", "unix-time-milliseconds":
		typ = "unix-time"
	}
	return docArg{name: name, typ: typ}
}
