package scripting

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/resp"
	lua "github.com/yuin/gopher-lua"
)

// Command is one redis.call or redis.pcall a script makes.
type Command struct {
	// Args are the command's name and arguments as the script passed
	// them, numbers printed as Redis 7.2 prints them. The Caller owns
	// them.
	Args [][]byte
	// Proto is the protocol the reply must be written in: 2, or 3 once
	// the script called redis.setresp(3).
	Proto int
	// ReadOnly is set for EVAL_RO and EVALSHA_RO and for scripts whose
	// shebang declares no-writes: a write command must be refused with
	// ErrWriteReadOnly.
	ReadOnly bool
}

// Caller runs a script's commands against the server's data.
type Caller interface {
	// Call runs cmd and returns its whole reply in RESP (cmd.Proto).
	// Before running it, it refuses what Redis refuses from a script,
	// with an error reply: an unknown command (ErrUnknownCommand), a
	// wrong number of arguments (ErrWrongArity), a command scripts may
	// not call (ErrNotAllowed: blocking, pub/sub, MULTI, EVAL ...), a
	// write from a read-only script (ErrWriteReadOnly). wrote reports a
	// write command that passed those checks, as Redis marks the script
	// dirty: from then on SCRIPT KILL refuses to stop it.
	//
	// Call runs on the goroutine that called Engine.Eval, while the
	// script holds the engine; it must not block for long and must not
	// call Eval.
	Call(cmd Command) (reply []byte, wrote bool)
}

// CommandChecker is implemented by a Caller that can answer
// redis.acl_check_cmd: known is false for a command the server does not
// have, allowed whether the client may run it. Without it every command
// passes.
type CommandChecker interface {
	CheckCommand(args [][]byte) (known, allowed bool)
}

// ErrorCounter is implemented by a Caller that counts error replies, as
// Redis's INFO errorstats does: once a script has ended, it is told when
// the script's reply is an error one of the script's commands replied
// (redis.call raised it, or the script returned redis.pcall's error
// table), which the Caller counted as that command's already. Redis counts
// such an error once.
type ErrorCounter interface {
	ReplyCounted()
}

// Invocation is one EVAL, EVALSHA, EVAL_RO or EVALSHA_RO.
type Invocation struct {
	// Args are the command's arguments after its name: the script (or
	// its SHA1 for EVALSHA), numkeys, the keys, the other arguments.
	Args [][]byte
	// SHA marks EVALSHA and EVALSHA_RO.
	SHA bool
	// ReadOnly marks EVAL_RO and EVALSHA_RO.
	ReadOnly bool
	// Proto is the client's protocol, 2 or 3; 0 means 2.
	Proto int
	// Caller runs the script's commands; without one every command is
	// unknown.
	Caller Caller
}

func (inv *Invocation) name() string {
	n := "eval"
	if inv.SHA {
		n = "evalsha"
	}
	if inv.ReadOnly {
		n += "_ro"
	}
	return n
}

// Options configure an Engine. The zero value is usable.
type Options struct {
	// MaxScripts bounds how many compiled scripts the cache keeps
	// (default 10000).
	MaxScripts int
	// MaxBytes bounds the cache's estimated size of compiled scripts
	// (default 64 MiB) and, separately, what the function libraries hold
	// as measured (see FunctionLoad and FCall).
	MaxBytes int64
	// OnLibraryBytes, if set, is told each change of what the function
	// libraries hold (LibraryBytes), as it happens: a load, a delete or
	// flush (negative), a call that grew a library. A server charges it
	// to its memory bound, as Redis counts the functions' Lua VM in
	// used_memory. It is called without the engine's locks held, from the
	// goroutine of the command that changed them, and must not call the
	// Engine.
	OnLibraryBytes func(delta int64)
	// BusyThreshold is Redis's busy-reply-threshold (lua-time-limit):
	// how long a script runs before the server answers others with BUSY
	// and SCRIPT KILL may stop it. Default 5s; negative never.
	// SetBusyThreshold changes it for the scripts that start after.
	BusyThreshold time.Duration
	// OnBusy, if set, is called each time a script turns busy, after
	// Busy reports it and without the engine's locks held: a server
	// wakes the commands waiting for the script, to answer them BUSY.
	OnBusy func()
	// Log receives redis.log's messages and the engine's own (slow and
	// killed scripts), at every level: the server filters by its
	// verbosity. Nil drops them.
	Log func(level LogLevel, msg string)
	// Version is what scripts see as redis.REDIS_VERSION (default
	// "7.2.0"); REDIS_VERSION_NUM follows from it.
	Version string
	// MemoryLimit is the live Go heap, in bytes, past which a running
	// script is stopped with ErrOutOfMemory, read as the script runs; 0
	// or less, or math.MaxInt64, none. If nil, it is Go's soft memory
	// limit (runtime/debug.SetMemoryLimit), which the store sets from the
	// memory bound: the heap alone past what the whole runtime may take is
	// a script holding what the bound has no room for.
	MemoryLimit func() int64
}

