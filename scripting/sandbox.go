package scripting

import (
	"fmt"
	"math"
	"runtime/metrics"
	"strings"

	"github.com/stampedeless/stampedeless/internal/redisnum"
	lua "github.com/yuin/gopher-lua"
)

// Texts of the sandbox's errors, as Redis's patched Lua raises them.
const (
	readonlyText  = "Attempt to modify a readonly table"
	nonexistentFm = "Script attempted to access nonexistent global variable '%s'"
)

// userScript is the chunk name scripts compile under; Redis loads them as
// "@user_script", which Lua prints as "user_script" in positions.
const userScript = "user_script"

// state is the one Lua interpreter an Engine runs its scripts in, one at
// a time, as Redis runs all scripts in one lua_State.
//
// Redis locks every table reachable from the globals read-only with a
// flag its patched Lua checks. gopher-lua has no such flag, so scripts
// see read-only views instead: an empty table whose metatable reads
// through to the real one and refuses writes. The real tables never
// reach a script; the functions that could bypass a metatable (rawset,
// rawget, next, setmetatable, table.insert, ...) are wrapped to know the
// views.
type state struct {
	L *lua.LState
	// env is the view scripts get as _G; globals is what it shows, where
	// KEYS and ARGV are written for each run.
	env, globals *lua.LTable
	// views maps each read-only view to the table it shows.
	views map[*lua.LTable]*lua.LTable
	// envMeta is the view getmetatable(_G) returns, as Redis returns _G's
	// locked metatable; strMeta the one getmetatable returns for strings.
	envMeta, strMeta *lua.LTable
	// roError refuses a write to a view; it is every view's __newindex.
	roError *lua.LFunction
	handler *lua.LFunction
	rand    lrand48
	// jsonNull is cjson.null, a NULL light userdata in Redis: one value,
	// equal to itself, shared by every cjson table.
	jsonNull *lua.LUserData
	// run is the script running now, nil between runs.
	run *runState
	// loading is the library whose top level runs now (FUNCTION LOAD),
	// nil otherwise; only the function interpreter has one.
	loading *loading
	// fenvMeta is the metatable of the globals of the function
	// interpreter's libraries: its __index is libAPI while a library's
	// top level runs and env while its functions run, as Redis swaps
	// them, so that closures made at load time see the full API later.
	fenv, fenvMeta, libAPI *lua.LTable
	log                    func(level LogLevel, msg string)
	version                string
}

// runState is what redis.* needs of the running script.
type runState struct {
	caller   Caller
	resp     int // redis.setresp: the protocol commands reply in
	readOnly bool
	// callStart and callEnd bracket each Caller.Call, so the engine
	// knows when a command is under way and whether it wrote.
	callStart func()
	callEnd   func(wrote bool)
	// chunks maps the short names of chunks loadstring compiled to the
	// names Lua reports as their source (the code itself by default).
	chunks map[string]string
}

