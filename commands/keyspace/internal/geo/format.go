package geo

import (
	"math"
	"strconv"
)

// AppendDistance appends d as Redis writes a distance: rounded to four
// decimals, half to even (fixedpoint_d2string of llrint(d * 10000)).
func AppendDistance(b []byte, d float64) []byte {
	if d == 0 {
		return append(b, "0.0000"...)
	}
	v := int64(math.RoundToEven(d * 10000))
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	digits := strconv.AppendInt(nil, v, 10)
	for len(digits) < 5 {
		digits = append([]byte{'0'}, digits...)
	}
	b = append(b, digits[:len(digits)-4]...)
	b = append(b, '.')
	return append(b, digits[len(digits)-4:]...)
}

// AppendCoordinate appends f as Redis writes a coordinate
// (addReplyHumanLongDouble): printf's %.17Lf of the double, exact and
// rounded half to even, without its trailing zeros, nor its point if
// nothing follows; "-0" is "0".
func AppendCoordinate(b []byte, f float64) []byte {
	at := len(b)
	b = strconv.AppendFloat(b, f, 'f', 17, 64)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	if b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if string(b[at:]) == "-0" {
		b = append(b[:at], '0')
	}
	return b
}
