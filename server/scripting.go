package server

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/scripting"
)

// Scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT, on the
// scripting package's engine. A script runs holding the store's atomic
// section exclusively, taken at the gate (gate.go) as EXEC takes it, so
// no other command interleaves with it; its redis.call runs the command's
// handler directly, on a connection of the script's own (scriptCaller).
// Past the busy threshold the engine turns busy: dispatch answers BUSY
// to every command but the few Redis allows, the commands waiting at the
// gate are woken to answer BUSY too, and SCRIPT KILL, which needs no
// section, stops the script. A script runs in its connection's
// continuation, off its event loop, so the loop goes on answering the
// others.

// Defaults of the scripting options: busy-reply-threshold's is Redis's.
const (
	DefaultLuaTimeLimit = 5 * time.Second
	DefaultMaxScripts   = 10000
)

// aclContextLua is ACL LOG's context of a command a script ran.
const aclContextLua = "lua"

// scriptState is the server's scripting engine and its counters.
type scriptState struct {
	eng                    *scripting.Engine
	ran, busyReplies, kill prometheus.Counter
	// thresholdMillis is busy-reply-threshold as CONFIG SET gave it.
	thresholdMillis atomic.Int64
}

// setThreshold sets busy-reply-threshold, in milliseconds; 0: never.
func (st *scriptState) setThreshold(ms int64) {
	st.thresholdMillis.Store(ms)
	d := time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
	if ms == 0 {
		d = -1
	}
	st.eng.SetBusyThreshold(d)
}

// initScripting makes the engine from opts and registers its metrics.
func (s *Server) initScripting(opts Options) {
	s.scripts.eng = scripting.New(scripting.Options{
		MaxScripts: opts.MaxScripts,
		MaxBytes:   opts.MaxScriptBytes,
		Log:        s.scriptLog,
		Version:    RedisVersion,
		OnBusy:     func() { s.gate.wake() },
		// What the function libraries hold counts against --max-memory,
		// as Redis counts the functions' Lua VM in used_memory: keys are
		// evicted to make room for a library, and under noeviction writes
		// are refused while it takes the room.
		OnLibraryBytes: s.store.Charge,
	})
	threshold := opts.LuaTimeLimit
	switch {
	case threshold == 0:
		threshold = DefaultLuaTimeLimit
	case threshold < 0:
		threshold = 0
	}
	s.scripts.setThreshold(threshold.Milliseconds())
	m := s.metrics
	s.scripts.ran = m.Scripts.WithLabelValues("run")
	s.scripts.busyReplies = m.Scripts.WithLabelValues("busy_reply")
	s.scripts.kill = m.Scripts.WithLabelValues("killed")
	eng := s.scripts.eng
	m.Gauge("scripts_cached", "Scripts in the script cache (EVAL, SCRIPT LOAD), bounded by --max-scripts.", func() float64 {
		return float64(eng.Len())
	})
	m.Gauge("scripts_cached_bytes", "Estimated size of the cached scripts, bounded by --max-scripts-memory.", func() float64 {
		return float64(eng.Bytes())
	})
	m.Gauge("function_libraries", "Function libraries loaded (FUNCTION LOAD, RESTORE).", func() float64 {
		return float64(eng.Libraries())
	})
	m.Gauge("function_libraries_bytes", "What the function libraries hold, measured from their Lua objects and their entries (INFO used_memory_vm_functions plus used_memory_functions); bounded by --max-scripts-memory on its own, and counted against --max-memory.", func() float64 {
		return float64(eng.LibraryBytes())
	})
	m.Counter("scripts_evicted_total", "Scripts the script cache's bounds evicted; their clients meet NOSCRIPT and send EVAL.", func() float64 {
		return float64(eng.Evicted())
	})
}

// scriptLog passes the engine's messages (redis.log, slow and killed
// scripts) to the server's log at the matching level.
func (s *Server) scriptLog(level scripting.LogLevel, msg string) {
	l := slog.LevelInfo
	switch level {
	case scripting.LogDebug, scripting.LogVerbose:
		l = slog.LevelDebug
	case scripting.LogWarning:
		l = slog.LevelWarn
	}
	s.log.Log(context.Background(), l, msg, "source", "script")
}

// replyBusy answers BUSY to a command refused while a script is busy; in
// MULTI it fails the transaction, and EXEC ends it, as in Redis.
func (s *Server) replyBusy(c *Conn, cmd *command) {
	s.scripts.busyReplies.Inc()
	c.refuse(cmd, string(s.scripts.eng.BusyError()))
}

