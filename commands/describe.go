package commands

import (
	"slices"
	"strings"

	"github.com/stampedeless/stampedeless/resp"
)

// What COMMAND INFO and COMMAND DOCS say of a Spec: its key specs, and
// its documentation with the arguments its Usage line names.

// CountKeys counts the keys ks finds in args, as Redis's
// getKeysUsingKeySpecs: none if its search runs out of the arguments.
func (ks KeySpec) CountKeys(args [][]byte) int {
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
func keywordStart(ks KeySpec, args [][]byte) int {
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

// WriteKeySpecs writes key specs as COMMAND INFO does: a set of maps.
func WriteKeySpecs(w *resp.Writer, specs []KeySpec) {
	w.Set(len(specs))
	for _, ks := range specs {
		n := 3
		if ks.Notes != "" {
			n++
			w.Map(n)
			w.BulkString("notes")
			w.BulkString(ks.Notes)
		} else {
			w.Map(n)
		}
		w.BulkString("flags")
		WriteStatusSet(w, ks.Flags.Names()...)
		step := int64(max(ks.Step, 1))
		w.BulkString("begin_search")
		switch {
		case ks.Unknown:
			writeSearch(w, "unknown")
		case ks.Keyword != "":
			writeSearch(w, "keyword", "keyword", ks.Keyword, "startfrom", int64(ks.StartFrom))
		default:
			writeSearch(w, "index", "index", int64(ks.Index))
		}
		w.BulkString("find_keys")
		switch {
		case ks.Unknown:
			writeSearch(w, "unknown")
		case ks.KeyNum:
			writeSearch(w, "keynum", "keynumidx", int64(ks.NumKeys), "firstkey", int64(ks.FirstKey), "keystep", step)
		default:
			writeSearch(w, "range", "lastkey", int64(ks.LastKey), "keystep", step, "limit", int64(ks.Limit))
		}
	}
}

// writeSearch writes a key spec's begin_search or find_keys: its type and
// its spec, a map of the name and value pairs in fields.
func writeSearch(w *resp.Writer, typ string, fields ...any) {
	w.Map(2)
	w.BulkString("type")
	w.BulkString(typ)
	w.BulkString("spec")
	w.Map(len(fields) / 2)
	for i := 0; i+1 < len(fields); i += 2 {
		w.BulkString(fields[i].(string))
		switch v := fields[i+1].(type) {
		case string:
			w.BulkString(v)
		case int64:
			w.Int(v)
		}
	}
}

// WriteStatusSet writes a set of simple strings (an array in RESP2), Redis's
// form for flags and categories.
func WriteStatusSet(w *resp.Writer, items ...string) {
	w.Set(len(items))
	for _, s := range items {
		w.Status(s)
	}
}

// WriteDocs writes a command's COMMAND DOCS map (a flat array in RESP2):
// s's documentation, its arguments parsed from its Usage, each key
// argument with the index of its key spec in keySpecs.
func WriteDocs(w *resp.Writer, s *Spec, keySpecs []KeySpec) {
	args := parseUsage(s.Usage)
	n := 4
	if len(args) > 0 {
		n++
	}
	w.Map(n)
	w.BulkString("summary")
	w.BulkString(s.Summary)
	w.BulkString("since")
	w.BulkString(s.Since)
	w.BulkString("group")
	w.BulkString(s.Group)
	w.BulkString("complexity")
	w.BulkString(complexity(s))
	if len(args) > 0 {
		w.BulkString("arguments")
		numberKeyArgs(args, keySpecs, &keyArgCounter{})
		writeDocArgs(w, args)
	}
}

func complexity(s *Spec) string {
	if s.Flags&Fast != 0 {
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
func numberKeyArgs(args []docArg, specs []KeySpec, at *keyArgCounter) {
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
func writeDocArgs(w *resp.Writer, args []docArg) {
	w.Array(len(args))
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
		w.Map(n)
		w.BulkString("name")
		w.BulkString(a.name)
		w.BulkString("type")
		w.BulkString(a.typ)
		if a.keySpec > 0 {
			w.BulkString("key_spec_index")
			w.Int(int64(a.keySpec - 1))
		}
		if a.token != "" {
			w.BulkString("token")
			w.BulkString(a.token)
		}
		if len(flags) > 0 {
			w.BulkString("flags")
			WriteStatusSet(w, flags...)
		}
		if len(a.args) > 0 {
			w.BulkString("arguments")
			writeDocArgs(w, a.args)
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