func (o *Options) withDefaults() Options {
	c := *o
	if c.MaxScripts <= 0 {
		c.MaxScripts = 10000
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 64 << 20
	}
	if c.BusyThreshold == 0 {
		c.BusyThreshold = 5 * time.Second
	}
	if c.Version == "" {
		c.Version = "7.2.0"
	}
	return c
}

// Engine runs scripts one at a time, as Redis does, in one Lua
// interpreter, and keeps their compiled form by SHA1. It is safe for
// concurrent use: Eval waits while another script runs, and answers BUSY
// once that one has run past the busy threshold.
type Engine struct {
	opts  Options
	cache *cache
	libs  *registry
	// slot is held (a value sent) by the Eval, FCall or library load that
	// runs Lua; the interpreters st (scripts) and fst (libraries and
	// their functions, as Redis keeps them in a Lua state of their own)
	// belong to it.
	slot chan struct{}
	st   *state
	fst  *state
	// shared are the objects of fst that no library is charged for: all
	// it held before any library ran (sharedObjects).
	shared map[any]struct{}

	mu sync.Mutex
	// cur is the running script, nil between scripts.
	cur *run
	// changed is closed and replaced whenever cur or its busy flag
	// changes, to wake Evals waiting for the slot.
	changed chan struct{}
	// reset makes the next run start a fresh interpreter (SCRIPT FLUSH).
	reset  bool
	closed bool
	// killWaits, when set, is called as Kill starts waiting for a
	// command to finish; tests use it to order events.
	killWaits func()

	// busy mirrors cur.busy, so that Busy, which a server calls before
	// every command, is one atomic load; busyFunction is set with it when
	// the busy one is a function (FCALL).
	busy, busyFunction atomic.Bool
	// threshold is the busy threshold in nanoseconds (SetBusyThreshold).
	threshold atomic.Int64
}

// run is the state of the running script that others look at.
type run struct {
	sha string // or the function's name
	// function marks an FCALL, which FUNCTION KILL stops and SCRIPT KILL
	// does not; command is its client's command, for FUNCTION STATS.
	function bool
	command  [][]byte
	start    time.Time
	cancel   context.CancelFunc
	busy     bool // past the busy threshold
	wrote    bool // a write command ran
	killed   bool
	oom      bool // stopped for memory (watchMemory)
	// inCall is open while a Caller.Call runs, closed when it returns.
	inCall chan struct{}
}

// New returns an Engine.
func New(o Options) *Engine {
	opts := o.withDefaults()
	e := &Engine{opts: opts, cache: newCache(opts.MaxScripts, opts.MaxBytes), libs: newRegistry(opts.MaxBytes, opts.OnLibraryBytes),
		slot: make(chan struct{}, 1), changed: make(chan struct{})}
	e.threshold.Store(int64(opts.BusyThreshold))
	return e
}

// SetBusyThreshold sets the busy threshold (Options.BusyThreshold) of the
// scripts that start from now on; zero or negative: never busy. It is
// CONFIG SET busy-reply-threshold.
func (e *Engine) SetBusyThreshold(d time.Duration) { e.threshold.Store(int64(d)) }

// BusyThreshold is the busy threshold scripts start with now; zero or
// negative: never busy.
func (e *Engine) BusyThreshold() time.Duration { return time.Duration(e.threshold.Load()) }

func (e *Engine) log(level LogLevel, format string, args ...any) {
	if e.opts.Log != nil {
		e.opts.Log(level, fmt.Sprintf(format, args...))
	}
}

// signal wakes the waiters; e.mu is held.
func (e *Engine) signal() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// SHA1 returns the lowercase hex SHA1 of a script body, its name in the
// cache.
func SHA1(body []byte) string {
	sum := sha1.Sum(body)
	return hex.EncodeToString(sum[:])
}