func cmdEval(c *Conn, args [][]byte)      { c.srv.eval(c, args, false, false) }
func cmdEvalSHA(c *Conn, args [][]byte)   { c.srv.eval(c, args, true, false) }
func cmdEvalRO(c *Conn, args [][]byte)    { c.srv.eval(c, args, false, true) }
func cmdEvalSHARO(c *Conn, args [][]byte) { c.srv.eval(c, args, true, true) }
func cmdFCall(c *Conn, args [][]byte)     { c.srv.fcall(c, args, false) }
func cmdFCallRO(c *Conn, args [][]byte)   { c.srv.fcall(c, args, true) }

// eval runs an EVAL, EVALSHA, EVAL_RO or EVALSHA_RO (runScript).
func (s *Server) eval(c *Conn, args [][]byte, sha, readOnly bool) {
	s.inSection(c, args, func(args [][]byte) { s.runScript(c, args, sha, readOnly) })
}

// fcall runs an FCALL or FCALL_RO exactly as eval runs a script: the
// same section, busy and kill machinery, caller and deferred writes.
func (s *Server) fcall(c *Conn, args [][]byte, readOnly bool) {
	s.inSection(c, args, func(args [][]byte) { s.runFunction(c, args, readOnly) })
}

// inSection runs a script or function (run) holding the section
// exclusively. Inside EXEC the section is held already and it runs at
// once. Otherwise it takes the section exclusively, waiting for its
// holder; it does both in the connection's continuation, off its event
// loop, so that a long script does not stop the loop.
func (s *Server) inSection(c *Conn, args [][]byte, run func(args [][]byte)) {
	if c.tx.inSection {
		run(args)
		return
	}
	// With --redis, dispatch has faulted the declared KEYS in already
	// (runShared), as it does for any Redis command's keys.
	c.whereItMayWaitWith(args, func(args [][]byte) {
		ctx := context.Background()
		if !s.gate.lock() {
			s.replyBusy(c, c.lastCommand.Load())
			return
		}
		if s.heldAfterAll(c, c.lastCommand.Load(), args, s.gate.unlock) {
			return
		}
		func() {
			defer s.gate.unlock() // even if the script's command panics
			defer s.tracking.BatchFor(c.tracker())()
			run(args)
		}()
		s.shareDeferred(ctx, c)
	})
}

// runScript runs a script holding the section and writes its reply.
func (s *Server) runScript(c *Conn, args [][]byte, sha, readOnly bool) {
	s.scripts.ran.Inc()
	// Before the script's calls, as Redis's evalCommand feeds itself.
	s.feedMonitors(c, nil, args)
	if flags, known := s.scripts.eng.ScriptFlags(args[1], sha); s.scriptOOM(c, flags, known) {
		return
	}
	defer s.store.AllowOOM(false)
	defer s.store.HoldClock()()
	caller := newScriptCaller(c, evalKeys(args))
	reply, err := s.scripts.eng.Eval(context.Background(), scripting.Invocation{
		Args: args[1:], SHA: sha, ReadOnly: readOnly, Proto: c.w.Protocol(), Caller: caller,
	})
	s.finishScript(c, caller, reply, err)
}

// runFunction runs a function holding the section and writes its reply.
func (s *Server) runFunction(c *Conn, args [][]byte, readOnly bool) {
	s.scripts.ran.Inc()
	// Before the function's calls, as Redis's fcallCommandGeneric feeds
	// itself.
	s.feedMonitors(c, nil, args)
	if flags, known := s.scripts.eng.FunctionFlags(args[1]); s.scriptOOM(c, flags, known) {
		return
	}
	defer s.store.AllowOOM(false)
	defer s.store.HoldClock()()
	caller := newScriptCaller(c, evalKeys(args))
	reply, err := s.scripts.eng.FCall(context.Background(), scripting.FCallInvocation{
		Args: args[1:], ReadOnly: readOnly, Proto: c.w.Protocol(), Caller: caller, Command: args,
	})
	s.finishScript(c, caller, reply, err)
}

