package resp

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// Redis's error texts, which clients and people match on.
const (
	errSyntax      = "ERR syntax error"
	errNotInteger  = "ERR value is not an integer or out of range"
	errNotFloat    = "ERR value is not a valid float"
	errOverflow    = "ERR increment or decrement would overflow"
	errOOM         = "OOM command not allowed when used memory > 'maxmemory'."
	errStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

// parseInteger parses a decimal int64 the way Redis's string2ll does: no
// spaces, no '+', no leading zeros, nothing after the digits.
func parseInteger(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	var u uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	switch {
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	case neg && u <= math.MaxInt64+1:
		return int64(-u), true
	}
	return 0, false
}

// parseFloat parses a float the way Redis's string2ld does for INCRBYFLOAT:
// no surrounding spaces, and not NaN.
func parseFloat(b []byte) (float64, bool) {
	if len(b) == 0 || isSpace(b[0]) || isSpace(b[len(b)-1]) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// equalFold reports whether b equals the lower-case ASCII word s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// nowMillis is the current time in Unix milliseconds. Deadlines are set on
// whole milliseconds, as Redis keeps them, so PTTL right after PX 1000
// reads 1000.
func nowMillis() int64 { return time.Now().UnixMilli() }

// Deadlines beyond this many milliseconds cannot be held in the engine's
// nanosecond clock (the year 2262); Redis's own limit is higher.
const maxDeadlineMillis = math.MaxInt64 / int64(time.Millisecond)

// expiryArg turns an expiry argument into a deadline in Unix nanoseconds.
// unit is the argument's unit in milliseconds (1000 for seconds, 1 for
// milliseconds) and absolute says it is a timestamp rather than a duration;
// positive requires a value above zero, as SET and GETEX do. It returns the
// error to reply, if any, with cmd's name in it as Redis words it.
func expiryArg(arg []byte, unit int64, absolute, positive bool, cmd string) (int64, string) {
	n, ok := parseInteger(arg)
	if !ok {
		return 0, errNotInteger
	}
	invalid := "ERR invalid expire time in '" + cmd + "' command"
	if (positive && n <= 0) || n > maxDeadlineMillis/unit || n < -maxDeadlineMillis/unit {
		return 0, invalid
	}
	ms := n * unit
	if !absolute {
		ms += nowMillis()
	}
	if ms > maxDeadlineMillis {
		return 0, invalid
	}
	if ms <= 0 {
		return 1, "" // already past; zero would mean "no deadline"
	}
	return ms * int64(time.Millisecond), ""
}

// writeErr answers an engine error with Redis's text for it.
func writeErr(c *Conn, err error) {
	switch {
	case errors.Is(err, engine.ErrTooLarge):
		c.w.Error(errOOM)
	case errors.Is(err, errNotIntegerValue):
		c.w.Error(errNotInteger)
	case errors.Is(err, errOverflowValue):
		c.w.Error(errOverflow)
	case errors.Is(err, errNotFloatValue):
		c.w.Error(errNotFloat)
	case errors.Is(err, errNaNValue):
		c.w.Error("ERR increment would produce NaN or Infinity")
	case errors.Is(err, errTooBigValue):
		c.w.Error(errStringLimit)
	default:
		c.w.Error("ERR " + err.Error())
	}
}

// Errors of read-modify-write commands, raised inside engine.Update.
var (
	errNotIntegerValue = errors.New("value is not an integer")
	errOverflowValue   = errors.New("integer overflow")
	errNotFloatValue   = errors.New("value is not a float")
	errNaNValue        = errors.New("result is NaN or infinite")
	errTooBigValue     = errors.New("string too long")
)
