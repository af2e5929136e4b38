package geo

import (
	"math"
	"slices"
)

// latDistance is the distance between two latitudes on a meridian
// (geohashGetLatDistance).
func latDistance(lat1, lat2 float64) float64 {
	return EarthRadius * math.Abs(degRad(lat2)-degRad(lat1))
}

// Distance is the great-circle distance in meters between two points by
// the haversine formula, as Redis computes it (geohashGetDistance), with
// its shortcut for points on one meridian.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := degRad(lon1), degRad(lon2)
	v := sin((lon2r - lon1r) / 2)
	if v == 0 {
		return latDistance(lat1, lat2)
	}
	lat1r, lat2r := degRad(lat1), degRad(lat2)
	u := sin((lat2r - lat1r) / 2)
	// Each product rounded, left to right, as C computes u*u + c1*c2*v*v.
	a := float64(u*u) + float64(float64(float64(cos(lat1r)*cos(lat2r))*v)*v)
	return 2.0 * EarthRadius * asin(math.Sqrt(a))
}

// Shape is the area of a search: a circle of Radius, or a box of Width
// and Height, around (Lon, Lat), in the unit of which Conversion meters
// make one.
type Shape struct {
	Lon, Lat      float64
	Box           bool
	Radius        float64
	Width, Height float64
	Conversion    float64
}

// boundingBox is the box in degrees that holds the shape
// (geohashBoundingBox): min lon, min lat, max lon, max lat.
func (s *Shape) boundingBox() [4]float64 {
	var height, width float64
	if s.Box {
		height, width = s.Conversion*(s.Height/2), s.Conversion*(s.Width/2)
	} else {
		height, width = s.Conversion*s.Radius, s.Conversion*s.Radius
	}
	latDelta := radDeg(height / EarthRadius)
	lonDeltaTop := radDeg(width / EarthRadius / cos(degRad(s.Lat+latDelta)))
	lonDeltaBottom := radDeg(width / EarthRadius / cos(degRad(s.Lat-latDelta)))
	// The box is widest at the latitude nearer the equator... as Redis
	// reasons it: the southern hemisphere takes the bottom's delta.
	lonDelta := lonDeltaTop
	if s.Lat < 0 {
		lonDelta = lonDeltaBottom
	}
	return [4]float64{s.Lon - lonDelta, s.Lat - latDelta, s.Lon + lonDelta, s.Lat + latDelta}
}

