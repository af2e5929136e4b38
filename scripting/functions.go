package scripting

import (
	"bytes"
	"context"
	"fmt"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/internal/glob"
	"github.com/stampedeless/stampedeless/rdb"
	"github.com/stampedeless/stampedeless/resp"
	lua "github.com/yuin/gopher-lua"
)

// FCallInvocation is one FCALL or FCALL_RO.
type FCallInvocation struct {
	// Args are the command's arguments after its name: the function's
	// name, numkeys, the keys, the other arguments.
	Args [][]byte
	// ReadOnly marks FCALL_RO.
	ReadOnly bool
	// Proto is the client's protocol, 2 or 3; 0 means 2.
	Proto int
	// Caller runs the function's commands.
	Caller Caller
	// Command is the client's whole command as it sent it, for FUNCTION
	// STATS; nil: the name in lowercase and Args. FCall copies it.
	Command [][]byte
}

// FCall runs an FCALL or FCALL_RO as Eval runs a script: one at a time,
// with the same busy threshold, and FUNCTION KILL to stop it. The checks
// come in Redis's order: the function exists, numkeys, then FCALL_RO of
// a function without the no-writes flag.
func (e *Engine) FCall(ctx context.Context, inv FCallInvocation) ([]byte, error) {
	name := "fcall"
	if inv.ReadOnly {
		name = "fcall_ro"
	}
	if len(inv.Args) < 2 {
		return Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", name)).Reply(), nil
	}
	f, ok := e.libs.function(string(inv.Args[0]))
	if !ok {
		return ErrFunctionNotFound.Reply(), nil
	}
	keys, argv, err := SplitKeys(inv.Args[1:])
	if err == ErrNotInteger {
		err = Error("ERR Bad number of keys provided")
	}
	if err != nil {
		return err.(Error).Reply(), nil
	}
	if f.flags&FlagNoWrites == 0 && inv.ReadOnly {
		return ErrROWithWriteFlag.Reply(), nil
	}
	readOnly := inv.ReadOnly || f.flags&FlagNoWrites != 0
	if f.grows && e.libs.full() {
		return ErrLibrariesOOM.Reply(), nil
	}
	if err := e.acquire(ctx); err != nil {
		if err == ErrBusy {
			return e.BusyError().Reply(), nil
		}
		return nil, err
	}
	defer func() { <-e.slot }()
	src := inv.Command
	if src == nil {
		src = append([][]byte{[]byte(name)}, inv.Args...)
	}
	command := make([][]byte, len(src))
	for i, a := range src {
		command[i] = append([]byte(nil), a...)
	}
	t := target{st: e.functionState(), fn: f.fn, name: f.name, function: true, command: command}
	var allocated uint64
	if f.grows {
		t.allocated = &allocated
	}
	reply, err := e.run(t, keys, argv, readOnly, protoOf(inv.Proto), inv.Caller)
	if f.grows {
		e.grown(f.lib, allocated)
	}
	return reply, err
}

// A function's call may leave what it built in its closure's upvalues
// (a table it appends to, a string it extends), and nowhere else: the
// globals are read-only, and what it returns or passes to redis.call is
// garbage once the call ends. So a function without upvalues never
// changes what its library holds, and its calls cost nothing more. A
// call of one with upvalues reads how many bytes the process allocated
// before and after it, in the reads of the memory watch (one more read of
// a runtime metric, a fraction of a microsecond, where the memory watch
// is on, as it is in a bounded server): what the call kept is at most
// that. Those bytes add up over all libraries, and once they pass
// 1/remeasureShare of what the libraries hold, and at least remeasureMin,
// the libraries called since are walked again and charged what they hold.
// So the charges lag what the libraries hold by at most that much plus
// what one call keeps (which the running watch bounds), however many
// libraries grow at once, and the walks cost, per byte the calls
// allocate, a few times what the garbage collector spends on the
// libraries' objects: never a walk per call.
//
// The count is the whole process's: another client's commands allocate
// during the call too. That only walks the libraries sooner.
const (
	remeasureShare = 8
	remeasureMin   = 1 << 20
)

