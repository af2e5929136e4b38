// Package geo is the arithmetic of Redis's GEO commands: the 52-bit
// interleaved geohash a GEO key's sorted set holds as each member's
// score, the cells a search by radius or box walks, the great-circle
// distance on Redis's earth, and the text Redis writes for distances and
// coordinates. It follows Redis 7.0's geohash.c, geohash_helper.c and
// geo.c operation for operation, rounding included, since the commands'
// replies show every bit of what is computed here: a member added at the
// edge of a cell, a point at the edge of a radius, a distance stored by
// STOREDIST and read back with %.17g.
//
// It knows nothing of the store: a search reads a sorted set through
// Source.
package geo

import "math"

// The limits of what Redis can index (EPSG:900913): no point near the
// poles.
const (
	LonMin = -180.0
	LonMax = 180.0
	LatMin = -85.05112878
	LatMax = 85.05112878
)

// StepMax is the precision of a member's score: 26 bits of longitude and
// 26 of latitude.
const StepMax = 26

// EarthRadius is Redis's: the quadratic mean radius of WGS-84, in meters.
const EarthRadius = 6372797.560856

// mercatorMax bounds the search-step estimate (geohashEstimateStepsByRadius).
const mercatorMax = 20037726.37

// degToRad is Redis's D_R: M_PI as a double, divided by 180 in double
// arithmetic (a constant expression would divide the exact pi).
var degToRad = pi / 180.0

// pi is M_PI as a double.
var pi float64 = math.Pi

func degRad(deg float64) float64 { return deg * degToRad }
func radDeg(rad float64) float64 { return rad / degToRad }

// Range is a range of longitude or latitude that a hash divides.
type Range struct{ Min, Max float64 }

// The ranges of a member's score, and the standard ones GEOHASH re-encodes
// with.
var (
	lonRange    = Range{LonMin, LonMax}
	latRange    = Range{LatMin, LatMax}
	stdLatRange = Range{-90, 90}
)

// Hash is a geohash of step bits of longitude and step of latitude,
// interleaved: latitude on the even bits, longitude on the odd ones.
// The zero Hash (step 0) is no cell at all: a neighbour a search skips.
type Hash struct {
	Bits uint64
	Step uint8
}

func (h Hash) isZero() bool { return h.Bits == 0 && h.Step == 0 }

// interleave spreads lat over the even bits and lon over the odd ones.
func interleave(lat, lon uint32) uint64 {
	return spread(lat) | spread(lon)<<1
}

// spread moves the i-th bit of v to bit 2i.
func spread(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F
	x = (x | x<<2) & 0x3333333333333333
	x = (x | x<<1) & 0x5555555555555555
	return x
}

// squeeze is spread's inverse: the even bits of x, packed.
func squeeze(x uint64) uint32 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0F0F0F0F0F0F0F0F
	x = (x | x>>4) & 0x00FF00FF00FF00FF
	x = (x | x>>8) & 0x0000FFFF0000FFFF
	x = (x | x>>16) & 0x00000000FFFFFFFF
	return uint32(x)
}

// encode is geohashEncode: false outside Redis's limits or the ranges.
func encode(lonR, latR Range, lon, lat float64, step uint8) (Hash, bool) {
	if step > 32 || step == 0 {
		return Hash{}, false
	}
	if lon > LonMax || lon < LonMin || lat > LatMax || lat < LatMin {
		return Hash{}, false
	}
	if lat < latR.Min || lat > latR.Max || lon < lonR.Min || lon > lonR.Max {
		return Hash{}, false
	}
	latOff := (lat - latR.Min) / (latR.Max - latR.Min)
	lonOff := (lon - lonR.Min) / (lonR.Max - lonR.Min)
	scale := float64(uint64(1) << step)
	// C converts the products to uint32 by truncation; at the range's
	// maximum that is 1<<step, a bit past the hash, as in Redis.
	return Hash{Bits: interleave(uint32(float64(latOff*scale)), uint32(float64(lonOff*scale))), Step: step}, true
}

// Encode is the hash of lon, lat at step over Redis's ranges, false
// outside them.
func Encode(lon, lat float64, step uint8) (Hash, bool) {
	return encode(lonRange, latRange, lon, lat, step)
}

// Align52 is h as a 52-bit score: its bits shifted to the top.
func (h Hash) Align52() uint64 { return h.Bits << (52 - 2*uint(h.Step)) }

// Score is the sorted-set score GEOADD gives lon, lat, which the caller
// has checked are within the limits. GEOADD hands Redis's ZADD the score
// as an integer's text, which ZADD reads back as a double: the same
// rounding as this conversion.
func Score(lon, lat float64) float64 {
	h, _ := Encode(lon, lat, StepMax)
	return float64(h.Align52())
}

// Area is the cell of a hash.
type Area struct {
	Lon, Lat Range
}