func newState(o *Options) *state {
	L := lua.NewState(lua.Options{
		SkipOpenLibs: true,
		// Lua 5.1 allows 20000 nested Lua calls (LUAI_MAXCALLS) and grows
		// its value stack as scripts need; gopher-lua's defaults are far
		// smaller, so deep recursion that works in Redis would fail.
		CallStackSize:       20000,
		MinimizeStackMemory: true,
		RegistrySize:        1024,
		RegistryGrowStep:    4096,
		RegistryMaxSize:     1 << 20,
	})
	s := &state{L: L, views: map[*lua.LTable]*lua.LTable{}, log: o.Log, version: o.Version}
	s.rand.x = 0x1234ABCD330E // lrand48's state before any seed
	s.jsonNull = L.NewUserData()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{"", lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath}, {lua.CoroutineLibName, lua.OpenCoroutine}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	// gopher-lua's math.huge is the largest float; Lua's is infinity.
	if m, ok := L.GetGlobal(lua.MathLibName).(*lua.LTable); ok {
		m.RawSetString("huge", lua.LNumber(math.Inf(1)))
	}
	loaded := L.G.Global
	s.roError = L.NewFunction(func(L *lua.LState) int {
		luaError(L, readonlyText)
		return 0
	})

	g := L.NewTable()
	s.globals = g
	s.env = s.view(g)
	// Reading a global that does not exist is an error in Redis, raised
	// from the globals' metatable.
	nonexistent := L.NewFunction(func(L *lua.LState) int {
		name, _ := luaString(L.Get(2))
		luaError(L, nonexistentFm, name)
		return 0
	})
	gmeta := L.NewTable()
	gmeta.RawSetString("__index", nonexistent)
	L.SetMetatable(g, gmeta)
	pub := L.NewTable()
	pub.RawSetString("__index", nonexistent)
	pub.RawSetString("__newindex", s.roError)
	s.envMeta = s.view(pub)

	for _, name := range []string{"assert", "rawequal", "select", "type", "unpack", "xpcall"} {
		g.RawSetString(name, loaded.RawGetString(name))
	}
	g.RawSetString("_G", s.env)
	g.RawSetString("_VERSION", lua.LString(lua.LuaVersion))
	s.setFuncs(g, map[string]lua.LGFunction{
		"pcall":          s.pcall,
		"tostring":       s.tostring(loaded.RawGetString("tostring")),
		"getmetatable":   s.getmetatable(loaded.RawGetString("getmetatable")),
		"setmetatable":   s.setmetatable(loaded.RawGetString("setmetatable")),
		"rawget":         s.rawget,
		"rawset":         s.rawset,
		"next":           s.next,
		"ipairs":         s.ipairs,
		"error":          luaErrorFunc,
		"tonumber":       tonumber,
		"load":           s.withEnv(loaded.RawGetString("load")),
		"loadstring":     s.loadstring,
		"collectgarbage": collectGarbage,
		"gcinfo":         gcinfo,
	})
	g.RawSetString("pairs", L.NewFunction(s.pairs))

	// gopher-lua makes the string library its own metatable for
	// strings; Redis has a separate metatable whose __index is the
	// library, locked like the globals.
	str := loaded.RawGetString("string").(*lua.LTable)
	str.RawSetString("__index", lua.LNil)
	str.RawSetString("rep", L.NewFunction(stringRep(str.RawGetString("rep"))))
	str.RawSetString("dump", L.NewFunction(stringDump))
	strView := s.view(str)
	g.RawSetString("string", strView)
	strMeta := L.NewTable()
	strMeta.RawSetString("__index", strView)
	L.SetMetatable(lua.LString(""), strMeta)
	s.strMeta = s.view(strMeta)

	tab := loaded.RawGetString("table").(*lua.LTable)
	for _, name := range []string{"insert", "remove", "sort"} {
		tab.RawSetString(name, L.NewFunction(s.refuseViews(tab.RawGetString(name))))
	}
	s.setFuncs(tab, map[string]lua.LGFunction{
		"foreach":  s.tableForeach(false),
		"foreachi": s.tableForeach(true),
		"setn": func(L *lua.LState) int {
			luaError(L, "'setn' is obsolete")
			return 0
		},
	})
	g.RawSetString("table", s.view(tab))
	math := loaded.RawGetString("math").(*lua.LTable)
	s.setFuncs(math, map[string]lua.LGFunction{"random": s.mathRandom, "randomseed": s.mathRandomseed})
	g.RawSetString("math", s.view(math))
	g.RawSetString("coroutine", s.view(loaded.RawGetString("coroutine").(*lua.LTable)))
	g.RawSetString("cjson", s.view(s.openJSON()))
	g.RawSetString("bit", s.view(openBit(L)))
	g.RawSetString("cmsgpack", s.view(s.openMsgpack()))
	g.RawSetString("struct", s.view(openStruct(L)))
	g.RawSetString("redis", s.view(s.openRedis()))

	// Go functions carry an environment too (getfenv shows it, load and
	// loadstring compile into it): the view, never the real globals.
	for _, t := range s.views {
		t.ForEach(func(_, v lua.LValue) {
			if fn, ok := v.(*lua.LFunction); ok {
				fn.Env = s.env
			}
		})
	}
	s.handler = L.NewFunction(s.errorHandler)
	s.handler.Env = s.env
	g.RawSetString("__redis__err__handler", s.handler)
	L.G.Global = s.env
	L.Env = s.env
	return s
}