// grown adds what a call of one of l's growing functions allocated, and
// walks the libraries called since the last walk once that is due; the
// slot is held.
func (e *Engine) grown(l *library, allocated uint64) {
	libs := e.libs.grown(l, int64(min(allocated, 1<<62)))
	if len(libs) == 0 {
		return
	}
	wasFull := e.libs.full()
	var total int64
	for _, l := range libs {
		total = e.libs.remeasured(l, e.measure(l))
	}
	if !wasFull && total > e.opts.MaxBytes {
		e.log(LogWarning, "The function libraries hold %d bytes, past --max-scripts-memory (%d): "+
			"FCALL of functions with upvalues is refused until libraries are deleted or replaced. Library: %s.",
			total, e.opts.MaxBytes, l.name)
	}
}

// measure walks what l's functions hold in the interpreter (memsize.go);
// the slot is held.
func (e *Engine) measure(l *library) int64 {
	w := newWalker(e.shared)
	for _, f := range l.funcs {
		w.value(f.fn)
	}
	return w.size()
}

// functionState returns the interpreter of the libraries, making it
// the first time; the slot is held.
func (e *Engine) functionState() *state {
	if e.fst != nil {
		return e.fst
	}
	st := newState(&e.opts)
	L := st.L
	st.libAPI = st.openLibraryAPI()
	st.fenv = L.NewTable()
	st.fenvMeta = L.NewTable()
	st.fenvMeta.RawSetString("__index", st.env)
	st.fenvMeta.RawSetString("__newindex", st.roError)
	L.SetMetatable(st.fenv, st.fenvMeta)
	e.fst = st
	e.shared = sharedObjects(st, st.fenv, st.fenvMeta, st.libAPI, st.env, st.globals, st.envMeta,
		st.strMeta, st.roError, st.handler, st.jsonNull)
	return st
}

// loadLibrary compiles and runs one library's code, collecting what it
// registers, as Redis's functionsCreateWithLibraryCtx does up to linking
// it, and measures what the library holds. The slot is held. timeout 0
// lets the top level run as long as it takes (FUNCTION RESTORE's); the
// memory limit holds either way: the top level runs under the same watch
// as a script (watchMemory), and one that builds more than the limit
// leaves room for is stopped with ErrOutOfMemory, the reply Redis gives
// FUNCTION LOAD (a denyoom command) when memory is full.
func (e *Engine) loadLibrary(code string, timeout time.Duration) (*library, error) {
	md, err := parseLibraryMeta(code)
	if err != nil {
		return nil, err
	}
	if !validName(md.name) {
		return nil, errBadName
	}
	if !strings.EqualFold(md.engine, "lua") {
		return nil, Error(oneLine(fmt.Sprintf("ERR Engine '%s' not found", md.engine)))
	}
	proto, cerr := compile(md.body, userFunction)
	if cerr != nil {
		return nil, Error(oneLine(strings.Trim("ERR Error compiling function: "+cerr.Error(), "\r\n")))
	}
	lib := &library{name: md.name, code: code, funcs: map[string]*function{}}
	st := e.functionState()
	L := st.L
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	ctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var oom atomic.Bool
	st.fenvMeta.RawSetString("__index", st.libAPI)
	st.loading = &loading{lib: lib}
	fn := L.NewFunctionFromProto(proto)
	fn.Env = st.fenv
	L.SetContext(ctx)
	L.Push(fn)
	stopWatch := e.watchMemory(loadShare, func() {
		oom.Store(true)
		stopLoad()
	}, nil)
	perr := L.PCall(0, 0, st.handler)
	stopWatch()
	L.RemoveContext()
	L.SetTop(0)
	st.loading = nil
	st.fenvMeta.RawSetString("__index", st.env)
	if oom.Load() {
		// What the top level built is garbage now: give it back to the
		// system before the next command measures the heap.
		debug.FreeOSMemory()
		e.log(LogWarning, "FUNCTION LOAD stopped: the heap passed the memory limit. Library: %s.", md.name)
		return nil, ErrOutOfMemory
	}
	if perr != nil {
		msg := "ERR FUNCTION LOAD timeout"
		if ctx.Err() == nil {
			msg = "ERR " + luaErrorText(perr.Error())
			if ae, ok := perr.(*lua.ApiError); ok {
				if t, ok := ae.Object.(*lua.LTable); ok {
					msg, _ = luaString(t.RawGetString("err"))
				}
			}
		}
		return nil, Error(oneLine("ERR Error registering functions: " + msg))
	}
	if len(lib.funcs) == 0 {
		return nil, Error("ERR No functions registered")
	}
	for _, f := range lib.funcs {
		f.grows = len(f.fn.Upvalues) > 0
	}
	lib.vm, lib.meta = e.measure(lib), libraryOverhead(lib)
	return lib, nil
}