// scriptOOM applies a script's or function's declared flags to memory as
// Redis's scriptPrepareForRun does: one that declares neither no-writes
// nor allow-oom is refused with -OOM while the store is over its bound
// (true: the reply is written); one that declares allow-oom has its
// writes go past the bound (engine.Store.AllowOOM, until the caller's
// deferred reset). A script without a shebang has its writes refused one
// by one, as Redis refuses its deny-oom commands.
func (s *Server) scriptOOM(c *Conn, flags scripting.Flags, known bool) bool {
	if !known || flags&scripting.FlagEvalCompat != 0 || flags&scripting.FlagNoWrites != 0 {
		return false
	}
	if flags&scripting.FlagAllowOOM != 0 {
		s.store.AllowOOM(true)
		return false
	}
	if errors.Is(s.store.Admit(), engine.ErrOOM) {
		c.w.Error(commands.ErrOOM)
		c.refused = true // as Redis refuses it before it runs
		return true
	}
	return false
}

// finishScript writes a script's or function's reply and keeps what it
// left for after the section.
func (s *Server) finishScript(c *Conn, caller *scriptCaller, reply []byte, err error) {
	if err != nil { // the engine is closed: no script ran
		reply = scripting.ErrClosed.Reply()
	}
	c.w.Raw(reply)
	if !c.tx.inSection {
		// The script's pushes wake blocked clients now that it has
		// ended; inside EXEC, once EXEC has.
		s.serveBlocked(c)
	}
	c.scriptWrites = append(c.scriptWrites, caller.written...)
	c.broadcasts = append(c.broadcasts, caller.c.broadcasts...)
	c.afterSection = append(c.afterSection, caller.c.afterSection...)
}

// shareDeferred tells the shared tier (--redis), once the section is
// left, what EXEC or a script left for it: every key a script's write
// commands named, whether or not the script declared it in KEYS, and the
// messages published meanwhile, in the order they were published; then
// it runs the fleet I/O its read-through commands left (afterSection).
func (s *Server) shareDeferred(ctx context.Context, c *Conn) {
	writes, broadcasts, after := c.scriptWrites, c.broadcasts, c.afterSection
	c.scriptWrites, c.broadcasts, c.afterSection = nil, nil, nil
	if s.opts.Shared != nil {
		for _, w := range writes {
			s.wrote(ctx, w.db, w.cmd, w.args)
		}
		for _, b := range broadcasts {
			b.send(ctx, s.opts.Shared)
		}
	}
	for _, fn := range after {
		fn()
	}
}

// evalKeys are the KEYS of an EVAL's arguments (args[0] is the command's
// name), nil when numkeys is bad: the command then fails.
func evalKeys(args [][]byte) [][]byte {
	if len(args) < 3 {
		return nil
	}
	keys, _, err := scripting.SplitKeys(args[2:])
	if err != nil {
		return nil
	}
	return keys
}

// cmdScript answers the SCRIPT subcommands; the engine checks them again.
func cmdScript(c *Conn, args [][]byte) {
	reply := c.srv.scripts.eng.Script(args[1:])
	if resp.EqualFold(args[1], "kill") && string(reply) == "+OK\r\n" {
		c.srv.scripts.kill.Inc()
	}
	c.w.Raw(reply)
}

// cmdFunction answers the FUNCTION subcommands. LOAD and RESTORE run a
// library's top level in the engine's interpreter, which waits for a
// running script: they run where the connection may wait; inside EXEC no
// script can be running.
func cmdFunction(c *Conn, args [][]byte) {
	s := c.srv
	answer := func(args [][]byte) {
		reply, err := s.scripts.eng.Function(context.Background(), args[1:], c.w.Protocol())
		if err != nil {
			reply = scripting.ErrClosed.Reply()
		}
		if resp.EqualFold(args[1], "kill") && string(reply) == "+OK\r\n" {
			s.scripts.kill.Inc()
		}
		c.w.Raw(reply)
	}
	if c.tx.inSection || !(resp.EqualFold(args[1], "load") || resp.EqualFold(args[1], "restore")) {
		answer(args)
		return
	}
	c.whereItMayWaitWith(args, func(args [][]byte) {
		// LOAD and RESTORE are deny-oom in Redis: refused while used
		// memory is over maxmemory and nothing can be evicted.
		if !s.admits(c) {
			c.w.Error(commands.ErrOOM)
			return
		}
		answer(args)
	})
}