// Load compiles body into the cache (SCRIPT LOAD, and EVAL's first
// step) and returns its SHA1, or the error reply Redis gives for a bad
// shebang or a syntax error.
func (e *Engine) Load(body []byte) (string, error) {
	s, err := e.load(body)
	if err != nil {
		return "", err
	}
	return s.sha, nil
}

func (e *Engine) load(body []byte) (*script, error) {
	sha := SHA1(body)
	if s, ok := e.cache.get(sha); ok {
		return s, nil
	}
	flags, skip, err := shebang(body)
	if err != nil {
		return nil, Error("ERR " + err.Error())
	}
	// The shebang line goes but its newline stays, so lines keep their
	// numbers.
	proto, err := compile(string(body[skip:]), userScript)
	if err != nil {
		return nil, Error(oneLine(strings.Trim("ERR Error compiling script (new function): "+err.Error(), "\r\n")))
	}
	return e.cache.add(&script{sha: sha, proto: proto, flags: flags,
		size: int64(len(body)) + 40 + protoSize(proto)}), nil
}

// ScriptFlags returns the flags of the script an EVAL (body) or EVALSHA
// (sha, the digest) would run, as Redis's evalGetCommandFlags finds them
// before running it: those the cache keeps, or for an EVAL of a script not
// cached yet those its shebang declares. ok is false when they cannot be
// known yet (a digest not cached, a bad shebang): the command then counts
// as its own flags say. CLIENT PAUSE WRITE holds a script unless its
// flags say no-writes. It neither loads nor caches anything.
func (e *Engine) ScriptFlags(script []byte, sha bool) (flags Flags, ok bool) {
	if sha {
		if len(script) != 40 {
			return 0, false
		}
		if sc, found := e.cache.peek(strings.ToLower(string(script))); found {
			return sc.flags, true
		}
		return 0, false
	}
	if sc, found := e.cache.peek(SHA1(script)); found {
		return sc.flags, true
	}
	flags, _, err := shebang(script)
	return flags, err == nil
}

// FunctionFlags returns the flags of the function FCALL name would call,
// and false if there is none.
func (e *Engine) FunctionFlags(name []byte) (Flags, bool) {
	f, ok := e.libs.function(string(name))
	if !ok {
		return 0, false
	}
	return f.flags, true
}

// Exists reports whether the cache holds the script with digest sha (in
// either case), as SCRIPT EXISTS does.
func (e *Engine) Exists(sha []byte) bool {
	return e.cache.has(strings.ToLower(string(sha)))
}

// Flush empties the cache (SCRIPT FLUSH) and has the next script start
// in a fresh interpreter, as Redis resets its Lua state.
func (e *Engine) Flush() {
	e.cache.flush()
	e.mu.Lock()
	e.reset = true
	e.mu.Unlock()
}

// Len is the number of cached scripts.
func (e *Engine) Len() int { n, _, _ := e.cache.stats(); return n }

// Bytes is the cached scripts' estimated size.
func (e *Engine) Bytes() int64 { _, b, _ := e.cache.stats(); return b }

// Evicted counts the scripts the cache's bounds pushed out.
func (e *Engine) Evicted() uint64 { _, _, n := e.cache.stats(); return n }

// Busy reports whether a script has run past the busy threshold: the
// server then answers every command but SCRIPT KILL and SHUTDOWN NOSAVE
// with ErrBusy.
func (e *Engine) Busy() bool { return e.busy.Load() }

// Kill stops the busy script (SCRIPT KILL) and returns the reply: OK,
// ErrNotBusy when no script is past the busy threshold (Redis only
// hears SCRIPT KILL then), ErrUnkillable when the script has written.
// The script's own client gets ErrKilled.
//
// Redis handles SCRIPT KILL between a script's commands, never during
// one; so when the script is inside a command, Kill waits for it to
// return, and a command that wrote makes the script unkillable.
func (e *Engine) Kill() []byte { return e.kill(false) }

// KillFunction stops the busy function (FUNCTION KILL), as Kill stops a
// script. Neither stops the other kind: Redis answers that the server is
// busy running the other.
func (e *Engine) KillFunction() []byte { return e.kill(true) }

