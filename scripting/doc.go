// Package scripting runs Redis 7 Lua scripts (EVAL, EVALSHA, EVAL_RO,
// EVALSHA_RO, SCRIPT) and Redis 7.0 functions (FUNCTION, FCALL,
// FCALL_RO) on gopher-lua, a Lua 5.1 interpreter in Go. It
// knows RESP, not the server: a script's redis.call and redis.pcall go
// to a Caller the server provides, which answers each with the command's
// RESP reply; the package converts replies to Lua values and the
// script's result back to a RESP reply for the client, as Redis 7.2
// does.
//
// # Using it
//
// A server makes one Engine and hands it the commands:
//
//	eng := scripting.New(scripting.Options{Log: logf})
//	// EVAL script numkeys key... arg...
//	reply, err := eng.Eval(ctx, scripting.Invocation{
//		Args: argv[1:], SHA: isEvalSHA, ReadOnly: isRO, Proto: clientProto, Caller: caller})
//	// SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP|DEBUG
//	reply = eng.Script(argv[1:])
//	// before every other command, as Redis does while a script runs long
//	if eng.Busy() { reply = scripting.ErrBusy.Reply() }
//
// The replies include Redis's error replies; err is only ctx's or
// ErrClosed, when no script ran. The Caller runs each command after the
// checks Redis makes for scripts (see Caller for the texts: unknown
// command, arity, commands scripts may not call, writes from read-only
// scripts) and reports whether it wrote.
//
// # Semantics
//
// Conversions, error texts and formats are Redis 7.2's: a command's
// error raised by redis.call reads "ERR ... script: <sha>, on
// @user_script:<line>."; redis.pcall returns errors as {err=...}
// tables; pcall returns their text. Number arguments to redis.call are
// printed as integers when they are, else shortest (fpconv). RESP3
// (redis.setresp(3)) maps, sets, doubles, big numbers, verbatim strings,
// booleans and null convert both ways; a RESP2 client gets their RESP2
// forms.
//
// The globals are Redis's: the base library without os, io, require,
// loadfile, dofile, print, module; string, table, math, coroutine, cjson,
// cmsgpack, struct, bit and redis. Every table reachable from _G is read-only ("Attempt to
// modify a readonly table") and reading an unknown global is an error
// ("Script attempted to access nonexistent global variable"). The
// sandbox follows Redis's hardened one (the 2025 security releases,
// which the distributions' 7.0 and 7.2 packages carry too): no getfenv,
// setfenv or newproxy, and the string metatable is locked.
// KEYS and ARGV are set for each script. math.random is Redis's lrand48,
// one sequence shared by all scripts until math.randomseed.
//
// Scripts run one at a time in one interpreter, as in Redis. A script
// that runs past Options.BusyThreshold makes the Engine busy: the server
// answers BUSY, Eval answers BUSY to other scripts, and Kill (SCRIPT
// KILL) stops it unless it has written (UNKILLABLE). Killing cancels the
// interpreter's context; a script cannot catch that with pcall. Close
// stops a script whatever it did, for SHUTDOWN NOSAVE.
//
// Functions: FunctionLoad runs a library's top level ("#!lua
// name=<lib>") in an interpreter of its own, with Redis's load-time
// globals (redis.register_function, redis.log, the version); FCall runs
// one of the functions it registered as Eval runs a script, with KEYS and
// ARGV as its arguments; Function answers the FUNCTION subcommands, and
// FUNCTION DUMP's payload is Redis 7.0's (see dump.go). Libraries are
// never evicted; they are bounded by Options.MaxBytes on their own, by
// what they really hold: after a library's top level runs, everything
// reachable from the functions it registered (closures, upvalues,
// prototypes, tables, strings) is walked and sized as Go's allocator
// holds it (memsize.go), the interpreter's own objects excepted, and a
// load that would take the libraries past the bound is refused
// (ErrLibrariesFull), as is a FUNCTION RESTORE whose libraries together
// would, all or none. The top level runs under the memory watch a
// script runs under, and one that builds more than the memory limit
// leaves room for is stopped (ErrOutOfMemory). A function's calls can
// grow its library only through its upvalues: the calls of a function
// with upvalues count the bytes the process allocates meanwhile, and the
// libraries called since are walked again once those, over all of them,
// pass an eighth of what the libraries hold (at least 1 MiB), so the
// charge stays true without a walk per call. While
// the libraries hold more than the bound, functions with upvalues are
// refused (ErrLibrariesOOM) and the others run. Options.OnLibraryBytes
// hears each change, for a server to count the libraries against its
// memory bound, as Redis counts the functions' Lua VM in used_memory;
// LibraryMemory splits the total as INFO's used_memory_vm_functions and
// used_memory_functions.
// KillFunction is FUNCTION KILL; Kill and KillFunction each refuse to
// stop the other kind, and BusyError names the kill that applies.
//
// The script cache maps SHA1 digests to compiled functions. Redis keeps
// scripts until SCRIPT FLUSH; this cache is bounded by count and by an
// estimate of bytes (Options.MaxScripts, MaxBytes) and evicts the least
// recently used, so a client may meet NOSCRIPT for a script it loaded
// long ago and send EVAL, as clients do. Len, Bytes and Evicted are for
// metrics.
//
// # Where gopher-lua differs from Redis's Lua
//
//   - Runtime error texts are reworded to Lua 5.1's where gopher-lua's
//     differ ("attempt to perform arithmetic on a nil value"). Lua's
//     variable names ("local 'x'") are known only for a failed call that
//     reaches the error handler: what it called, and its type, are read
//     from the raising function's bytecode and registers ("attempt to
//     call field 'x' (a nil value)"), when the calls on its line that
//     could have failed read alike, since gopher-lua keeps no program
//     counter where it can be read. Compile errors say "unexpected
//     symbol near ..." where Lua may name what it expected.
//   - Numbers converted to strings by the interpreter itself (the ..
//     operator, string.format's %s) print as Go prints them
//     ("1e+15" is "1000000000000000"); tostring, redis.call, redis.log
//     and cjson print as Lua and Redis do. Strings that look like octal
//     or binary numbers ("010") convert differently in arithmetic.
//   - # of a table with holes counts up to its last element.
//   - A stack overflow is reported without its line.
//   - Calling a value that is not a function is reported as calling a
//     nil value, whatever its type, when the call's name is not known
//     (above) or the error is caught by pcall.
//   - string.dump makes only a binary chunk's header, without the
//     bytecode, and loadstring refuses binary chunks as Redis does.
//   - cmsgpack packs a map's keys, and cjson encodes them, in
//     gopher-lua's iteration order, which is not Lua's: tables with more
//     than one key that is not 1..n may pack to other bytes (the same
//     keys and values).
//   - A script, a function's call or a library's top level that grows
//     the heap past what the memory limit leaves (Options.MemoryLimit) is
//     stopped with ErrOutOfMemory, where Redis lets its Lua grow past
//     maxmemory; string.rep refuses to build more than 512 MiB
//     ("resulting string too large"). There is no Lua debugger (SCRIPT
//     DEBUG YES answers an error).
package scripting
