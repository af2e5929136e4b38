package scripting

import (
	"bytes"

	"github.com/stampedeless/stampedeless/internal/redisnum"
	"github.com/stampedeless/stampedeless/resp"
)

// Error is an error reply's text as Redis 7 writes it, its code first
// ("ERR", "BUSY", "NOSCRIPT", ...), without the leading '-' and the
// trailing CRLF. The package's sentinel errors are Error constants, so
// errors.Is works on them and Reply gives the bytes a server writes.
type Error string

func (e Error) Error() string { return string(e) }

// Reply is e as a RESP error reply.
func (e Error) Reply() []byte {
	w := resp.Buffer(nil, 2)
	w.Error(string(e))
	return w.Buffered()
}

// The texts Redis 7.2 answers with on the scripting paths. A Caller
// answers a script's command with the first four when Redis would refuse
// it before running it (see Caller).
const (
	// ErrUnknownCommand is the reply to a script calling a command the
	// server does not have.
	ErrUnknownCommand Error = "ERR Unknown Redis command called from script"
	// ErrWrongArity is the reply to a script calling a command with the
	// wrong number of arguments.
	ErrWrongArity Error = "ERR Wrong number of args calling Redis command from script"
	// ErrNotAllowed is the reply to a script calling a command scripts may
	// not call (the noscript commands: EVAL, MULTI, SUBSCRIBE, blocking
	// forms, ...).
	ErrNotAllowed Error = "ERR This Redis command is not allowed from script"
	// ErrWriteReadOnly is the reply to a write command from a read-only
	// script (Command.ReadOnly).
	ErrWriteReadOnly Error = "ERR Write commands are not allowed from read-only scripts."

	// ErrBusy answers every command but SCRIPT KILL and SHUTDOWN NOSAVE
	// while a script has run past the busy threshold (Engine.Busy).
	ErrBusy Error = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
	// ErrBusyFunction is ErrBusy while the busy one is a function
	// (FCALL), which FUNCTION KILL stops.
	ErrBusyFunction Error = "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	// ErrFunctionNotFound answers FCALL and FCALL_RO of a function no
	// library registered.
	ErrFunctionNotFound Error = "ERR Function not found"
	// ErrLibrariesFull answers FUNCTION LOAD and RESTORE when the
	// libraries would pass the engine's byte bound (Options.MaxBytes);
	// Redis has no such bound.
	ErrLibrariesFull Error = "ERR libraries would exceed the scripts memory limit (--max-scripts-memory)"
	// ErrLibrariesOOM answers FCALL and FCALL_RO of a function with
	// upvalues while the libraries hold more than Options.MaxBytes, which
	// only their functions' calls can bring about: such a call could grow
	// them further. Functions without upvalues, which cannot, still run;
	// FUNCTION DELETE, FLUSH or LOAD REPLACE bring the libraries back
	// within the bound. Its code is OOM, what a Redis client knows for
	// memory that is full.
	ErrLibrariesOOM Error = "OOM command not allowed when the function libraries hold more than --max-scripts-memory."
	// ErrNoScript answers EVALSHA with a digest the cache does not hold.
	ErrNoScript Error = "NOSCRIPT No matching script. Please use EVAL."
	// ErrNotBusy answers SCRIPT KILL when no script runs.
	ErrNotBusy Error = "NOTBUSY No scripts in execution right now."
	// ErrUnkillable answers SCRIPT KILL when the running script has
	// already written.
	ErrUnkillable Error = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command."
	// ErrKilled starts the reply of a script that SCRIPT KILL stopped; the
	// script's digest and line follow it.
	ErrKilled Error = "ERR Script killed by user with SCRIPT KILL..."
	// ErrOutOfMemory starts the reply of a script stopped because Go's
	// heap passed its memory limit while it ran (Options.MemoryLimit),
	// and is the whole reply of a FUNCTION LOAD or RESTORE whose library's
	// top level was stopped so (as Redis answers FUNCTION LOAD, a denyoom
	// command, when memory is full).
	// Redis never stops a script for memory; its nearest error is the OOM
	// its commands get past maxmemory, which is what a client of a bounded
	// server already handles as "memory is full".
	ErrOutOfMemory Error = "OOM command not allowed when used memory > 'maxmemory'."

	// ErrNumKeysTooMany and ErrNumKeysNegative answer an EVAL whose
	// numkeys is out of range; ErrNotInteger one whose numkeys is not a
	// number.
	ErrNumKeysTooMany  Error = "ERR Number of keys can't be greater than number of args"
	ErrNumKeysNegative Error = "ERR Number of keys can't be negative"
	ErrNotInteger      Error = "ERR value is not an integer or out of range"

	// ErrROWithWriteFlag answers EVAL_RO or EVALSHA_RO of a script whose
	// shebang does not declare no-writes.
	ErrROWithWriteFlag Error = "ERR Can not execute a script with write flag using *_ro command."
	// ErrClosed answers a script started after Engine.Close.
	ErrClosed Error = "ERR scripting engine closed"
)

// SplitKeys splits EVAL's arguments after the script (numkeys, keys...,
// args...) into KEYS and ARGV as Redis does, with its errors for a bad
// numkeys.
func SplitKeys(rest [][]byte) (keys, argv [][]byte, err error) {
	if len(rest) == 0 {
		return nil, nil, ErrNumKeysTooMany
	}
	n, ok := redisnum.ParseInt(rest[0])
	switch {
	case !ok:
		return nil, nil, ErrNotInteger
	case n > int64(len(rest)-1):
		return nil, nil, ErrNumKeysTooMany
	case n < 0:
		return nil, nil, ErrNumKeysNegative
	}
	return rest[1 : 1+n], rest[1+n:], nil
}

// normalizeError normalises an error text as Redis's luaPushErrorBuff does: a
// text starting with '-' carries its code before the first space, any
// other gets the code ERR; trailing CR and LF go.
func normalizeError(s []byte) string {
	var code, msg []byte
	if len(s) > 0 && s[0] == '-' {
		if i := bytes.IndexByte(s, ' '); i >= 0 {
			code, msg = s[1:i], s[i+1:]
		} else {
			code, msg = []byte("ERR"), s[1:]
		}
	} else {
		code, msg = []byte("ERR"), s
	}
	msg = bytes.Trim(msg, "\r\n")
	return string(code) + " " + string(msg)
}