func (e *Engine) kill(function bool) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	for r := e.cur; r != nil && r.busy && !r.wrote && r.inCall != nil; r = e.cur {
		done := r.inCall
		e.mu.Unlock()
		if e.killWaits != nil {
			e.killWaits()
		}
		<-done
		e.mu.Lock()
	}
	r := e.cur
	switch {
	case r == nil || !r.busy:
		return ErrNotBusy.Reply()
	case r.wrote:
		return ErrUnkillable.Reply()
	case r.function && !function:
		return ErrBusyFunction.Reply()
	case !r.function && function:
		return ErrBusy.Reply()
	}
	if !r.killed {
		r.killed = true
		r.cancel()
		e.log(LogNotice, "Lua script killed by user with SCRIPT KILL.")
	}
	return []byte("+OK\r\n")
}

// Close stops a running script whether or not it wrote, as SHUTDOWN
// NOSAVE does, and refuses scripts from then on.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if e.cur != nil {
		e.cur.killed = true
		e.cur.cancel()
	}
	e.signal()
}

// Eval runs an EVAL, EVALSHA, EVAL_RO or EVALSHA_RO and returns the reply
// for the client, errors included. It waits while another script runs;
// the error is ctx's when ctx ends first, ErrClosed after Close. Once
// the script starts, ctx no longer matters: Redis finishes a script whose
// client went away.
func (e *Engine) Eval(ctx context.Context, inv Invocation) ([]byte, error) {
	if len(inv.Args) < 2 {
		return Error(fmt.Sprintf("ERR wrong number of arguments for '%s' command", inv.name())).Reply(), nil
	}
	// EVALSHA refuses a digest of the wrong length before it reads
	// numkeys; it looks the script up only after.
	if inv.SHA && len(inv.Args[0]) != 40 {
		return ErrNoScript.Reply(), nil
	}
	keys, argv, err := SplitKeys(inv.Args[1:])
	if err != nil {
		return err.(Error).Reply(), nil
	}
	var sc *script
	if inv.SHA {
		var ok bool
		if sc, ok = e.cache.get(strings.ToLower(string(inv.Args[0]))); !ok {
			return ErrNoScript.Reply(), nil
		}
	} else if sc, err = e.load(inv.Args[0]); err != nil {
		return err.(Error).Reply(), nil
	}
	readOnly := inv.ReadOnly
	if sc.flags&FlagEvalCompat == 0 {
		if sc.flags&FlagNoWrites == 0 && inv.ReadOnly {
			return ErrROWithWriteFlag.Reply(), nil
		}
		readOnly = readOnly || sc.flags&FlagNoWrites != 0
	}
	if err := e.acquire(ctx); err != nil {
		if err == ErrBusy {
			return e.BusyError().Reply(), nil
		}
		return nil, err
	}
	defer func() { <-e.slot }()
	e.mu.Lock()
	if e.st == nil || e.reset {
		e.st, e.reset = newState(&e.opts), false
	}
	st := e.st
	e.mu.Unlock()
	fn := st.L.NewFunctionFromProto(sc.proto)
	fn.Env = st.env
	st.globals.RawSetString("KEYS", stringArray(st.L, keys))
	st.globals.RawSetString("ARGV", stringArray(st.L, argv))
	return e.run(target{st: st, fn: fn, name: sc.sha}, keys, argv, readOnly, protoOf(inv.Proto), inv.Caller)
}

func protoOf(p int) int {
	if p != 3 {
		return 2
	}
	return p
}

// BusyError is the reply to a command refused while the engine is busy:
// Redis names SCRIPT KILL or FUNCTION KILL by what runs.
func (e *Engine) BusyError() Error {
	if e.busyFunction.Load() {
		return ErrBusyFunction
	}
	return ErrBusy
}

// target is what run runs: a script's function, called with no
// arguments after KEYS and ARGV are set as globals, or a library's
// function, called with KEYS and ARGV as its arguments.
type target struct {
	st       *state
	fn       *lua.LFunction
	name     string // the script's SHA1 or the function's name, for errors
	function bool
	command  [][]byte
	// allocated, if set, is where run stores how many bytes the process
	// allocated while t ran (watchMemory).
	allocated *uint64
}

