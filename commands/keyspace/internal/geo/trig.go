package geo

import (
	"math"
	"math/big"
)

// Redis computes distances with glibc's sin, cos and asin, which round
// correctly (as good as always), and writes STOREDIST's distances with
// all their 17 digits; Go's math package is off by one unit in the last
// place for about a fifth of arguments. So these three are computed
// here in double-double arithmetic (about 106 bits) and rounded once:
// they return the double nearest the true value, as glibc does, but for
// arguments within 2^-100 or so of a rounding boundary.

// dd is an unevaluated sum hi + lo with |lo| at most half an ulp of hi.
type dd struct{ hi, lo float64 }

// twoSum is a + b exactly, as a dd.
func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

// quickTwoSum is twoSum for |a| >= |b|.
func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

// twoProd is a * b exactly, as a dd.
func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (x dd) add(y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func (x dd) neg() dd { return dd{-x.hi, -x.lo} }

func (x dd) sub(y dd) dd { return x.add(y.neg()) }

func (x dd) mul(y dd) dd {
	p := twoProd(x.hi, y.hi)
	p.lo += x.hi*y.lo + x.lo*y.hi
	return quickTwoSum(p.hi, p.lo)
}

func (x dd) mulFloat(f float64) dd {
	p := twoProd(x.hi, f)
	p.lo += x.lo * f
	return quickTwoSum(p.hi, p.lo)
}

// round is the double nearest x.
func (x dd) round() float64 { return x.hi + x.lo }

// ddOf is the dd nearest f, from a big.Float of more precision.
func ddOf(f *big.Float) dd {
	hi, _ := f.Float64()
	rest := new(big.Float).SetPrec(f.Prec()).Sub(f, new(big.Float).SetFloat64(hi))
	lo, _ := rest.Float64()
	return dd{hi, lo}
}

const bigPrec = 256

var (
	// halfPi1 + halfPi2 + halfPi3 is pi/2 to about 160 bits, for the
	// reduction of arguments; halfPi is pi/2 as a dd.
	halfPi1, halfPi2, halfPi3 float64
	halfPi                    dd
	// sinCoef[i] is (-1)^i/(2i+1)!, cosCoef[i] (-1)^i/(2i)!: Taylor's
	// series, enough terms for 2^-106 at pi/4.
	sinCoef, cosCoef [16]dd
)

func init() {
	p := bigPi()
	p.Quo(p, big.NewFloat(2))
	rest := new(big.Float).SetPrec(bigPrec).Set(p)
	parts := [3]*float64{&halfPi1, &halfPi2, &halfPi3}
	for _, part := range parts {
		*part, _ = rest.Float64()
		rest.Sub(rest, new(big.Float).SetFloat64(*part))
	}
	halfPi = ddOf(p)
	fact := new(big.Float).SetPrec(bigPrec).SetInt64(1)
	for n := 1; n <= 2*len(sinCoef)+1; n++ {
		fact.Mul(fact, new(big.Float).SetInt64(int64(n)))
		c := new(big.Float).SetPrec(bigPrec).Quo(new(big.Float).SetPrec(bigPrec).SetInt64(1), fact)
		if (n/2)%2 == 1 {
			c.Neg(c)
		}
		switch {
		case n%2 == 1 && n/2 < len(sinCoef):
			sinCoef[n/2] = ddOf(c)
		case n%2 == 0 && n/2 < len(cosCoef):
			cosCoef[n/2] = ddOf(c)
		}
	}
	cosCoef[0] = dd{1, 0}
}

// bigPi is pi to bigPrec bits, by Machin's formula.
func bigPi() *big.Float {
	atanInv := func(n int64) *big.Float {
		// atan(1/n) = sum (-1)^k / ((2k+1) n^(2k+1))
		sum := new(big.Float).SetPrec(bigPrec)
		pow := new(big.Float).SetPrec(bigPrec).Quo(big.NewFloat(1), new(big.Float).SetInt64(n))
		n2 := new(big.Float).SetPrec(bigPrec).SetInt64(n * n)
		eps := new(big.Float).SetMantExp(big.NewFloat(1), -bigPrec-8)
		for k := int64(0); ; k++ {
			term := new(big.Float).SetPrec(bigPrec).Quo(pow, new(big.Float).SetInt64(2*k+1))
			if term.Cmp(eps) < 0 {
				break
			}
			if k%2 == 0 {
				sum.Add(sum, term)
			} else {
				sum.Sub(sum, term)
			}
			pow.Quo(pow, n2)
		}
		return sum
	}
	p := new(big.Float).SetPrec(bigPrec).Mul(big.NewFloat(16), atanInv(5))
	return p.Sub(p, new(big.Float).SetPrec(bigPrec).Mul(big.NewFloat(4), atanInv(239)))
}

// reduce is x less the nearest multiple k of pi/2, as a dd, and k mod 4;
// ok is false where the reduction would lose precision.
func reduce(x float64) (r dd, quadrant int, ok bool) {
	if math.Abs(x) <= math.Pi/4 {
		return dd{x, 0}, 0, true
	}
	if !(math.Abs(x) < 1<<20) {
		return dd{}, 0, false
	}
	k := math.RoundToEven(x / halfPi1)
	// k*halfPi1 exactly, then the smaller parts: about 160 bits of pi/2
	// against at most 21 bits of k.
	r = twoSum(x, 0).sub(twoProd(k, halfPi1))
	r = r.sub(twoProd(k, halfPi2))
	r = r.sub(twoProd(k, halfPi3))
	return r, int(int64(k) & 3), true
}

// series is r * sum c[i] r^2i (sine's) or sum c[i] r^2i (cosine's).
func series(r dd, c *[16]dd, odd bool) dd {
	r2 := r.mul(r)
	s := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		s = s.mul(r2).add(c[i])
	}
	if odd {
		s = s.mul(r)
	}
	return s
}