func (s *state) setFuncs(t *lua.LTable, fns map[string]lua.LGFunction) {
	for name, fn := range fns {
		t.RawSetString(name, s.L.NewFunction(fn))
	}
}

// view returns a new read-only view of t.
func (s *state) view(t *lua.LTable) *lua.LTable {
	v := s.L.NewTable()
	mt := s.L.NewTable()
	mt.RawSetString("__index", t)
	mt.RawSetString("__newindex", s.roError)
	s.L.SetMetatable(v, mt)
	s.views[v] = t
	return v
}

// shown returns what v shows: the real table behind a view, or v.
func (s *state) shown(v lua.LValue) lua.LValue {
	if t, ok := v.(*lua.LTable); ok {
		if real, ok := s.views[t]; ok {
			return real
		}
	}
	return v
}

func (s *state) isView(v lua.LValue) bool {
	t, ok := v.(*lua.LTable)
	if !ok {
		return false
	}
	_, ok = s.views[t]
	return ok
}

// raiseReadonly raises Redis's error for a write to a locked table from a
// library function: Lua gives errors raised inside C functions no
// position.
func raiseReadonly(L *lua.LState) {
	L.Error(lua.LString(readonlyText), 0)
}

func (s *state) rawset(L *lua.LState) int {
	t := L.CheckTable(1)
	L.CheckAny(2)
	L.CheckAny(3)
	if s.isView(t) {
		raiseReadonly(L)
	}
	t.RawSet(L.Get(2), L.Get(3))
	L.SetTop(1)
	return 1
}

func (s *state) rawget(L *lua.LState) int {
	t := L.CheckTable(1)
	L.CheckAny(2)
	L.Push(s.shown(t).(*lua.LTable).RawGet(L.Get(2)))
	return 1
}

func (s *state) next(L *lua.LState) int {
	t := s.shown(L.CheckTable(1)).(*lua.LTable)
	k, v := t.Next(L.Get(2))
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(v)
	return 2
}

func (s *state) pairs(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(s.globals.RawGetString("next"))
	L.Push(t)
	L.Push(lua.LNil)
	return 3
}

func (s *state) ipairs(L *lua.LState) int {
	t := L.CheckTable(1)
	L.Push(L.NewFunction(func(L *lua.LState) int {
		i := L.CheckInt(2) + 1
		v := s.shown(L.CheckTable(1)).(*lua.LTable).RawGetInt(i)
		if v == lua.LNil {
			return 0
		}
		L.Push(lua.LNumber(i))
		L.Push(v)
		return 2
	}))
	L.Push(t)
	L.Push(lua.LNumber(0))
	return 3
}

func (s *state) getmetatable(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		v := L.CheckAny(1)
		switch {
		case v == s.env:
			L.Push(s.envMeta)
			return 1
		case s.isView(v):
			L.Push(lua.LNil)
			return 1
		case v.Type() == lua.LTString:
			L.Push(s.strMeta)
			return 1
		}
		return callThrough(L, orig)
	}
}

func (s *state) setmetatable(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if s.isView(L.Get(1)) {
			raiseReadonly(L)
		}
		return callThrough(L, orig)
	}
}

// callThrough calls fn with this call's arguments and returns what it
// returns.
func callThrough(L *lua.LState, fn lua.LValue) int {
	top := L.GetTop()
	L.Push(fn)
	for i := 1; i <= top; i++ {
		L.Push(L.Get(i))
	}
	L.Call(top, lua.MultRet)
	return L.GetTop() - top
}

