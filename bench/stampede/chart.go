package main

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strconv"
)

// barColors colour the approaches in table order; barColorNames name them
// for the legend printed under the table.
var (
	barColors = []color.RGBA{
		{0xd6, 0x27, 0x28, 0xff},
		{0xff, 0x7f, 0x0e, 0xff},
		{0x1f, 0x77, 0xb4, 0xff},
		{0x2c, 0xa0, 0x2c, 0xff},
	}
	barColorNames = []string{"red", "orange", "blue", "green"}
)

// font3x5 is a tiny bitmap font: each glyph is 5 rows of 3 bits.
var font3x5 = map[rune][5]uint8{
	'0': {7, 5, 5, 5, 7}, '1': {2, 6, 2, 2, 7}, '2': {7, 1, 7, 4, 7}, '3': {7, 1, 7, 1, 7},
	'4': {5, 5, 7, 1, 1}, '5': {7, 4, 7, 1, 7}, '6': {7, 4, 7, 5, 7}, '7': {7, 1, 1, 1, 1},
	'8': {7, 5, 7, 5, 7}, '9': {7, 5, 7, 1, 7}, '.': {0, 0, 0, 0, 2}, 'K': {5, 5, 6, 5, 5},
	'=': {0, 7, 0, 7, 0}, 'm': {0, 0, 7, 7, 5}, 's': {0, 3, 6, 1, 6}, 'x': {0, 5, 2, 5, 0},
}

func drawText(img draw.Image, x, y, scale int, s string, c color.Color) {
	for _, r := range s {
		g, ok := font3x5[r]
		if ok {
			for row := 0; row < 5; row++ {
				for col := 0; col < 3; col++ {
					if g[row]&(4>>col) != 0 {
						fill(img, x+col*scale, y+row*scale, scale, scale, c)
					}
				}
			}
		}
		x += 4 * scale
	}
}

func textWidth(s string, scale int) int { return len(s)*4*scale - scale }

func fill(img draw.Image, x, y, w, h int, c color.Color) {
	draw.Draw(img, image.Rect(x, y, x+w, y+h), image.NewUniform(c), image.Point{}, draw.Src)
}

// panel draws one log-scale grouped bar chart in rect r; value(k, a) gives
// the bar height (values below lo are clipped to a stub, above hi to the top).
func panel(img draw.Image, r image.Rectangle, ks []int, napp int, value func(ki, ai int) (float64, bool), lo, hi float64, unit string) {
	black := color.RGBA{0, 0, 0, 0xff}
	grid := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	left := r.Min.X + 60
	plot := image.Rect(left, r.Min.Y+20, r.Max.X-10, r.Max.Y-30)
	ly := func(v float64) int {
		f := (math.Log10(v) - math.Log10(lo)) / (math.Log10(hi) - math.Log10(lo))
		f = math.Max(0, math.Min(1, f))
		return plot.Max.Y - int(f*float64(plot.Dy()))
	}
	for d := lo; d <= hi*1.0001; d *= 10 {
		y := ly(d)
		fill(img, plot.Min.X, y, plot.Dx(), 1, grid)
		label := strconv.FormatFloat(d, 'f', -1, 64)
		drawText(img, plot.Min.X-8-textWidth(label, 2), y-5, 2, label, black)
	}
	drawText(img, r.Min.X+4, r.Min.Y+2, 2, unit, black)
	fill(img, plot.Min.X, plot.Min.Y, 1, plot.Dy(), black)
	fill(img, plot.Min.X, plot.Max.Y, plot.Dx(), 1, black)
	groupW := plot.Dx() / len(ks)
	barW := groupW / (napp + 2)
	for ki, k := range ks {
		gx := plot.Min.X + ki*groupW + barW
		for ai := 0; ai < napp; ai++ {
			v, ok := value(ki, ai)
			if !ok {
				continue
			}
			y := ly(v)
			if y > plot.Max.Y-2 {
				y = plot.Max.Y - 2
			}
			fill(img, gx+ai*barW+1, y, barW-2, plot.Max.Y-y, barColors[ai%len(barColors)])
		}
		label := "K=" + strconv.Itoa(k)
		drawText(img, plot.Min.X+ki*groupW+groupW/2-textWidth(label, 2)/2, plot.Max.Y+8, 2, label, black)
	}
}

func decadeRange(vals []float64, floorAt float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return floorAt, floorAt * 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if floorAt > 0 && lo < floorAt {
		lo = floorAt
	}
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// writeChart draws origin calls per expiry (top) and p99 latency in ms
// (bottom), grouped by K, one colour per approach, legend boxes in table order.
func writeChart(path string, ks []int, napp int, results []result) error {
	const w, h = 960, 720
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(img, 0, 0, w, h, color.White)
	idx := map[[2]int]result{}
	var per, p99 []float64
	for _, r := range results {
		for ki, k := range ks {
			if k == r.k {
				idx[[2]int{ki, r.approach}] = r
			}
		}
		per = append(per, r.perExpiry())
		p99 = append(p99, float64(r.p99)/1e6)
	}
	// Legend: one coloured box per approach, in table order.
	for ai := range napp {
		x := 70 + ai*200
		fill(img, x, 12, 24, 16, barColors[ai%len(barColors)])
		drawText(img, x+30, 15, 2, strconv.Itoa(ai+1), color.Black)
	}
	lo, hi := decadeRange(per, 0.1)
	panel(img, image.Rect(0, 40, w, 380), ks, napp, func(ki, ai int) (float64, bool) {
		r, ok := idx[[2]int{ki, ai}]
		return r.perExpiry(), ok
	}, lo, hi, "x")
	lo, hi = decadeRange(p99, 0)
	panel(img, image.Rect(0, 380, w, h), ks, napp, func(ki, ai int) (float64, bool) {
		r, ok := idx[[2]int{ki, ai}]
		return float64(r.p99) / 1e6, ok
	}, lo, hi, "ms")
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