// loadShare is the share of the room the memory limit leaves that a
// library's top level may take (watchMemory).
const loadShare = 4

// withSlot runs fn holding the slot, as a script would.
func (e *Engine) withSlot(ctx context.Context, fn func() []byte) ([]byte, error) {
	if err := e.acquire(ctx); err != nil {
		if err == ErrBusy {
			return e.BusyError().Reply(), nil
		}
		return nil, err
	}
	defer func() { <-e.slot }()
	return fn(), nil
}

// FunctionLoad is FUNCTION LOAD [REPLACE] code: it runs the library's
// top level, holding the interpreter as a script does, and answers the
// library's name or Redis's error.
func (e *Engine) FunctionLoad(ctx context.Context, code []byte, replace bool) ([]byte, error) {
	return e.withSlot(ctx, func() []byte {
		if md, err := parseLibraryMeta(string(code)); err == nil && validName(md.name) && !replace {
			// Redis refuses a taken name before it compiles.
			if e.libs.has(md.name) && strings.EqualFold(md.engine, "lua") {
				return Error(fmt.Sprintf("ERR Library '%s' already exists", md.name)).Reply()
			}
		}
		lib, err := e.loadLibrary(string(code), loadTimeout*time.Millisecond)
		if err == nil {
			err = e.libs.join([]*library{lib}, replace, false)
		}
		if e, ok := err.(errLibraryExists); ok {
			err = Error(fmt.Sprintf("ERR Library '%s' already exists", e.name))
		}
		if err != nil {
			return err.(Error).Reply()
		}
		return bulk(lib.name)
	})
}

// FunctionRestore is FUNCTION RESTORE payload [FLUSH|APPEND|REPLACE]:
// every library in the payload loads, then they join the others by the
// policy, all or none.
func (e *Engine) FunctionRestore(ctx context.Context, payload []byte, policy string) ([]byte, error) {
	var flush, replace bool
	switch strings.ToLower(policy) {
	case "", "append":
	case "replace":
		replace = true
	case "flush":
		flush = true
	default:
		return Error("ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.").Reply(), nil
	}
	codes, err := decodeDump(payload)
	if err != nil {
		return err.(Error).Reply(), nil
	}
	return e.withSlot(ctx, func() []byte {
		libs := make([]*library, 0, len(codes))
		seen := map[string]bool{}
		funcs := map[string]bool{}
		var bytes int64
		for _, code := range codes {
			lib, err := e.loadLibrary(code, 0)
			if err != nil {
				return err.(Error).Reply()
			}
			// The payload's libraries alone past the bound: join would
			// refuse them; the rest need not load.
			if bytes += lib.size(); bytes > e.opts.MaxBytes {
				return ErrLibrariesFull.Reply()
			}
			if seen[lib.name] {
				return Error(fmt.Sprintf("ERR Library '%s' already exists", lib.name)).Reply()
			}
			for name := range lib.funcs {
				if funcs[strings.ToLower(name)] {
					return Error(fmt.Sprintf("ERR Function %s already exists", name)).Reply()
				}
				funcs[strings.ToLower(name)] = true
			}
			seen[lib.name] = true
			libs = append(libs, lib)
		}
		if err := e.libs.join(libs, replace, flush); err != nil {
			return Error(err.Error()).Reply()
		}
		return []byte("+OK\r\n")
	})
}

// FunctionDump is FUNCTION DUMP's payload.
func (e *Engine) FunctionDump() []byte {
	libs := e.libs.sorted()
	codes := make([]string, len(libs))
	for i, l := range libs {
		codes[i] = l.code
	}
	return bulk(string(rdb.DumpFunctions(codes)))
}

