package geo

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// redisPoints are what redis-server 7.0.15 answered for these GEOADDs:
// ZSCORE, GEOPOS and GEOHASH of each member. ne and sw are the corners
// of what Redis indexes: ne's score has a 53rd bit, as in Redis.
var redisPoints = []struct {
	name           string
	lon, lat       float64
	score          float64
	posLon, posLat string
	hash           string
}{
	{"palermo", 13.361389, 38.115556, 3479099956230698, "13.36138933897018433", "38.11555639549629859", "sqc8b49rny0"},
	{"catania", 15.087269, 37.502669, 3479447370796909, "15.08726745843887329", "37.50266842333162032", "sqdtr74hyu0"},
	{"oakland", -122.27652, 37.805186, 1367952638197536, "-122.27652043104171753", "37.80518485897756165", "9q9p1d0znt0"},
	{"london", -0.1278, 51.5074, 2163557714755072, "-0.12779921293258667", "51.50740077990133159", "gcpvj0duq50"},
	{"ne", 180, 85.05112878, 13510798882111488, "180", "85.0511287799999991", "bp05b5048p0"},
	{"sw", -180, -85.05112878, 0, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"},
	{"origin", 0, 0, 3377699720527872, "0.00000268220901489", "0.00000126736058093", "s0000000000"},
	{"tokyo", 139.6917, 35.6895, 4171231230197045, "139.69170123338699341", "35.68950126697937009", "xn774c06kt0"},
	{"ny", -73.935242, 40.730610, 1791875640195835, "-73.93524438142776489", "40.73061047253818145", "dr5rtwccpb0"},
	{"sydney", 151.2093, -33.8688, 3252046221964352, "151.20929986238479614", "-33.86880091934155956", "r3gx2f77bj0"},
}

func TestEncodeDecodeAgainstRedis(t *testing.T) {
	for _, p := range redisPoints {
		if got := Score(p.lon, p.lat); got != p.score {
			t.Errorf("%s: score %.0f, redis %.0f", p.name, got, p.score)
		}
		lon, lat := Decode(p.score)
		if got := string(AppendCoordinate(nil, lon)); got != p.posLon {
			t.Errorf("%s: longitude %s, redis %s", p.name, got, p.posLon)
		}
		if got := string(AppendCoordinate(nil, lat)); got != p.posLat {
			t.Errorf("%s: latitude %s, redis %s", p.name, got, p.posLat)
		}
		if h := Geohash(p.score); string(h[:]) != p.hash {
			t.Errorf("%s: geohash %s, redis %s", p.name, h[:], p.hash)
		}
	}
	if _, ok := Encode(180.000001, 0, StepMax); ok {
		t.Error("a longitude past 180 encodes")
	}
	if _, ok := Encode(0, 85.05112879, StepMax); ok {
		t.Error("a latitude past the limit encodes")
	}
}

// TestDistanceAgainstRedis: GEODIST's replies (m), and the distances
// GEORADIUSBYMEMBER ... km STOREDIST stored, to the last bit.
func TestDistanceAgainstRedis(t *testing.T) {
	score := map[string]float64{}
	for _, p := range redisPoints {
		score[p.name] = p.score
	}
	dist := func(a, b string) float64 {
		lon1, lat1 := Decode(score[a])
		lon2, lat2 := Decode(score[b])
		return Distance(lon1, lat1, lon2, lat2)
	}
	for _, c := range []struct{ a, b, geodist, storedKm string }{
		{"palermo", "catania", "166274.1516", "166.27415156960032"},
		{"oakland", "london", "8609250.3176", "8609.2503175935581"},
		{"tokyo", "sydney", "7828823.5342", "7828.8235341979762"},
		{"london", "ny", "5565903.1295", "5565.9031294541792"},
		{"ne", "sw", "18919844.5891", ""},
		{"origin", "ny", "8664016.2158", ""},
	} {
		d := dist(c.a, c.b)
		if got := string(AppendDistance(nil, d)); got != c.geodist {
			t.Errorf("GEODIST %s %s: %s, redis %s", c.a, c.b, got, c.geodist)
		}
		if c.storedKm == "" {
			continue
		}
		if got := strconv.FormatFloat(d/1000, 'g', 17, 64); got != c.storedKm {
			t.Errorf("STOREDIST %s from %s: %s, redis %s", c.b, c.a, got, c.storedKm)
		}
	}
	if d := dist("palermo", "palermo"); d != 0 {
		t.Errorf("a point's distance to itself: %v", d)
	}
}

func TestNeighbours(t *testing.T) {
	for _, step := range []uint8{1, 2, 5, 13, 26} {
		for _, p := range redisPoints[:4] {
			h, _ := Encode(p.lon, p.lat, step)
			c, _ := decode(lonRange, latRange, h)
			nb := h.Neighbours()
			for i, d := range [8][2]int{{0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {-1, 1}, {1, -1}, {-1, -1}} {
				a, _ := decode(lonRange, latRange, nb[i])
				if nb[i].Step != step {
					t.Fatalf("step %d: neighbour %d has step %d", step, i, nb[i].Step)
				}
				// The neighbour's cell is one cell over, modulo the wrap.
				wantLon := math.Mod(c.Lon.Min+float64(d[0])*(c.Lon.Max-c.Lon.Min)-LonMin+720, LonMax-LonMin) + LonMin
				wantLat := math.Mod(c.Lat.Min+float64(d[1])*(c.Lat.Max-c.Lat.Min)-LatMin+4*(LatMax-LatMin), LatMax-LatMin) + LatMin
				if math.Abs(a.Lon.Min-wantLon) > 1e-9 || math.Abs(a.Lat.Min-wantLat) > 1e-9 {
					t.Errorf("step %d, %s, neighbour %d: cell at %v,%v, want %v,%v", step, p.name, i, a.Lon.Min, a.Lat.Min, wantLon, wantLat)
				}
				// Moving back returns to the cell.
				back := nb[i].neighbour(-d[0], -d[1])
				if back != h {
					t.Errorf("step %d, %s, neighbour %d: back is %v, want %v", step, p.name, i, back, h)
				}
			}
		}
	}
}

func TestScoreRange(t *testing.T) {
	h, _ := Encode(13.361389, 38.115556, 26)
	lo, hi := h.ScoreRange()
	if lo != 3479099956230698 || hi != lo+1 {
		t.Errorf("step 26: [%v, %v)", lo, hi)
	}
	h, _ = Encode(13.361389, 38.115556, 1)
	lo, hi = h.ScoreRange()
	if hi-lo != 1<<50 || lo != 3<<50 {
		t.Errorf("step 1: [%v, %v)", lo, hi)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want string
	}{{0, "0.0000"}, {0.00004, "0.0000"}, {0.00005, "0.0000"}, {0.00015, "0.0001"}, {0.7750, "0.7750"},
		{1.23456, "1.2346"}, {166274.15156960032, "166274.1516"}, {-2.5, "-2.5000"}, {-0.00001, "0.0000"}} {
		if got := string(AppendDistance(nil, c.d)); got != c.want {
			t.Errorf("distance %v: %s, want %s", c.d, got, c.want)
		}
	}
	for _, c := range []struct {
		f    float64
		want string
	}{{0, "0"}, {math.Copysign(0, -1), "0"}, {-1e-20, "0"}, {1.5, "1.5"}, {-180, "-180"}, {0.1, "0.10000000000000001"}} {
		if got := string(AppendCoordinate(nil, c.f)); got != c.want {
			t.Errorf("coordinate %v: %s, want %s", c.f, got, c.want)
		}
	}
}

// TestTrigRoundsCorrectly compares sin, cos and asin with the true
// values (to 200 bits, by their series) rounded once, on random
// arguments of the ranges distances and bounding boxes use, and with
// values glibc 2.36 returned.
func TestTrigRoundsCorrectly(t *testing.T) {
	const prec = 200
	bigSeries := func(bx *big.Float, odd bool) *big.Float {
		x2 := new(big.Float).SetPrec(prec).Mul(bx, bx)
		term := new(big.Float).SetPrec(prec).SetInt64(1)
		n := int64(0)
		if odd {
			term.Set(bx)
			n = 1
		}
		sum := new(big.Float).SetPrec(prec)
		eps := new(big.Float).SetMantExp(big.NewFloat(1), -prec)
		for {
			sum.Add(sum, term)
			term.Mul(term, x2)
			term.Quo(term, big.NewFloat(float64(-(n+1)*(n+2))))
			n += 2
			if new(big.Float).Abs(term).Cmp(eps) < 0 {
				break
			}
		}
		return sum
	}
	series := func(x float64, odd bool) float64 {
		f, _ := bigSeries(new(big.Float).SetPrec(prec).SetFloat64(x), odd).Float64()
		return f
	}
	// sinBetween is the sine of the midpoint of a and b.
	sinBetween := func(a, b float64) *big.Float {
		m := new(big.Float).SetPrec(prec).Add(big.NewFloat(a), big.NewFloat(b))
		return bigSeries(m.Quo(m, big.NewFloat(2)), true)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		x := (rng.Float64()*2 - 1) * 8
		if got, want := sin(x), series(x, true); got != want {
			t.Errorf("sin(%v) = %v, want %v", x, got, want)
		}
		if got, want := cos(x), series(x, false); got != want {
			t.Errorf("cos(%v) = %v, want %v", x, got, want)
		}
		// asin(y) rounds correctly if y lies between the sines of the
		// midpoints around it.
		y := rng.Float64()
		if rng.IntN(4) == 0 {
			y = 1 - y*1e-4
		}
		a := asin(y)
		by := big.NewFloat(y)
		if sinBetween(math.Nextafter(a, 0), a).Cmp(by) > 0 || sinBetween(a, math.Nextafter(a, 2)).Cmp(by) < 0 {
			t.Errorf("asin(%v) = %v is not y's arcsine rounded", y, a)
		}
	}
	// glibc's own answers.
	for _, c := range []struct {
		f       func(float64) float64
		x, want float64
	}{
		{sin, 0.5, 0.47942553860420301}, {cos, 0.5, 0.87758256189037276}, {asin, 0.5, 0.52359877559829893},
		{asin, 1, 1.5707963267948966}, {asin, -1, -1.5707963267948966}, {sin, 3, 0.14112000805986721},
		{cos, -7.5, 0.34663531783502582}, {asin, 0.99999, 1.5663241871131188},
	} {
		if got := c.f(c.x); got != c.want {
			t.Errorf("f(%v) = %v, glibc %v", c.x, got, c.want)
		}
	}
	if s := sin(math.Copysign(0, -1)); !math.Signbit(s) {
		t.Error("sin(-0) is not -0")
	}
}

func TestPartialSortAsRedis(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		n := 1 + rng.IntN(120)
		pts := make([]Point, n)
		for i := range pts {
			pts[i] = Point{Dist: float64(rng.IntN(30)), Score: float64(i)}
		}
		keep := 1 + rng.IntN(n)
		desc := rng.IntN(2) == 0
		full := slices.Clone(pts)
		Sort(full, desc, n)
		Sort(pts, desc, keep)
		for i := range keep {
			if pts[i].Dist != full[i].Dist {
				t.Fatalf("n %d keep %d desc %v: rank %d has %v, want %v", n, keep, desc, i, pts[i].Dist, full[i].Dist)
			}
		}
		seen := map[float64]bool{}
		for _, p := range pts {
			seen[p.Score] = true
		}
		if len(seen) != n {
			t.Fatal("the partial sort lost or duplicated points")
		}
	}
}