// sinCosDD is sin(x) (cosine false) or cos(x) as a dd.
func sinCosDD(r dd, quadrant int, cosine bool) dd {
	if cosine {
		quadrant++
	}
	switch quadrant & 3 {
	case 0:
		return series(r, &sinCoef, true)
	case 1:
		return series(r, &cosCoef, false)
	case 2:
		return series(r, &sinCoef, true).neg()
	}
	return series(r, &cosCoef, false).neg()
}

// sin is glibc's sin: the sine of x, correctly rounded.
func sin(x float64) float64 {
	r, q, ok := reduce(x)
	if !ok {
		return math.Sin(x)
	}
	if x == 0 {
		return x // keeps -0
	}
	return sinCosDD(r, q, false).round()
}

// cos is glibc's cos: the cosine of x, correctly rounded.
func cos(x float64) float64 {
	r, q, ok := reduce(x)
	if !ok {
		return math.Cos(x)
	}
	return sinCosDD(r, q, true).round()
}

// asinDD is asin(y) for a dd y of at most 0.5 or so: Go's asin refined
// by one Newton step on sin, which doubles its 52 bits.
func asinDD(y dd) dd {
	t0 := math.Asin(y.hi)
	num := y.sub(sinCosDD(dd{t0, 0}, 0, false))
	c := sinCosDD(dd{t0, 0}, 0, true)
	return twoSum(t0, (num.hi+num.lo)/c.hi)
}

// asin is glibc's asin: the arcsine of y, correctly rounded.
func asin(y float64) float64 {
	a := math.Abs(y)
	switch {
	case !(a <= 1): // NaN too
		return math.Asin(y)
	case y == 0:
		return y
	case a <= 0.5:
		return asinDD(dd{y, 0}).round()
	}
	// Near 1 the Newton step divides by a cosine near 0: asin(a) is
	// pi/2 - 2 asin(sqrt((1-a)/2)) instead, whose 1-a is exact.
	z := (1 - a) / 2
	s0 := math.Sqrt(z)
	var s dd
	if s0 != 0 {
		s = quickTwoSum(s0, -math.FMA(s0, s0, -z)/(2*s0))
	}
	w := halfPi.sub(asinDD(s).mulFloat(2)).round()
	if y < 0 {
		return -w
	}
	return w
}
