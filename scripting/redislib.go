package scripting

import (
	"crypto/sha1"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/stampedeless/stampedeless/internal/redisnum"
	lua "github.com/yuin/gopher-lua"
)

// LogLevel is a redis.log level, numbered as Redis numbers them.
type LogLevel int

// The levels scripts log at: redis.LOG_DEBUG and so on.
const (
	LogDebug LogLevel = iota
	LogVerbose
	LogNotice
	LogWarning
)

// Replication flags of redis.set_repl. The server has no replication, so
// they are checked and kept for scripts that pass them, and change
// nothing.
const (
	replNone = 0
	replAOF  = 1
	replRepl = 2
	replAll  = replAOF | replRepl
)

// openRedis builds the redis table.
func (s *state) openRedis() *lua.LTable {
	L := s.L
	t := L.NewTable()
	s.setFuncs(t, map[string]lua.LGFunction{
		"call":               func(L *lua.LState) int { return s.command(L, true) },
		"pcall":              func(L *lua.LState) int { return s.command(L, false) },
		"log":                s.redisLog,
		"setresp":            s.setResp,
		"sha1hex":            sha1hexFunc,
		"error_reply":        errorReply,
		"status_reply":       statusReply,
		"set_repl":           setRepl,
		"acl_check_cmd":      s.aclCheckCmd,
		"replicate_commands": func(L *lua.LState) int { L.Push(lua.LTrue); return 1 },
		// The debugger (SCRIPT DEBUG) is not there: a breakpoint is never
		// taken and redis.debug prints nowhere, as outside a debugging
		// session in Redis.
		"breakpoint": func(L *lua.LState) int { L.Push(lua.LFalse); return 1 },
		"debug":      func(L *lua.LState) int { return 0 },
	})
	for name, v := range map[string]int{
		"LOG_DEBUG": int(LogDebug), "LOG_VERBOSE": int(LogVerbose), "LOG_NOTICE": int(LogNotice),
		"LOG_WARNING": int(LogWarning), "REPL_NONE": replNone, "REPL_AOF": replAOF,
		"REPL_SLAVE": replRepl, "REPL_REPLICA": replRepl, "REPL_ALL": replAll,
	} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(s.version))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(s.version)))
	return t
}

// versionNum packs "7.2.0" as Redis's REDIS_VERSION_NUM: 0x00MMmmpp.
func versionNum(v string) int {
	n := 0
	parts := strings.SplitN(v, ".", 3)
	for i := range 3 {
		p := 0
		if i < len(parts) {
			p, _ = strconv.Atoi(parts[i])
		}
		n = n<<8 | p&0xff
	}
	return n
}

// raise raises Redis's error table for msg (luaPushError then
// lua_error).
func raise(L *lua.LState, msg string) int {
	L.Error(errorTable(L, []byte(msg)), 0)
	return 0
}

// command is redis.call (raise) and redis.pcall: the arguments go to the
// Caller as strings, numbers printed as Redis 7.2 prints them, and the
// reply comes back converted. redis.call raises an error reply,
// redis.pcall returns it.
func (s *state) command(L *lua.LState, raising bool) int {
	args, err := commandArgs(L)
	if err != "" {
		t := errorTable(L, []byte(err))
		if raising {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	reply := s.run.call(Command{Args: args, Proto: s.run.resp, ReadOnly: s.run.readOnly})
	r, _, perr := ParseReply(reply)
	if perr != nil {
		t := errorTable(L, []byte(perr.Error()))
		if raising {
			L.Error(t, 0)
		}
		L.Push(t)
		return 1
	}
	v := replyToLua(L, &r)
	if raising && (r.Kind == KindError || r.Kind == KindBlobError) {
		L.Error(v, 0)
	}
	L.Push(v)
	return 1
}

// call runs cmd through the Caller between callStart and callEnd, which
// runs even when the Caller panics (the panic becomes the script's
// error).
func (run *runState) call(cmd Command) []byte {
	if run.caller == nil {
		return ErrUnknownCommand.Reply()
	}
	wrote := false
	run.callStart()
	defer func() { run.callEnd(wrote) }()
	var reply []byte
	reply, wrote = run.caller.Call(cmd)
	return reply
}

// commandArgs reads redis.call's arguments, or returns Redis's error for
// them.
func commandArgs(L *lua.LState) ([][]byte, string) {
	argc := L.GetTop()
	if argc == 0 {
		return nil, "Please specify at least one argument for this redis lib call"
	}
	args := make([][]byte, argc)
	for i := range argc {
		switch v := L.Get(i + 1).(type) {
		case lua.LNumber:
			args[i] = []byte(formatArg(float64(v)))
		case lua.LString:
			args[i] = []byte(v)
		default:
			return nil, "Lua redis lib command arguments must be strings or integers"
		}
	}
	L.SetTop(0)
	return args, ""
}

func (s *state) redisLog(L *lua.LState) int {
	argc := L.GetTop()
	if argc < 2 {
		return raise(L, "redis.log() requires two arguments or more.")
	}
	level, ok := luaNumber(L.Get(1))
	if !ok {
		return raise(L, "First argument must be a number (log level).")
	}
	lvl := LogLevel(toInt64(level))
	if lvl < LogDebug || lvl > LogWarning {
		return raise(L, "Invalid debug level.")
	}
	if s.log == nil {
		return 0
	}
	var msg strings.Builder
	for i := 2; i <= argc; i++ {
		if str, ok := luaString(L.Get(i)); ok {
			if i != 2 {
				msg.WriteByte(' ')
			}
			msg.WriteString(str)
		}
	}
	s.log(lvl, msg.String())
	return 0
}

// luaNumber converts v as lua_tonumber does: numbers, and strings that
// read as numbers.
func luaNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		b := []byte(strings.TrimRight(string(v), " \t\n\r\v\f"))
		if f, n, _ := redisnum.Strtod(b); n == len(b) && n > 0 {
			return f, true
		}
	}
	return 0, false
}

