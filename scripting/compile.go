package scripting

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/stampedeless/stampedeless/internal/argsplit"
	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// compile parses and compiles src into a function prototype. Prototypes
// hold no interpreter state, so compiling needs no lock and one
// prototype serves every run.
//
// A syntax error reads as Lua 5.1 words it, "name:line: message near
// 'token'"; gopher-lua's parser knows fewer kinds of error than Lua's,
// so the message is often the generic one.
func compile(src, name string) (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		var pe *parse.Error
		if errors.As(err, &pe) {
			return nil, errors.New(syntaxError(src, name, pe))
		}
		return nil, err
	}
	return lua.Compile(chunk, name)
}

func syntaxError(src, name string, pe *parse.Error) string {
	msg := pe.Message
	switch msg {
	case "syntax error":
		msg = "unexpected symbol"
	case "unterminated string":
		msg = "unfinished string"
	}
	line, near := pe.Pos.Line, pe.Token
	if line < 0 {
		// The parser ran out of input: Lua names the end and its line.
		line, near = 1+strings.Count(src, "\n"), "<eof>"
	}
	return fmt.Sprintf("%s:%d: %s near '%s'", name, line, msg, near)
}

// Flags are the script flags a shebang line declares ("#!lua
// flags=no-writes,allow-oom").
type Flags uint8

// The flags Redis 7 knows.
const (
	FlagNoWrites Flags = 1 << iota
	FlagAllowOOM
	FlagAllowStale
	FlagNoCluster
	FlagAllowCrossSlotKeys
	// FlagEvalCompat marks a script without a shebang: Redis runs it
	// as EVAL always did, with no flags.
	FlagEvalCompat
)

var flagNames = []struct {
	name string
	flag Flags
}{
	{"no-writes", FlagNoWrites}, {"allow-oom", FlagAllowOOM}, {"allow-stale", FlagAllowStale},
	{"no-cluster", FlagNoCluster}, {"allow-cross-slot-keys", FlagAllowCrossSlotKeys},
}

// shebang reads a script's "#!lua" line as Redis's
// evalExtractShebangFlags does. It returns the flags and the line's
// length (the body compiles from there, keeping its newline so line
// numbers hold).
func shebang(body []byte) (Flags, int, error) {
	if !bytes.HasPrefix(body, []byte("#!")) {
		return FlagEvalCompat, 0, nil
	}
	n := bytes.IndexByte(body, '\n')
	if n < 0 {
		return 0, 0, errors.New("Invalid script shebang")
	}
	parts, ok := splitArgs(string(body[:n]))
	if !ok || len(parts) == 0 {
		return 0, 0, errors.New("Invalid engine in script shebang")
	}
	if parts[0] != "#!lua" {
		return 0, 0, fmt.Errorf("Unexpected engine in script shebang: %s", parts[0])
	}
	var flags Flags
	for _, part := range parts[1:] {
		list, ok := strings.CutPrefix(part, "flags=")
		if !ok {
			return 0, 0, fmt.Errorf("Unknown lua shebang option: %s", part)
		}
		if list == "" {
			continue
		}
	next:
		for _, f := range strings.Split(list, ",") {
			for _, fn := range flagNames {
				if f == fn.name {
					flags |= fn.flag
					continue next
				}
			}
			return 0, 0, fmt.Errorf("Unexpected flag in script shebang: %s", f)
		}
	}
	return flags, n, nil
}

// splitArgs splits a line into words as Redis's sdssplitargs does
// (argsplit.Split). ok is false for unbalanced quotes.
func splitArgs(line string) (words []string, ok bool) {
	args, ok := argsplit.Split(nil, nil, []byte(line))
	if !ok {
		return nil, false
	}
	words = make([]string, len(args))
	for i, a := range args {
		words[i] = string(a)
	}
	return words, true
}

func hexVal(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}