// refuseViews wraps a table library function that writes its first
// argument.
func (s *state) refuseViews(fn lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if s.isView(L.Get(1)) {
			raiseReadonly(L)
		}
		return callThrough(L, fn)
	}
}

// withEnv wraps a loader so what it compiles gets the globals' view, as
// Lua 5.1 gives chunks the thread's globals.
func (s *state) withEnv(fn lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		n := callThrough(L, fn)
		if f, ok := L.Get(-n).(*lua.LFunction); ok {
			f.Env = s.env
		}
		return n
	}
}

// loadstring is Lua 5.1's; a chunk is named [string "..."] after its
// first line as Lua names it, and precompiled chunks are refused (Redis
// refuses them too; gopher-lua cannot load them anyway).
func (s *state) loadstring(L *lua.LState) int {
	src := L.CheckString(1)
	name := L.OptString(2, src)
	chunk := chunkID(name)
	if strings.HasPrefix(src, "\x1bLua") {
		L.Push(lua.LNil)
		L.Push(lua.LString(chunk + ": bad binary format (precompiled chunk)"))
		return 2
	}
	proto, err := compile(src, chunk)
	if err != nil {
		L.Push(lua.LNil)
		L.Push(lua.LString(err.Error()))
		return 2
	}
	if s.run != nil {
		if s.run.chunks == nil {
			s.run.chunks = map[string]string{}
		}
		s.run.chunks[chunk] = name
	}
	fn := L.NewFunctionFromProto(proto)
	fn.Env = s.env
	L.Push(fn)
	return 1
}

// stringDump stands for Lua 5.1's string.dump, which gopher-lua lacks: a
// Lua function gives the header of a Lua 5.1 binary chunk (of a 64-bit
// build) without its body, since no script can load bytecode anyway
// (loadstring refuses it, as Redis's does); a Go function cannot be
// dumped, as a C function cannot.
func stringDump(L *lua.LState) int {
	if L.CheckFunction(1).IsG {
		luaError(L, "unable to dump given function")
	}
	L.Push(lua.LString("\x1bLua\x51\x00\x01\x04\x08\x04\x08\x00"))
	return 1
}

// chunkID is Lua 5.1's luaO_chunkid for a chunk given as a string: '='
// and '@' names stand as they are, others become [string "first
// line..."].
func chunkID(name string) string {
	if strings.HasPrefix(name, "=") || strings.HasPrefix(name, "@") {
		return name[1:]
	}
	line, _, cut := strings.Cut(name, "\n")
	const max = 60 - len(`[string "..."]`)
	if len(line) > max {
		line, cut = line[:max], true
	}
	if cut {
		return `[string "` + line + `..."]`
	}
	return `[string "` + line + `"]`
}

// pcall is Redis's: Redis 7 raises errors from redis.call as tables, and
// pcall hands a script the table's err text, as pcall did when errors
// were strings.
func (s *state) pcall(L *lua.LState) int {
	if L.GetTop() == 0 {
		// Redis's pcall hands lua_pcall its own placeholder then, and
		// calling a boolean fails.
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a boolean value"))
		return 2
	}
	nargs := L.GetTop() - 1
	if err := L.PCall(nargs, lua.MultRet, nil); err != nil {
		obj := lua.LValue(lua.LString(err.Error()))
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		switch o := obj.(type) {
		case *lua.LTable:
			if msg := o.RawGetString("err"); lua.LVCanConvToString(msg) {
				obj = msg
			}
		case lua.LString:
			obj = lua.LString(luaErrorText(string(o)))
		}
		L.SetTop(0)
		L.Push(lua.LFalse)
		L.Push(obj)
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// tostring prints numbers as Lua 5.1 does (%.14g).
func (s *state) tostring(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		if n, ok := L.CheckAny(1).(lua.LNumber); ok {
			L.Push(lua.LString(redisnum.AppendG(nil, float64(n), 14)))
			return 1
		}
		return callThrough(L, orig)
	}
}

// luaString converts v as lua_tolstring does: strings, and numbers printed
// with %.14g.
func luaString(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return string(redisnum.AppendG(nil, float64(v), 14)), true
	}
	return "", false
}

