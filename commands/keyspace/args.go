package keyspace

import (
	"bytes"
	"math"
	"math/big"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// INCRBYFLOAT computes in the x87 long double Redis is built with on
// x86-64: a 64-bit mantissa and 15-bit exponent. In math/big's terms
// (mantissa in [0.5, 1)), finite values have exponents up to 16384, normal
// ones down to -16381 and subnormals, with fewer mantissa bits, down to
// -16444, the exponent of the smallest, 2^-16445.
const (
	ldPrec       = 64
	ldMaxExp     = 16384
	ldMinNormExp = -16381
	ldMinExp     = -16444
	// Redis's MAX_LONG_DOUBLE_CHARS: string2ld refuses longer strings.
	maxLongDoubleChars = 5 * 1024
)

// parseLongDouble parses b as Redis's string2ld does with glibc's strtold:
// all of b must be a decimal or hexadecimal ("0x1.8p3") float or an
// infinity, with an optional sign and no spaces. NaN, and values that
// overflow or underflow to zero, are refused. The value is rounded once,
// to the nearest long double.
func parseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= maxLongDoubleChars {
		return nil, false
	}
	neg := b[0] == '-'
	if b[0] == '-' || b[0] == '+' {
		b = b[1:]
	}
	if resp.EqualFold(b, "inf") || resp.EqualFold(b, "infinity") {
		return new(big.Float).SetInf(neg), true
	}
	base, expChar := 10, byte('e')
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		base, expChar, b = 16, 'p', b[2:]
	}
	// The mantissa: digits with at most one point, at least one digit.
	digits := make([]byte, 0, len(b))
	frac, point, i := 0, false, 0
scan:
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c == '.' && !point:
			point = true
		case '0' <= c && c <= '9' || base == 16 && isHex(c):
			digits = append(digits, c)
			if point {
				frac++
			}
		default:
			break scan
		}
	}
	if len(digits) == 0 {
		return nil, false
	}
	var exp int64
	if i < len(b) {
		var ok bool
		if exp, ok = parseExponent(b[i+1:]); !ok || b[i]|0x20 != expChar {
			return nil, false
		}
	}
	mant, _ := new(big.Int).SetString(string(digits), base)
	if mant.Sign() == 0 {
		z := new(big.Float).SetPrec(ldPrec)
		if neg {
			z.Neg(z)
		}
		return z, true
	}
	// The value is num/den, both exact (SetInt on a zero Float keeps
	// every bit). Values certain to overflow or to round to zero are
	// refused first, so that no huge power is computed.
	num, den := new(big.Float), big.NewFloat(1)
	if base == 16 {
		shift := exp - 4*int64(frac)
		if exp2 := shift + int64(mant.BitLen()); exp2 > ldMaxExp || exp2 < ldMinExp-1 {
			return nil, false
		}
		num.SetMantExp(num.SetInt(mant), int(shift))
	} else {
		shift := exp - int64(frac)
		// The value is in [10^exp10, 10^(exp10+1)).
		exp10 := shift + int64(len(bytes.TrimLeft(digits, "0"))) - 1
		if exp10 > 4932 || exp10 < -4952 {
			return nil, false
		}
		pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs(shift)), nil)
		if shift >= 0 {
			num.SetInt(mant.Mul(mant, pow))
		} else {
			num.SetInt(mant)
			den = new(big.Float).SetInt(pow)
		}
	}
	z, ok := roundLongDouble(num, den)
	if !ok {
		return nil, false
	}
	if neg {
		z.Neg(z)
	}
	return z, true
}

// parseExponent parses an exponent's optional sign and decimal digits. Its
// magnitude is capped far beyond any exponent a long double can hold.
func parseExponent(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = min(n*10+int64(c-'0'), 1<<20)
	}
	if neg {
		n = -n
	}
	return n, true
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// roundLongDouble rounds num/den, both positive and exact, to the nearest
// long double, with a subnormal's reduced precision. It reports false if
// the result overflows or is zero, which strtold signals with ERANGE.
func roundLongDouble(num, den *big.Float) (*big.Float, bool) {
	// The binade of the exact quotient sets how many bits it keeps.
	trunc := new(big.Float).SetPrec(ldPrec).SetMode(big.ToZero).Quo(num, den)
	exp := trunc.MantExp(nil)
	prec := ldPrec
	if exp < ldMinNormExp {
		prec = exp - ldMinExp + 1
	}
	if prec < 1 {
		// Below the smallest subnormal: it rounds up to that only from
		// above half of it, and to zero otherwise.
		half := new(big.Float).SetMantExp(big.NewFloat(0.5), ldMinExp-1)
		if exp < ldMinExp-1 || trunc.Cmp(half) == 0 && trunc.Acc() == big.Exact {
			return nil, false
		}
		return new(big.Float).SetPrec(ldPrec).SetMantExp(big.NewFloat(0.5), ldMinExp), true
	}
	z := new(big.Float).SetPrec(uint(prec)).Quo(num, den)
	if z.MantExp(nil) > ldMaxExp {
		return nil, false
	}
	return z.SetPrec(ldPrec), true
}