// acquire takes the slot, waiting for the running script unless it is
// busy.
func (e *Engine) acquire(ctx context.Context) error {
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return ErrClosed
		}
		if e.cur != nil && e.cur.busy {
			e.mu.Unlock()
			return ErrBusy
		}
		changed := e.changed
		e.mu.Unlock()
		select {
		case e.slot <- struct{}{}:
			return nil
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run runs t while holding the slot.
func (e *Engine) run(t target, keys, argv [][]byte, readOnly bool, proto int, caller Caller) ([]byte, error) {
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &run{sha: t.name, function: t.function, command: t.command, start: time.Now(), cancel: cancel}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, ErrClosed
	}
	e.cur = r
	e.signal()
	e.mu.Unlock()
	if d := e.BusyThreshold(); d > 0 {
		timer := time.AfterFunc(d, func() { e.markBusy(r) })
		defer timer.Stop()
	}
	defer e.watchMemory(2, func() {
		e.mu.Lock()
		if e.cur == r && !r.killed {
			r.oom = true
			r.cancel()
		}
		e.mu.Unlock()
	}, t.allocated)()

	st := t.st
	L := st.L
	st.run = &runState{caller: caller, resp: 2, readOnly: readOnly,
		callStart: func() {
			e.mu.Lock()
			r.inCall = make(chan struct{})
			e.mu.Unlock()
		},
		callEnd: func(wrote bool) {
			e.mu.Lock()
			close(r.inCall)
			r.inCall = nil
			r.wrote = r.wrote || wrote
			e.mu.Unlock()
		},
	}
	L.SetContext(runCtx)
	L.Push(t.fn)
	nargs := 0
	if t.function {
		L.Push(stringArray(L, keys))
		L.Push(stringArray(L, argv))
		nargs = 2
	}
	err := L.PCall(nargs, 1, st.handler)
	L.RemoveContext()
	var reply []byte
	counted := false
	if err == nil {
		reply = AppendLua(nil, L.Get(-1), proto, st.run.resp)
		counted = commandError(L.Get(-1))
	}
	L.SetTop(0)
	st.run = nil

	e.mu.Lock()
	killed, oom := r.killed, r.oom
	if oom && !t.function {
		// The interpreter may hold on to what the script built (its stack,
		// tables reachable from its registry): the next script gets a new
		// one. The functions' interpreter holds their libraries, and
		// stays.
		e.reset = true
	}
	e.cur = nil
	e.busy.Store(false)
	e.busyFunction.Store(false)
	e.signal()
	e.mu.Unlock()
	if err != nil {
		var obj lua.LValue = lua.LString(err.Error())
		if ae, ok := err.(*lua.ApiError); ok {
			obj = ae.Object
		}
		var as Error
		switch {
		case killed:
			as = ErrKilled
		case oom:
			as = ErrOutOfMemory
			e.log(LogWarning, "Lua script stopped: the heap passed the memory limit. Script name is: %s.", t.name)
			// Give what the script built back to the system now rather
			// than at the scavenger's pace, before the next script
			// measures the heap it starts from.
			debug.FreeOSMemory()
		}
		reply = scriptError(obj, t.name, as)
		counted = as == "" && commandError(obj)
	}
	if ec, ok := caller.(ErrorCounter); ok && counted {
		ec.ReplyCounted()
	}
	return reply, nil
}

// commandError reports whether v is the error table of a command's error
// reply (replyToLua), which the command counted.
func commandError(v lua.LValue) bool {
	t, ok := v.(*lua.LTable)
	return ok && t.RawGetString("ignore_error_stats_update") == lua.LTrue && t.RawGetString("err") != lua.LNil
}

// memCheckEvery is how often a running script's memory is checked: one
// read of two runtime metrics, so the check costs nothing a script would
// notice, and a script allocating as fast as the interpreter can
// (hundreds of MB a second) passes the limit by a few MB at most.
const memCheckEvery = 5 * time.Millisecond