// Libraries is the number of loaded libraries.
func (e *Engine) Libraries() int { n, _, _ := e.libs.stats(); return n }

// Functions is the number of functions the loaded libraries registered.
func (e *Engine) Functions() int { _, n, _ := e.libs.stats(); return n }

// LibraryBytes is what the loaded libraries hold, as last measured:
// LibraryMemory's two parts added up, bounded by Options.MaxBytes.
func (e *Engine) LibraryBytes() int64 { _, _, n := e.libs.stats(); return n }

// LibraryMemory is what the loaded libraries hold, as last measured: vm
// in the functions' interpreter (their closures, upvalues, prototypes and
// everything those reach, Redis 7.0's used_memory_vm_functions, less the
// interpreter's own objects no library is charged for), overhead in their
// entries outside it (code, names, descriptions: used_memory_functions).
func (e *Engine) LibraryMemory() (vm, overhead int64) { return e.libs.memory() }

var functionHelp = []string{
	"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"LOAD [REPLACE] <FUNCTION CODE>",
	"    Create a new library with the given library name and code.",
	"DELETE <LIBRARY NAME>",
	"    Delete the given library.",
	"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
	"    Return general information on all the libraries:",
	"    * Library name",
	"    * The engine used to run the Library",
	"    * Library description",
	"    * Functions list",
	"    * Library code (if WITHCODE is given)",
	"    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
	"STATS",
	"    Return information about the current function running:",
	"    * Function name",
	"    * Command used to run the function",
	"    * Duration in MS that the function is running",
	"    If no function is running, return nil",
	"    In addition, returns a list of available engines.",
	"KILL",
	"    Kill the current running function.",
	"FLUSH [ASYNC|SYNC]",
	"    Delete all the libraries.",
	"    When called without the optional mode argument, the behavior is determined by the",
	"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
	"    * ASYNC: Asynchronously flush the libraries.",
	"    * SYNC: Synchronously flush the libraries.",
	"DUMP",
	"    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
	"RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
	"    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
	"    control how to handle existing libraries (default APPEND):",
	"    * FLUSH: delete all existing libraries.",
	"    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
	"    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
	"      libraries with the new libraries (notice that even on this option there is a chance of failure",
	"      in case of functions name collision with another library).",
	"HELP",
	"    Prints this help.",
}

// functionArity is each FUNCTION subcommand's arity, counting FUNCTION
// and the subcommand, as Redis 7's command table has it.
var functionArity = map[string]int{"delete": 3, "dump": 2, "flush": -2, "help": 2, "kill": 2,
	"list": -2, "load": -3, "restore": -3, "stats": 2}