func (s *state) setResp(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "redis.setresp() requires one argument.")
	}
	n, _ := luaNumber(L.Get(1))
	resp := toInt64(n)
	if resp != 2 && resp != 3 {
		return raise(L, "RESP version must be 2 or 3.")
	}
	s.run.resp = int(resp)
	return 0
}

func sha1hexFunc(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "wrong number of arguments")
	}
	str, _ := luaString(L.Get(1))
	sum := sha1.Sum([]byte(str))
	L.Push(lua.LString(hex.EncodeToString(sum[:])))
	return 1
}

// errorReply is redis.error_reply: a text without its '-' gets one, and
// the code before the first space (ERR when there is no space).
func errorReply(L *lua.LState) int {
	s, ok := L.Get(-1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, []byte("wrong number or type of arguments")))
		return 1
	}
	text := string(s)
	if !strings.HasPrefix(text, "-") {
		text = "-" + text
	}
	L.Push(errorTable(L, []byte(text)))
	return 1
}

func statusReply(L *lua.LState) int {
	s, ok := L.Get(-1).(lua.LString)
	if L.GetTop() != 1 || !ok {
		L.Push(errorTable(L, []byte("wrong number or type of arguments")))
		return 1
	}
	L.Push(named(L, "ok", s))
	return 1
}

func setRepl(L *lua.LState) int {
	if L.GetTop() != 1 {
		return raise(L, "redis.set_repl() requires one argument.")
	}
	n, _ := luaNumber(L.Get(-1))
	if toInt64(n)&^replAll != 0 {
		return raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
	}
	return 0
}

// aclCheckCmd is redis.acl_check_cmd. The Caller judges the command when
// it implements CommandChecker; otherwise every command is allowed.
func (s *state) aclCheckCmd(L *lua.LState) int {
	args, err := commandArgs(L)
	if err != "" {
		return raise(L, err)
	}
	allowed := true
	if cc, ok := s.run.caller.(CommandChecker); ok {
		var known bool
		if known, allowed = cc.CheckCommand(args); !known {
			return raise(L, "Invalid command passed to redis.acl_check_cmd()")
		}
	}
	L.Push(lua.LBool(allowed))
	return 1
}

// lrand48 is the 48-bit linear congruential generator Redis's math.random
// uses (redisLrand48), so a seeded sequence matches Redis's.
type lrand48 struct{ x uint64 }

const lrandMax = math.MaxInt32

func (r *lrand48) seed(v int32) {
	r.x = uint64(uint32(v))<<16 | 0x330E
}

func (r *lrand48) next() int32 {
	r.x = (0x5DEECE66D*r.x + 0xB) & (1<<48 - 1)
	return int32(r.x >> 17)
}

// mathRandom is Lua 5.1's math.random over lrand48.
func (s *state) mathRandom(L *lua.LState) int {
	r := float64(s.rand.next()%lrandMax) / float64(lrandMax)
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(r))
	case 1:
		u := checkInt(L, 1, "random")
		if u < 1 {
			argError(L, 1, "random", "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(r*float64(u)) + 1))
	case 2:
		l, u := checkInt(L, 1, "random"), checkInt(L, 2, "random")
		if l > u {
			argError(L, 2, "random", "interval is empty")
		}
		// Lua 5.1 computes u-l+1 in C ints, wrapping.
		L.Push(lua.LNumber(math.Floor(r*float64(int32(u-l+1))) + float64(l)))
	default:
		luaError(L, "wrong number of arguments")
	}
	return 1
}

func (s *state) mathRandomseed(L *lua.LState) int {
	s.rand.seed(int32(checkInt(L, 1, "randomseed")))
	return 0
}

// checkInt is luaL_checkint: a number, or a string that reads as one,
// truncated, and cast to a C int (the low 32 bits, as x86-64 does).
func checkInt(L *lua.LState, i int, fname string) int {
	n, ok := luaNumber(L.Get(i))
	if !ok {
		argError(L, i, fname, "number expected, got "+typeName(L, i))
	}
	return int(int32(toInt64(n)))
}