// watchMemory calls exceeded, which stops the running script as SCRIPT
// KILL does but whether or not it wrote (or a library's top level), once
// the live heap has grown by 1/share of what the memory limit left when
// the watch started; it returns the function that ends the watch, which
// waits for its goroutine. A script gets half (share 2), because what a
// script grows (a table's array, a string built up) grows by doubling:
// while the new copy is filled, the old one is live too, so a script
// stopped at half the room peaks within it. A library's top level gets a
// quarter (loadShare): what it builds is not garbage when it ends but
// stays, beside the keys until the next writes evict for it, and the walk
// that measures it takes room too. Stopping a script that wrote breaks
// its atomicity, but a server killed for memory loses every key: the
// bound comes first.
//
// With allocated set, stop also stores there how many bytes the process
// allocated meanwhile, read with the same metrics as the watch reads
// (FCall's count of a growing function's calls).
func (e *Engine) watchMemory(share int64, exceeded func(), allocated *uint64) (stop func()) {
	limit := e.memoryLimit()
	if limit <= 0 || limit == math.MaxInt64 {
		if allocated == nil {
			return func() {}
		}
		before := allocatedBytes()
		return func() { *allocated = allocatedBytes() - before }
	}
	// Live bytes as of the last collection: garbage does not count, and
	// the limit makes collections frequent near it. The allocations in
	// the same read cost nothing more.
	samples := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	live := func() int64 {
		rtmetrics.Read(samples)
		return int64(samples[0].Value.Uint64())
	}
	base := live()
	allocs := samples[1].Value.Uint64()
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(memCheckEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			// A script gets some room even when the heap is near the limit
			// already: the live count may still hold garbage of the last
			// script the limit stopped.
			if live() <= base+max(limit-base, limit/8)/share {
				limit = e.memoryLimit() // the bound may change meanwhile
				continue
			}
			exceeded()
			return
		}
	}()
	return func() {
		close(done)
		<-exited
		if allocated != nil {
			rtmetrics.Read(samples[1:])
			*allocated = samples[1].Value.Uint64() - allocs
		}
	}
}

// allocatedBytes is how many bytes the process has allocated on Go's heap
// since it started.
func allocatedBytes() uint64 {
	s := [1]rtmetrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	rtmetrics.Read(s[:])
	return s[0].Value.Uint64()
}

// memoryLimit is Options.MemoryLimit's value now.
func (e *Engine) memoryLimit() int64 {
	if e.opts.MemoryLimit != nil {
		return e.opts.MemoryLimit()
	}
	return debug.SetMemoryLimit(-1)
}

func (e *Engine) markBusy(r *run) {
	e.mu.Lock()
	if e.cur != r || r.busy {
		e.mu.Unlock()
		return
	}
	r.busy = true
	e.busyFunction.Store(r.function)
	e.busy.Store(true)
	e.signal()
	e.log(LogWarning, "Slow script detected: still in execution after %d milliseconds. "+
		"You can try killing the script using the SCRIPT KILL command. Script name is: %s.",
		time.Since(r.start).Milliseconds(), r.sha)
	e.mu.Unlock()
	if e.opts.OnBusy != nil {
		e.opts.OnBusy()
	}
}

func stringArray(L *lua.LState, items [][]byte) *lua.LTable {
	t := L.CreateTable(len(items), 0)
	for i, it := range items {
		t.RawSetInt(i+1, lua.LString(it))
	}
	return t
}

// scriptError formats a script's uncaught error as luaCallFunction does:
// the error's text, then the script and the line the error handler found.
// With as set (a script SCRIPT KILL or the memory limit stopped), the
// error is as whatever the script raised. An
// error that is not a table is one the handler could not handle: Redis
// reports "Error running script" then, but the handler only fails here
// when the call stack is full, and Redis reports that overflow as any
// other error.
func scriptError(obj lua.LValue, sha string, as Error) []byte {
	var msg, source, line string
	var where bool
	if t, ok := obj.(*lua.LTable); ok {
		msg, _ = luaString(t.RawGetString("err"))
		var sok, lok bool
		source, sok = luaString(t.RawGetString("source"))
		line, lok = luaString(t.RawGetString("line"))
		where = sok && lok
	} else {
		s, ok := luaString(obj)
		if !ok {
			s = "execution failure"
		}
		msg = "ERR " + luaErrorText(s)
	}
	if as != "" {
		msg = string(as)
	}
	return scriptReply(msg, source, line, sha, where)
}

// scriptReply is the error reply msg of the script sha, with where it was
// (source and line) if known.
func scriptReply(msg, source, line, sha string, where bool) []byte {
	if where {
		msg += fmt.Sprintf(" script: %s, on %s:%s.", sha, source, line)
	}
	// Redis writes the text as it is; a newline in it would break the
	// protocol, so it becomes a space (Writer.Error) as in Redis's other
	// error replies.
	w := resp.Buffer(nil, 2)
	w.Error(msg)
	return w.Buffered()
}