// Function answers the FUNCTION subcommands; args are its arguments
// after FUNCTION, proto the client's protocol. LOAD and RESTORE run Lua
// and may wait for a running script (ctx bounds the wait); the others
// answer at once.
func (e *Engine) Function(ctx context.Context, args [][]byte, proto int) ([]byte, error) {
	if r := subcommandError("function", functionArity, args); r != nil {
		return r, nil
	}
	proto = protoOf(proto)
	syntax := func() []byte {
		return Error(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try FUNCTION HELP.", string(args[0]))).Reply()
	}
	switch strings.ToLower(string(args[0])) {
	case "help":
		return statusLines(functionHelp), nil
	case "load":
		replace := false
		i := 1
		for ; i < len(args)-1; i++ {
			if !strings.EqualFold(string(args[i]), "replace") {
				return Error(oneLine("ERR Unknown option given: " + string(args[i]))).Reply(), nil
			}
			replace = true
		}
		return e.FunctionLoad(ctx, args[i], replace)
	case "delete":
		if !e.libs.delete(string(args[1])) {
			return Error("ERR Library not found").Reply(), nil
		}
		return []byte("+OK\r\n"), nil
	case "flush":
		if len(args) > 2 {
			return syntax(), nil
		}
		if len(args) == 2 && !strings.EqualFold(string(args[1]), "sync") && !strings.EqualFold(string(args[1]), "async") {
			return Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option").Reply(), nil
		}
		e.libs.flush()
		return []byte("+OK\r\n"), nil
	case "list":
		return e.functionList(args[1:], proto), nil
	case "dump":
		return e.FunctionDump(), nil
	case "restore":
		if len(args) > 3 {
			return syntax(), nil
		}
		policy := ""
		if len(args) == 3 {
			policy = string(args[2])
		}
		return e.FunctionRestore(ctx, args[1], policy)
	case "stats":
		return e.functionStats(proto), nil
	}
	return e.KillFunction(), nil
}

func (e *Engine) functionList(args [][]byte, proto int) []byte {
	withCode := false
	var pattern []byte
	hasPattern := false
	for i := 0; i < len(args); i++ {
		switch {
		case !withCode && strings.EqualFold(string(args[i]), "withcode"):
			withCode = true
		case !hasPattern && strings.EqualFold(string(args[i]), "libraryname"):
			if i >= len(args)-1 {
				return Error("ERR library name argument was not given").Reply()
			}
			i++
			pattern, hasPattern = args[i], true
		default:
			return Error(oneLine("ERR Unknown argument " + string(args[i]))).Reply()
		}
	}
	var libs []*library
	for _, l := range e.libs.sorted() {
		if !hasPattern || glob.Match(bytes.ToLower(pattern), strings.ToLower(l.name)) {
			libs = append(libs, l)
		}
	}
	w := resp.Buffer(nil, proto)
	w.Array(len(libs))
	for _, l := range libs {
		n := 3
		if withCode {
			n = 4
		}
		w.Map(n)
		w.BulkString("library_name")
		w.BulkString(l.name)
		w.BulkString("engine")
		w.BulkString("LUA")
		w.BulkString("functions")
		fs := sortedFuncs(l)
		w.Array(len(fs))
		for _, f := range fs {
			w.Map(3)
			w.BulkString("name")
			w.BulkString(f.name)
			w.BulkString("description")
			if f.desc != nil {
				w.BulkString(*f.desc)
			} else {
				w.Null()
			}
			w.BulkString("flags")
			var names []string
			for _, fn := range flagNames {
				if f.flags&fn.flag != 0 {
					names = append(names, fn.name)
				}
			}
			w.Set(len(names))
			for _, name := range names {
				w.Status(name)
			}
		}
		if withCode {
			w.BulkString("library_code")
			w.BulkString(l.code)
		}
	}
	return w.Buffered()
}

// functionStats is FUNCTION STATS: the running function, and the one
// engine's counts. While a script (EVAL) runs busy Redis answers BUSY.
func (e *Engine) functionStats(proto int) []byte {
	e.mu.Lock()
	r := e.cur
	var name string
	var command [][]byte
	var ms int64
	running := r != nil && r.function
	if r != nil && !r.function && r.busy {
		e.mu.Unlock()
		return ErrBusy.Reply()
	}
	if running {
		name, command, ms = r.sha, r.command, time.Since(r.start).Milliseconds()
	}
	e.mu.Unlock()
	libs, funcs, _ := e.libs.stats()
	w := resp.Buffer(nil, proto)
	w.Map(2)
	w.BulkString("running_script")
	if !running {
		w.Null()
	} else {
		w.Map(3)
		w.BulkString("name")
		w.BulkString(name)
		w.BulkString("command")
		w.Array(len(command))
		for _, a := range command {
			w.Bulk(a)
		}
		w.BulkString("duration_ms")
		w.Int(ms)
	}
	w.BulkString("engines")
	w.Map(1)
	w.BulkString("LUA")
	w.Map(2)
	w.BulkString("libraries_count")
	w.Int(int64(libs))
	w.BulkString("functions_count")
	w.Int(int64(funcs))
	return w.Buffered()
}

// bulk is s as a bulk string reply.
func bulk(s string) []byte {
	w := resp.Buffer(nil, 2)
	w.BulkString(s)
	return w.Buffered()
}

// statusLines is an array of status replies, a HELP's.
func statusLines(lines []string) []byte {
	w := resp.Buffer(nil, 2)
	w.Array(len(lines))
	for _, line := range lines {
		w.Status(line)
	}
	return w.Buffered()
}
