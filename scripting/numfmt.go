package scripting

import (
	"math"
	"strconv"

	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// How scripts print numbers. Lua numbers are doubles, and each place that
// prints one has its own rules; the primitives are Redis's, in
// internal/redisnum.

// toInt64 converts as C's (long long) cast does on x86-64: toward zero,
// and NaN or out-of-range values give the minimum int64.
func toInt64(d float64) int64 {
	if d != d || d >= 1<<63 || d < -(1<<63) {
		return math.MinInt64
	}
	return int64(d)
}

// formatDouble is Redis 7.2's d2string, a script's double reply: as
// 7.0's for nan, infinities, zeros and integers, and the rest printed
// shortest (fpconv_dtoa).
func formatDouble(d float64) string {
	if _, ok := redisnum.Double2LL(d); ok || d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return string(redisnum.AppendD2String(nil, d))
	}
	return redisnum.Shortest(d)
}

// formatArg is how Redis 7.2 turns a Lua number passed to redis.call
// into a command argument.
func formatArg(d float64) string {
	if n, ok := redisnum.Double2LL(d); ok {
		return strconv.FormatInt(n, 10)
	}
	return redisnum.Shortest(d)
}

// matchFold returns how many leading bytes of s match word, ignoring
// ASCII case.
func matchFold(s []byte, word string) int {
	n := 0
	for n < len(s) && n < len(word) && s[n]|0x20 == word[n] {
		n++
	}
	return n
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
