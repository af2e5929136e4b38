package commands

import (
	"errors"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// Redis's error texts, which clients and people match on.
const (
	ErrSyntax      = "ERR syntax error"
	ErrNotInteger  = "ERR value is not an integer or out of range"
	ErrNotFloat    = "ERR value is not a valid float"
	ErrOverflow    = "ERR increment or decrement would overflow"
	ErrOOM         = "OOM command not allowed when used memory > 'maxmemory'."
	ErrStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrNoAuth      = "NOAUTH Authentication required."
	ErrDBRange     = "ERR DB index is out of range"
	// ErrInt32Range is Redis's refusal of a number that must fit 32 bits
	// (a database's).
	ErrInt32Range = "ERR value is out of range, value must between -2147483648 and 2147483647"
	ErrWrongType  = "WRONGTYPE Operation against a key holding the wrong kind of value"
)

// WriteError answers an engine error with Redis's text for it.
func WriteError(w *resp.Writer, err error) {
	switch {
	case errors.Is(err, engine.ErrTooLarge), errors.Is(err, engine.ErrOOM):
		w.Error(ErrOOM)
	case errors.Is(err, engine.ErrWrongType):
		w.Error(ErrWrongType)
	case errors.Is(err, ErrNotIntegerValue):
		w.Error(ErrNotInteger)
	case errors.Is(err, ErrOverflowValue):
		w.Error(ErrOverflow)
	case errors.Is(err, ErrNotFloatValue):
		w.Error(ErrNotFloat)
	case errors.Is(err, ErrNaNValue):
		w.Error("ERR increment would produce NaN or Infinity")
	case errors.Is(err, ErrTooBigValue):
		w.Error(ErrStringLimit)
	case errors.Is(err, engine.ErrNotHLL), errors.Is(err, engine.ErrCorruptHLL), errors.Is(err, engine.ErrNoHLLKey):
		w.Error(err.Error())
	default:
		w.Error("ERR " + err.Error())
	}
}

// Errors of read-modify-write commands, raised inside engine.Update.
var (
	ErrNotIntegerValue = errors.New("value is not an integer")
	ErrOverflowValue   = errors.New("integer overflow")
	ErrNotFloatValue   = errors.New("value is not a float")
	ErrNaNValue        = errors.New("result is NaN or infinite")
	ErrTooBigValue     = errors.New("string too long")
)