// collectGarbage answers Lua 5.1's options without forcing a collection:
// the Go runtime collects, and a script calling collectgarbage in a loop
// must not stall the whole server with runtime.GC.
func collectGarbage(L *lua.LState) int {
	opt := L.OptString(1, "collect")
	switch opt {
	case "count":
		L.Push(lua.LNumber(float64(heapBytes()) / 1024))
	case "step":
		L.Push(lua.LFalse)
	case "collect", "stop", "restart", "setpause", "setstepmul":
		L.Push(lua.LNumber(0))
	default:
		argError(L, 1, "collectgarbage", fmt.Sprintf("invalid option '%s'", opt))
	}
	return 1
}

func gcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(heapBytes() / 1024))
	return 1
}

// heapBytes is the Go heap in use: the interpreter's memory is part of
// it and cannot be told apart.
func heapBytes() uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sample[0].Value.Uint64()
}

// errorHandler is Redis's __redis__err__handler: it turns an error into
// a table {err=..., source=..., line=...} naming where the script was,
// which the Engine formats into the reply.
func (s *state) errorHandler(L *lua.LState) int {
	obj := L.Get(1)
	t, ok := obj.(*lua.LTable)
	if !ok {
		msg, ok := luaString(obj)
		if !ok {
			msg = L.ToStringMeta(obj).String()
		} else if _, isStr := obj.(lua.LString); isStr {
			// Level 1 raised it, and its registers are still there.
			msg = luaHandlerErrorText(L, 1, msg)
		}
		t = L.NewTable()
		t.RawSetString("err", lua.LString("ERR "+msg))
	}
	// Level 1 raised the error; when that is a Go function (error,
	// redis.call) the script line is its caller's.
	fr, ok := frameAt(L, 1)
	if ok && !fr.lua {
		fr, ok = frameAt(L, 2)
	}
	if ok && fr.lua {
		t.RawSetString("source", lua.LString(s.sourceName(fr.source)))
		t.RawSetString("line", lua.LNumber(fr.line))
	}
	L.Push(t)
	return 1
}

// sourceName is the name Lua reports as a chunk's source: "@user_script"
// for the script, the code (or the name given) for loadstring's.
func (s *state) sourceName(short string) string {
	if short == userScript || short == userFunction {
		return "@" + short
	}
	if s.run != nil {
		if raw, ok := s.run.chunks[short]; ok {
			return raw
		}
	}
	return short
}

// frame is what the error paths need to know of a stack level.
type frame struct {
	lua    bool // a Lua function, not a Go one
	source string
	line   int
}

func frameAt(L *lua.LState, level int) (frame, bool) {
	dbg, ok := L.GetStack(level)
	if !ok {
		return frame{}, false
	}
	fv, err := L.GetInfo("fSl", dbg, lua.LNil)
	fn, isFn := fv.(*lua.LFunction)
	if err != nil || !isFn {
		return frame{}, false
	}
	if fn.IsG {
		return frame{}, true
	}
	return frame{lua: true, source: dbg.Source, line: dbg.CurrentLine}, true
}

// luaWhere is luaL_where: "chunk:line: " of the function at level when
// it is Lua code, else "".
func luaWhere(L *lua.LState, level int) string {
	fr, ok := frameAt(L, level)
	if !ok || !fr.lua || fr.line <= 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d: ", fr.source, fr.line)
}

// luaError is luaL_error: the message, after the position of the code
// that called the running Go function.
func luaError(L *lua.LState, format string, args ...any) {
	L.Error(lua.LString(luaWhere(L, 1)+fmt.Sprintf(format, args...)), 0)
}