// admits reports whether the store is within its bound, after evicting
// what its policy lets it, as Redis checks a deny-oom command before it
// runs; the section is entered for the eviction, where it may wait.
func (s *Server) admits(c *Conn) bool {
	hint := uint64(c.id)
	s.gate.rlock(hint, true)
	defer s.gate.sec.RUnlock(hint)
	return !errors.Is(s.store.Admit(), engine.ErrOOM)
}

// scriptWrite is a write command a script ran, for the shared tier.
type scriptWrite struct {
	db   int // the database it ran in
	cmd  *command
	args [][]byte
}

// scriptCaller runs a script's redis.call and redis.pcall, as Redis's Lua
// client does: on a connection of the script's own, as the user of the
// client that runs the script, each reply collected by the connection's
// writer in the script's protocol (redis.setresp). The script holds the
// section exclusively, so the handlers run directly.
type scriptCaller struct {
	srv *Server
	// client runs the script; c is the script's own connection.
	client, c *Conn
	// written are the writes that succeeded, for the shared tier.
	written []scriptWrite
	// declared are the script's KEYS, remembered for client's tracking
	// with its first read (beforeScriptCall); nil once it read.
	declared [][]byte
	// dirty: a write command passed the checks, as Redis's
	// SCRIPT_WRITE_DIRTY; from then on the script's deny-oom commands are
	// no longer refused before they run.
	dirty bool
}

func newScriptCaller(client *Conn, declared [][]byte) *scriptCaller {
	s := client.srv
	c := &Conn{srv: s, w: &resp.Writer{}, id: client.id, created: client.created,
		remote: client.remote, local: client.local, authed: true, lua: true}
	// The script starts in its caller's database; its SELECT is its own,
	// as in Redis 7.
	c.db.Store(client.db.Load())
	c.x = s.ctxFor(c)
	c.user.Store(client.user.Load())
	c.noTouch.Store(client.noTouch.Load())
	c.multiLen.Store(-1)
	c.tx.inSection = true // nothing may wait or enter the section
	return &scriptCaller{srv: s, client: client, c: c, declared: declared}
}

// lookup finds the command a script calls as Redis's lookupCommand does:
// a container's subcommand when there is an argument, nil when either is
// unknown.
func (sc *scriptCaller) lookup(args [][]byte) *command {
	cmd := sc.srv.lookup(sc.c, args[0])
	if cmd != nil && len(cmd.subcommands) > 0 && len(args) > 1 {
		cmd = cmd.subcommand(args[1])
	}
	return cmd
}

// check returns the error a script's call of cmd is refused with before it
// runs, or "".
func (sc *scriptCaller) check(cmd *command, call scripting.Command) scripting.Error {
	switch {
	case cmd == nil:
		return scripting.ErrUnknownCommand
	case !cmd.arityOK(len(call.Args)):
		return scripting.ErrWrongArity
	case cmd.Flags&commands.NoScript != 0 && !sc.srv.denyScriptsOff.Load():
		return scripting.ErrNotAllowed
	}
	u := sc.c.user.Load()
	if p := u.Perms(); !p.Unrestricted() {
		if reason, object, ok := checkPerms(p, cmd, call.Args); !ok {
			sc.client.logDenialIn(aclContextLua, reason, string(object), u.Name())
			return scripting.Error("ERR ACL failure in script: " + scriptACLMessage(reason, u.Name(), cmd))
		}
	}
	if call.ReadOnly && cmd.Flags&(commands.Write|commands.MayReplicate) != 0 {
		return scripting.ErrWriteReadOnly
	}
	if cmd.Flags&commands.Write != 0 && sc.srv.replicaMinimum.on() {
		return errNoReplicas
	}
	if cmd.Flags&commands.DenyOOM != 0 && !sc.dirty && errors.Is(sc.srv.store.Admit(), engine.ErrOOM) {
		// Redis's scriptVerifyOOM: once the script has written, it is
		// not stopped half way.
		return commands.ErrOOM
	}
	return ""
}

// refuse answers a call check refused: counted as cmd's refusal (nil: an
// unknown command, counted nowhere but in errorstats, as in Redis).
func (sc *scriptCaller) refuse(cmd *command, refusal scripting.Error) []byte {
	reply := refusal.Reply()
	if cmd != nil {
		cmd.counters.rejected.Inc()
	}
	sc.srv.errors.count(reply)
	return reply
}

// ReplyCounted is the engine's word that the script's reply is an error
// one of its commands replied and counted (scripting.ErrorCounter): the
// client's reply is not counted again.
func (sc *scriptCaller) ReplyCounted() { sc.client.errorCounted = true }

