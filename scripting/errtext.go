package scripting

import (
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua words some runtime errors differently from Lua 5.1. Redis
// shows them to clients, so the common ones are reworded as Lua 5.1
// words them, without the variable names Lua adds when it knows them
// ("local 'x'"), which gopher-lua does not keep; a failed call's are
// found in the bytecode where the error handler sees the raising
// function (luaHandlerErrorText).
var luaErrorRewrites = []struct {
	re  *regexp.Regexp
	fix func(m []string) string
}{
	{regexp.MustCompile(`^cannot perform concat operation between (\w+) and (\w+)$`), func(m []string) string {
		bad := m[1]
		if bad == "string" || bad == "number" {
			bad = m[2]
		}
		return "attempt to concatenate a " + bad + " value"
	}},
	{regexp.MustCompile(`^cannot perform \w+ operation between (\w+) and (\w+)$`), func(m []string) string {
		bad := m[1]
		if bad == "number" {
			bad = m[2]
		}
		return "attempt to perform arithmetic on a " + bad + " value"
	}},
	{regexp.MustCompile(`^attempt to index a non-table object\((\w+)\) with key '.*'$`), func(m []string) string {
		return "attempt to index a " + m[1] + " value"
	}},
	{regexp.MustCompile(`^attempt to compare (\w+) with (\w+)$`), func(m []string) string {
		if m[1] == m[2] {
			return "attempt to compare two " + m[1] + " values"
		}
		return m[0]
	}},
	{regexp.MustCompile(`^bad argument #(\d+) to ([^' ]+) (\(.*\))$`), func(m []string) string {
		return "bad argument #" + m[1] + " to '" + m[2] + "' " + m[3]
	}},
	// gopher-lua does not say what was called; in a script, where reading
	// an unknown global is already an error, it is most often a nil
	// (a missing field, a function's nil result), as Lua 5.1 says.
	{regexp.MustCompile(`^` + nonFunctionCall + `$`), func([]string) string {
		return callErrorText("", "", "nil")
	}},
	// gopher-lua panics with this when its call stack is full; the
	// error handler cannot run then either (see scriptError).
	{regexp.MustCompile(`^lua callstack overflow$`), func([]string) string { return "stack overflow" }},
	{regexp.MustCompile(`^for statement (init|limit|step) must be a number$`), func(m []string) string {
		what := m[1]
		if what == "init" {
			what = "initial value"
		}
		return "'for' " + what + " must be a number"
	}},
}

// nonFunctionCall is gopher-lua's text for a call of a value that is
// not a function.
const nonFunctionCall = "attempt to call a non-function object"

// callErrorText is luaG_typeerror's text for a call of a value of type
// typ, which Lua 5.1 knows as kind ("field", "local"...) name, or
// nothing when kind is "".
func callErrorText(kind, name, typ string) string {
	if kind == "" {
		return "attempt to call a " + typ + " value"
	}
	return "attempt to call " + kind + " '" + name + "' (a " + typ + " value)"
}

// luaHandlerErrorText is luaErrorText in the error handler, where L's
// stack still holds the function that raised err at level: a failed call
// made there is worded as Lua 5.1 words it, with what it called when its
// bytecode says (failedCallText).
func luaHandlerErrorText(L *lua.LState, level int, err string) string {
	pos, msg := splitPosition(err)
	if msg == nonFunctionCall {
		if text, ok := failedCallText(L, level); ok {
			return pos + text
		}
	}
	return luaErrorText(err)
}

// luaErrorText rewords err, a runtime error with its "chunk:line: "
// position, as Lua 5.1 would word it.
func luaErrorText(err string) string {
	pos, msg := splitPosition(err)
	for _, r := range luaErrorRewrites {
		if m := r.re.FindStringSubmatch(msg); m != nil {
			return pos + r.fix(m)
		}
	}
	return err
}

// splitPosition splits err into its "chunk:line: " position, if any,
// and its message.
func splitPosition(err string) (pos, msg string) {
	// Chunk names of loadstring'd code may hold colons, so the line
	// number is what marks the position's end.
	if i := positionEnd(err); i > 0 {
		return err[:i], err[i:]
	}
	return "", err
}

var positionRE = regexp.MustCompile(`^.*?:\d+: `)

func positionEnd(s string) int {
	if !strings.Contains(s, ": ") {
		return -1
	}
	loc := positionRE.FindStringIndex(s)
	if loc == nil {
		return -1
	}
	return loc[1]
}