// estimateStep is the step of the cells a search of radius meters around
// latitude lat walks (geohashEstimateStepsByRadius).
func estimateStep(meters, lat float64) uint8 {
	if meters == 0 {
		return 26
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// Cells are the cells a search of s reads, in Redis's order: the center
// then its neighbours, zero for the ones that cannot hold a point of s
// (geohashCalculateAreasByShapeWGS84).
func (s *Shape) Cells() [9]Hash {
	bounds := s.boundingBox()
	minLon, minLat, maxLon, maxLat := bounds[0], bounds[1], bounds[2], bounds[3]
	meters := s.Radius
	if s.Box {
		meters = math.Sqrt(float64(float64(s.Width/2)*float64(s.Width/2)) + float64(float64(s.Height/2)*float64(s.Height/2)))
	}
	meters *= s.Conversion
	step := estimateStep(meters, s.Lat)

	cells := func(step uint8) (Hash, [8]Hash, Area) {
		h, _ := encode(lonRange, latRange, s.Lon, s.Lat, step)
		area, _ := decode(lonRange, latRange, h)
		return h, h.Neighbours(), area
	}
	h, nb, area := cells(step)
	// The estimate may leave part of the shape outside the eight
	// neighbours when it lies near the center cell's edge: one step
	// bigger then.
	north, _ := decode(lonRange, latRange, nb[0])
	south, _ := decode(lonRange, latRange, nb[1])
	east, _ := decode(lonRange, latRange, nb[2])
	west, _ := decode(lonRange, latRange, nb[3])
	if step > 1 && (north.Lat.Max < maxLat || south.Lat.Min > minLat || east.Lon.Max < maxLon || west.Lon.Min > minLon) {
		step--
		h, nb, area = cells(step)
	}
	const n, s_, e, w, ne, nw, se, sw = 0, 1, 2, 3, 4, 5, 6, 7
	if step >= 2 {
		if area.Lat.Min < minLat {
			nb[s_], nb[sw], nb[se] = Hash{}, Hash{}, Hash{}
		}
		if area.Lat.Max > maxLat {
			nb[n], nb[ne], nb[nw] = Hash{}, Hash{}, Hash{}
		}
		if area.Lon.Min < minLon {
			nb[w], nb[sw], nb[nw] = Hash{}, Hash{}, Hash{}
		}
		if area.Lon.Max > maxLon {
			nb[e], nb[se], nb[ne] = Hash{}, Hash{}, Hash{}
		}
	}
	return [9]Hash{h, nb[n], nb[s_], nb[e], nb[w], nb[ne], nb[nw], nb[se], nb[sw]}
}

// Contains reports whether the member of score is within s, with its
// position and its distance in meters from s's center (geoWithinShape).
func (s *Shape) Contains(score float64) (lon, lat, dist float64, ok bool) {
	lon, lat = Decode(score)
	if !s.Box {
		dist = Distance(s.Lon, s.Lat, lon, lat)
		return lon, lat, dist, dist <= s.Radius*s.Conversion
	}
	// Latitude first, the cheaper test (geohashGetDistanceIfInRectangle).
	if latDistance(lat, s.Lat) > s.Height*s.Conversion/2 {
		return lon, lat, 0, false
	}
	if Distance(lon, lat, s.Lon, lat) > s.Width*s.Conversion/2 {
		return lon, lat, 0, false
	}
	return lon, lat, Distance(s.Lon, s.Lat, lon, lat), true
}

// Source is the sorted set a search reads.
type Source interface {
	// ScoreRange calls fn with each member whose score is at least lo and
	// below hi, in order, until fn returns false. member may alias the
	// set: fn copies what it keeps.
	ScoreRange(lo, hi float64, fn func(member []byte, score float64) bool)
}

// Point is a member a search found: its position, its distance in meters
// from the center, and its score.
type Point struct {
	Member   []byte
	Lon, Lat float64
	Dist     float64
	Score    float64
}

// Search is the members of src within s, cell by cell in Cells' order and
// by score within a cell; with limit > 0 it stops once it has that many
// (COUNT with ANY). A cell the same as the one read just before is not
// read again (at the largest steps neighbours wrap onto each other).
// Members are copies. (membersOfAllNeighbors.)
func Search(src Source, s *Shape, limit int) []Point {
	var out []Point
	cells := s.Cells()
	last := 0
	for i, c := range cells {
		if c.isZero() {
			continue
		}
		// As Redis: the center is never compared, being cell 0.
		if last != 0 && c == cells[last] {
			continue
		}
		if len(out) > 0 && limit > 0 && len(out) >= limit {
			break
		}
		lo, hi := c.ScoreRange()
		src.ScoreRange(lo, hi, func(member []byte, score float64) bool {
			if lon, lat, dist, ok := s.Contains(score); ok {
				out = append(out, Point{Member: slices.Clone(member), Lon: lon, Lat: lat, Dist: dist, Score: score})
			}
			return !(len(out) > 0 && limit > 0 && len(out) >= limit)
		})
		last = i
	}
	return out
}

// Sort orders points by distance, nearest first (farthest if desc), as
// Redis does: all of them stably as glibc's qsort (a merge sort) when
// keep is all of them, else only the first keep in place, as Redis's
// partial quicksort leaves them, ties and all.
func Sort(points []Point, desc bool, keep int) {
	cmp := func(a, b *Point) int {
		c := 0
		switch {
		case a.Dist > b.Dist:
			c = 1
		case a.Dist < b.Dist:
			c = -1
		}
		if desc {
			return -c
		}
		return c
	}
	if keep >= len(points) {
		slices.SortStableFunc(points, func(a, b Point) int { return cmp(&a, &b) })
		return
	}
	pqsort(points, 0, len(points), cmp, 0, keep-1)
}

// pqsort is Redis's pqsort (Bentley and McIlroy's quicksort, recursing
// only into the parts that overlap the ranks [lrange, rrange]) on
// p[lo:lo+n], element for element, so that equal distances come out in
// Redis's order.
func pqsort(p []Point, lo, n int, cmp func(a, b *Point) int, lrange, rrange int) {
	swap := func(i, j int) { p[i], p[j] = p[j], p[i] }
	vecswap := func(i, j, k int) {
		for ; k > 0; k-- {
			swap(i, j)
			i++
			j++
		}
	}
	med3 := func(a, b, c int) int {
		if cmp(&p[a], &p[b]) < 0 {
			switch {
			case cmp(&p[b], &p[c]) < 0:
				return b
			case cmp(&p[a], &p[c]) < 0:
				return c
			}
			return a
		}
		switch {
		case cmp(&p[b], &p[c]) > 0:
			return b
		case cmp(&p[a], &p[c]) < 0:
			return a
		}
		return c
	}
	for {
		a := lo
		if n < 7 {
			for pm := a + 1; pm < a+n; pm++ {
				for pl := pm; pl > a && cmp(&p[pl-1], &p[pl]) > 0; pl-- {
					swap(pl, pl-1)
				}
			}
			return
		}
		pm := a + n/2
		if n > 7 {
			pl, pn := a, a+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(a, pm)
		pa, pb := a+1, a+1
		pc, pd := a+n-1, a+n-1
		for {
			for pb <= pc {
				r := cmp(&p[pb], &p[a])
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := cmp(&p[pc], &p[a])
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := a + n
		r := min(pa-a, pb-pa)
		vecswap(a, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		// A part is sorted further only if it overlaps the ranks wanted.
		overlaps := func(s, k int) bool {
			return !(lrange < s && rrange < s || lrange >= s+k && rrange >= s+k)
		}
		if r = pb - pa; r > 1 && overlaps(a, r) {
			pqsort(p, a, r, cmp, lrange, rrange)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		lo, n = pn-r, r
		if !overlaps(lo, n) {
			return
		}
	}
}