// Call runs one command for the script after Redis's checks, in Redis's
// order: the command exists, its arity, scripts may call it, the user may
// run it, a read-only script does not write, nor one while
// min-replicas-to-write refuses writes, a script that has not
// written yet does not run a deny-oom command while the store is full.
// A command refused so is counted as refused (rejected_calls), and its
// error in errorstats; so is the error reply of one that ran.
func (sc *scriptCaller) Call(call scripting.Command) ([]byte, bool) {
	args := call.Args
	cmd := sc.lookup(args)
	if refusal := sc.check(cmd, call); refusal != "" {
		return sc.refuse(cmd, refusal), false
	}
	if cmd.Flags&commands.Write != 0 {
		sc.dirty = true
	}
	sc.srv.commandsTotal.Add(1) // Redis counts a script's commands as processed
	c := sc.c
	c.w.Swap(nil) // the reply is the engine's to keep
	c.w.SetProtocol(call.Proto)
	timer := sc.srv.startCall()
	sc.handle(cmd, args)
	usec := sc.srv.observed(c, cmd, args, timer)
	if c.next.run != nil {
		// A command that must wait: none may, and those that could are
		// refused from scripts (noscript). Never left half done.
		c.next.run = nil
		c.w.Swap(nil)
		c.w.Error("ERR this command cannot run inside a script")
	}
	countReply(cmd, c, 0, usec)
	wrote := cmd.Flags&commands.Write != 0
	if wrote && !c.w.IsErrorAt(0) && cmd.shared() {
		sc.written = append(sc.written, scriptWrite{db: int(c.db.Load()), cmd: cmd, args: args})
	}
	return c.w.Buffered(), wrote
}

// handle runs cmd's handler on the script's connection. For
// client-side caching the command is the calling client's, as in Redis:
// its reads are tracked for the client, and with NOLOOP its writes are
// the client's own.
func (sc *scriptCaller) handle(cmd *command, args [][]byte) {
	if sc.srv.refusedShared(sc.c, cmd) {
		return
	}
	if sc.srv.tracking.Concerns(&sc.client.track) {
		declared := sc.declared
		if cmd.tracksReads() {
			sc.declared = nil
		}
		defer sc.srv.beforeScriptCall(sc.client, cmd, args, declared)()
	}
	cmd.Handler(&sc.c.x, args)
}

// CheckCommand answers redis.acl_check_cmd: whether the command exists and
// the script's user may run it with these arguments.
func (sc *scriptCaller) CheckCommand(args [][]byte) (known, allowed bool) {
	cmd := sc.lookup(args)
	if cmd == nil {
		return false, false
	}
	p := sc.c.user.Load().Perms()
	if p.Unrestricted() {
		return true, true
	}
	_, _, ok := checkPerms(p, cmd, args)
	return true, ok
}

// scriptACLMessage is Redis 7.2's text for a denial inside a script
// (getAclErrorMessage, not verbose).
func scriptACLMessage(reason acl.Reason, user string, cmd *command) string {
	switch reason {
	case acl.DeniedKey:
		return "No permissions to access a key"
	case acl.DeniedChannel:
		return "No permissions to access a channel"
	}
	return "User " + user + " has no permissions to run the '" + cmd.Name + "' command"
}

// infoScripts writes INFO memory's script and function fields, Redis
// 7.0's, as it means them: used_memory_vm_functions is what the
// libraries' Lua objects hold (Redis: the functions' Lua VM; here without
// the interpreter's own objects, which no library holds),
// used_memory_functions the libraries' entries outside it (code, names,
// descriptions: Redis's functions overhead), and used_memory_scripts the
// script cache and that overhead, not the VM, as Redis adds its
// lua_caches and functions_caches.
func (s *Server) infoScripts(b *infoBuilder) {
	eng := s.scripts.eng
	bytes := eng.Bytes()
	vm, overhead := eng.LibraryMemory()
	b.field("number_of_cached_scripts", eng.Len())
	b.field("used_memory_scripts_eval", bytes)
	b.field("number_of_functions", eng.Functions())
	b.field("used_memory_vm_functions", vm)
	b.field("used_memory_functions", overhead)
	b.field("used_memory_scripts", bytes+overhead)
	b.field("used_memory_scripts_human", memsize.Human(bytes+overhead))
}