// luaErrorFunc is Lua 5.1's error: a string or number message gets the
// position of the level's function, other values are raised as they are.
func luaErrorFunc(L *lua.LState) int {
	obj := L.Get(1)
	level := 1
	if L.GetTop() >= 2 {
		n, ok := luaNumber(L.Get(2))
		if !ok {
			argError(L, 2, "error", "number expected, got "+typeName(L, 2))
		}
		level = int(toInt64(n))
	}
	if msg, ok := luaString(obj); ok && level > 0 {
		L.Error(lua.LString(luaWhere(L, level)+msg), 0)
	}
	L.Error(obj, 0)
	return 0
}

// maxString bounds what string.rep builds, at Redis's largest bulk
// string (proto-max-bulk-len): one script line must not be able to ask
// the Go runtime for gigabytes and take the whole server down.
const maxString = 512 << 20

func stringRep(orig lua.LValue) lua.LGFunction {
	return func(L *lua.LState) int {
		str, _ := luaString(L.Get(1))
		n, _ := luaNumber(L.Get(2))
		if n > 0 && float64(len(str))*n > maxString {
			luaError(L, "resulting string too large")
		}
		return callThrough(L, orig)
	}
}

// tonumber is Lua 5.1's: base 10 reads what strtod reads (with spaces
// around), other bases what strtoul reads.
func tonumber(L *lua.LState) int {
	v := L.Get(1)
	if L.GetTop() < 2 || L.Get(2) == lua.LNil {
		if L.GetTop() == 0 {
			argError(L, 1, "tonumber", "value expected")
		}
		if n, ok := luaNumber(v); ok {
			L.Push(lua.LNumber(n))
		} else {
			L.Push(lua.LNil)
		}
		return 1
	}
	bn, ok := luaNumber(L.Get(2))
	if !ok {
		argError(L, 2, "tonumber", "number expected, got "+typeName(L, 2))
	}
	base := toInt64(bn)
	if base < 2 || base > 36 {
		argError(L, 2, "tonumber", "base out of range")
	}
	str, ok := luaString(v)
	if !ok {
		argError(L, 1, "tonumber", "string expected, got "+typeName(L, 1))
	}
	if n, ok := strtoul(strings.TrimRight(str, " \t\n\r\v\f"), int(base)); ok {
		L.Push(lua.LNumber(n))
	} else {
		L.Push(lua.LNil)
	}
	return 1
}

// strtoul reads all of s as C's strtoul does in base: leading spaces, a
// sign (a minus wraps around), an optional 0x for base 16, digits.
func strtoul(s string, base int) (float64, bool) {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if base == 16 && len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x' {
		s = s[2:]
	}
	if s == "" {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		d := 36
		switch {
		case isDigit(s[i]):
			d = int(s[i] - '0')
		case c >= 'a' && c <= 'z':
			d = int(c-'a') + 10
		}
		if d >= base {
			return 0, false
		}
		u = u*uint64(base) + uint64(d)
	}
	if neg {
		u = -u
	}
	return float64(u), true
}

// tableForeach is Lua 5.1's table.foreach and table.foreachi: f is called
// with each key and value, and the first value it returns other than nil
// ends the walk and is returned.
func (s *state) tableForeach(indexed bool) lua.LGFunction {
	return func(L *lua.LState) int {
		t := s.shown(L.CheckTable(1)).(*lua.LTable)
		f := L.CheckFunction(2)
		visit := func(k, v lua.LValue) bool {
			L.Push(f)
			L.Push(k)
			L.Push(v)
			L.Call(2, 1)
			if r := L.Get(-1); r != lua.LNil {
				return true
			}
			L.Pop(1)
			return false
		}
		if indexed {
			for i := 1; i <= t.Len(); i++ {
				if visit(lua.LNumber(i), t.RawGetInt(i)) {
					return 1
				}
			}
			return 0
		}
		for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
			if visit(k, v) {
				return 1
			}
		}
		return 0
	}
}