// formatLongDouble prints f as Redis's ld2string does for INCRBYFLOAT:
// "%.17Lf", then without trailing zeros or a trailing point, and "-0" as "0".
func formatLongDouble(f *big.Float) []byte {
	b := f.Append(nil, 'f', 17)
	b = bytes.TrimRight(b, "0")
	b = bytes.TrimSuffix(b, []byte("."))
	if string(b) == "-0" {
		b = b[1:]
	}
	return b
}

// parseCursor parses a SCAN cursor as Redis does with strtoul: an optional
// sign ('-' negates modulo 2^64) and decimal digits, possibly none at all,
// with nothing around them and no overflow. Redis reads the argument as a
// C string, so a NUL byte ends it.
func parseCursor(b []byte) (uint64, bool) {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return 0, true
	}
	neg := b[0] == '-'
	if b[0] == '-' || b[0] == '+' {
		b = b[1:]
	}
	u, ok := resp.ParseDigits(b)
	if neg {
		u = -u
	}
	return u, ok
}

// nowMillis is the time on the store's clock (the one keys expire by) in
// Unix milliseconds. Deadlines are set on whole milliseconds, as Redis
// keeps them, so PTTL right after PX 1000 reads 1000.
func nowMillis(c *commands.Ctx) int64 { return c.Store.Now().UnixMilli() }

// expiryArg turns an expiry argument into a deadline in Unix nanoseconds.
// unit is the argument's unit in milliseconds (1000 for seconds, 1 for
// milliseconds) and absolute says it is a timestamp rather than a duration.
// positive requires a value above zero, as SET and GETEX do (Redis's
// getExpireMillisecondsOrReply); without it any value is taken and one in
// the past deletes the key, as the EXPIRE family does (expireGenericCommand).
// Either way a value whose conversion to milliseconds overflows is invalid;
// one past the engine's last deadline is that deadline.
// It returns the error to reply, if any, with cmd's name in it. now is the
// time in Unix milliseconds (nowMillis) that a duration counts from.
func expiryArg(arg []byte, unit int64, absolute, positive bool, cmd string, now int64) (int64, string) {
	n, ok := resp.ParseInt(arg)
	if !ok {
		return 0, commands.ErrNotInteger
	}
	invalid := "ERR invalid expire time in '" + cmd + "' command"
	if (positive && n <= 0) || n > math.MaxInt64/unit || n < math.MinInt64/unit {
		return 0, invalid
	}
	ms := n * unit
	if !absolute {
		if ms > math.MaxInt64-now {
			return 0, invalid
		}
		ms += now
	}
	// A deadline past the engine's clock (2262) is kept as its last
	// instant: Redis takes any that does not overflow, and none of them
	// comes within this process's life.
	ms = min(ms, engine.MaxDeadlineMillis)
	if ms <= 0 {
		return 1, "" // already past; zero would mean "no deadline"
	}
	return ms * int64(time.Millisecond), ""
}

// numKeysFirst finds the keys of a command whose first argument is
// numkeys (SINTERCARD, LMPOP, ZMPOP, ZUNION, ZINTER, ZDIFF, ZINTERCARD).
func numKeysFirst(args [][]byte) [][]byte { return numKeysAt(args, 1) }

// numKeysSecond finds the keys of a command whose second argument is
// numkeys (BLMPOP, BZMPOP: the timeout is first).
func numKeysSecond(args [][]byte) [][]byte { return numKeysAt(args, 2) }

// numKeysAt finds the keys that follow a numkeys argument at args[at].
func numKeysAt(args [][]byte, at int) [][]byte {
	if len(args) <= at {
		return nil
	}
	n, ok := resp.ParseInt(args[at])
	if !ok || n < 1 || n > int64(len(args)-at-1) {
		return nil
	}
	return args[at+1 : at+1+int(n)]
}

// isHex reports a hexadecimal digit, as C's isxdigit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
