package scripting

import (
	"fmt"
	"strings"

	"github.com/stampedeless/stampedeless/resp"
)

var scriptHelp = []string{
	"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DEBUG (YES|SYNC|NO)",
	"    Set the debug mode for subsequent scripts executed.",
	"EXISTS <sha1> [<sha1> ...]",
	"    Return information about the existence of the scripts in the script cache.",
	"FLUSH [ASYNC|SYNC]",
	"    Flush the Lua scripts cache. Very dangerous on replicas.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the scripts cache.",
	"    * SYNC: Synchronously flush the scripts cache.",
	"KILL",
	"    Kill the currently executing Lua script.",
	"LOAD <script>",
	"    Load a script into the scripts cache without executing it.",
	"HELP",
	"    Print this help.",
}

// scriptArity is each SCRIPT subcommand's arity, counting SCRIPT and the
// subcommand, as Redis 7's command table has it (negative: at least).
var scriptArity = map[string]int{"debug": 3, "exists": -3, "flush": -2, "help": 2, "kill": 2, "load": 3}

// subcommandError checks a container's subcommand (args[0]) and its
// arity as Redis 7's command table does, with the same texts, and
// returns the error reply, or nil.
func subcommandError(container string, arities map[string]int, args [][]byte) []byte {
	if len(args) == 0 {
		return Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", container)).Reply()
	}
	sub := strings.ToLower(string(args[0]))
	arity, ok := arities[sub]
	if !ok {
		name := string(args[0])
		if len(name) > 128 {
			name = name[:128]
		}
		return Error(oneLine(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", name, strings.ToUpper(container)))).Reply()
	}
	if n := len(args) + 1; (arity > 0 && n != arity) || n < -arity {
		return Error(fmt.Sprintf("ERR wrong number of arguments for '%s|%s' command", container, sub)).Reply()
	}
	return nil
}

// Script answers a SCRIPT command; args are its arguments after SCRIPT.
// It checks the subcommand and its arity as Redis 7's command table
// does, with the same texts. SCRIPT DEBUG can only turn debugging off:
// the Lua debugger is not there.
func (e *Engine) Script(args [][]byte) []byte {
	if r := subcommandError("script", scriptArity, args); r != nil {
		return r
	}
	switch sub := strings.ToLower(string(args[0])); sub {
	case "help":
		return statusLines(scriptHelp)
	case "flush":
		if len(args) == 2 {
			mode := strings.ToLower(string(args[1]))
			if mode != "sync" && mode != "async" {
				return Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option").Reply()
			}
		} else if len(args) > 2 {
			return Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option").Reply()
		}
		e.Flush()
		return []byte("+OK\r\n")
	case "exists":
		w := resp.Buffer(nil, 2)
		w.Array(len(args) - 1)
		for _, sha := range args[1:] {
			if e.Exists(sha) {
				w.Int(1)
			} else {
				w.Int(0)
			}
		}
		return w.Buffered()
	case "load":
		sha, err := e.Load(args[1])
		if err != nil {
			return err.(Error).Reply()
		}
		return bulk(sha)
	case "kill":
		return e.Kill()
	}
	// debug
	switch strings.ToLower(string(args[1])) {
	case "no":
		return []byte("+OK\r\n")
	case "yes", "sync":
		return Error("ERR SCRIPT DEBUG is not supported: this server has no Lua debugger").Reply()
	}
	return Error("ERR Use SCRIPT DEBUG YES/SYNC/NO").Reply()
}