// decode is geohashDecode: the cell of h over the ranges.
func decode(lonR, latR Range, h Hash) (Area, bool) {
	if h.isZero() {
		return Area{}, false
	}
	ilat := squeeze(h.Bits)
	ilon := squeeze(h.Bits >> 1)
	div := float64(uint64(1) << h.Step)
	latScale := latR.Max - latR.Min
	lonScale := lonR.Max - lonR.Min
	// The products are rounded before the sums (float64), as C computes
	// them without fusing.
	return Area{
		Lat: Range{
			Min: latR.Min + float64(float64(ilat)/div*latScale),
			Max: latR.Min + float64(float64(ilat+1)/div*latScale),
		},
		Lon: Range{
			Min: lonR.Min + float64(float64(ilon)/div*lonScale),
			Max: lonR.Min + float64(float64(ilon+1)/div*lonScale),
		},
	}, true
}

// center is the middle of a, clamped to Redis's limits.
func (a Area) center() (lon, lat float64) {
	lon = (a.Lon.Min + a.Lon.Max) / 2
	lon = min(max(lon, LonMin), LonMax)
	lat = (a.Lat.Min + a.Lat.Max) / 2
	lat = min(max(lat, LatMin), LatMax)
	return lon, lat
}

// scoreBits is C's (uint64_t) conversion of a double as x86-64 compilers
// emit it, for scores no GEOADD wrote (a ZADD of any double): below 2^63
// the signed conversion, whose result for a negative, NaN or huge value is
// kept as its bits; from 2^63 the conversion of the value less 2^63.
func scoreBits(score float64) uint64 {
	const two63 = 9223372036854775808.0
	if !(score >= two63) {
		return uint64(cvttsd2si(score))
	}
	return uint64(cvttsd2si(score-two63)) ^ 1<<63
}

// cvttsd2si is x86-64's truncating conversion: out of range or NaN gives
// the "integer indefinite" value, the minimum int64.
func cvttsd2si(f float64) int64 {
	if f != f || f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(f)
}

// Decode is the position of a member from its score (decodeGeohash): the
// center of its 52-bit cell.
func Decode(score float64) (lon, lat float64) {
	a, _ := decode(lonRange, latRange, Hash{Bits: scoreBits(score), Step: StepMax})
	return a.center()
}

// Geohash is the 11-character standard geohash of a member's score, as
// GEOHASH writes it: the position decoded and encoded again over the
// standard latitude range (-90, 90), its 52 bits in base 32 and a final
// "0" for the 55th to 52nd bits it does not have.
func Geohash(score float64) [11]byte {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	lon, lat := Decode(score)
	h, _ := encode(lonRange, stdLatRange, lon, lat, StepMax)
	var out [11]byte
	for i := range 10 {
		out[i] = alphabet[(h.Bits>>(52-(i+1)*5))&0x1f]
	}
	out[10] = alphabet[0]
	return out
}

// moveX moves h one cell east (d > 0) or west, wrapping around.
func (h *Hash) moveX(d int) {
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - 2*uint(h.Step))
	if d > 0 {
		x += zz + 1
	} else {
		x |= zz
		x -= zz + 1
	}
	x &= 0xaaaaaaaaaaaaaaaa >> (64 - 2*uint(h.Step))
	h.Bits = x | y
}

// moveY moves h one cell north (d > 0) or south, wrapping around.
func (h *Hash) moveY(d int) {
	x := h.Bits & 0xaaaaaaaaaaaaaaaa
	y := h.Bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - 2*uint(h.Step))
	if d > 0 {
		y += zz + 1
	} else {
		y |= zz
		y -= zz + 1
	}
	y &= 0x5555555555555555 >> (64 - 2*uint(h.Step))
	h.Bits = x | y
}

// neighbour is h moved dx cells east and dy north.
func (h Hash) neighbour(dx, dy int) Hash {
	if dx != 0 {
		h.moveX(dx)
	}
	if dy != 0 {
		h.moveY(dy)
	}
	return h
}

// Neighbours are the eight cells around h in the order a search walks
// them: north, south, east, west, north-east, north-west, south-east,
// south-west.
func (h Hash) Neighbours() [8]Hash {
	return [8]Hash{
		h.neighbour(0, 1), h.neighbour(0, -1), h.neighbour(1, 0), h.neighbour(-1, 0),
		h.neighbour(1, 1), h.neighbour(-1, 1), h.neighbour(1, -1), h.neighbour(-1, -1),
	}
}

// ScoreRange is the scores of the members within cell h: min included,
// max excluded.
func (h Hash) ScoreRange() (lo, hi float64) {
	lo = float64(h.Align52())
	h.Bits++
	return lo, float64(h.Align52())
}

// HashInt is a score as WITHHASH writes it: C's conversion of the double
// to a long long.
func HashInt(score float64) int64 { return cvttsd2si(score) }
