package board

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/radar"
)

// RefreshSeconds is how often the status page reloads itself.
const RefreshSeconds = 2

// chartSeconds is how far back the page's chart goes, in bars of
// chartStep seconds.
const (
	chartSeconds = 300
	chartStep    = 5
)

// Page serves the status page: the Board source gives for the window the
// query asks (?window=10m; else the minute), as HTML that needs nothing
// from elsewhere (no script, no font, no image: it works offline) and
// reloads itself every RefreshSeconds. title names the server.
func Page(title string, source func(radar.Window) Board) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		win := radar.Minute
		if v, ok := radar.ParseWindow(r.URL.Query().Get("window")); ok {
			win = v
		}
		b := source(win)
		reads, calls, ratio := b.Rates()
		data := pageData{Board: b, Title: b.Title(title), Now: time.Now().Format("15:04:05"), Refresh: RefreshSeconds,
			Reads: rate(reads), Calls: rate(calls), Ratio: ratioText(ratio, calls), RateSeconds: RateSeconds,
			Chart: chart(b.History)}
		for i, m := range radar.Measures {
			data.Measures = append(data.Measures, pageMeasure{Name: m.String(), Title: measureTitles[i], Keys: b.Keys[i]})
		}
		for _, l := range b.Loaders {
			data.LoaderRows = append(data.LoaderRows, loaderRow{LoaderHealth: l, P50: dur(l.P50), P99: dur(l.P99)})
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		// Nothing on the page loads from anywhere, itself included.
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
		if err := pageTemplate.Execute(w, data); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
}

type pageData struct {
	Board
	Title, Now           string
	Refresh, RateSeconds int
	Reads, Calls, Ratio  string
	Measures             []pageMeasure
	LoaderRows           []loaderRow
	Chart                chartData
}

type pageMeasure struct {
	Name, Title string
	Keys        []Key
}

type loaderRow struct {
	radar.LoaderHealth
	P50, P99 string
}

// chartData is the SVG chart of reads and origin calls per second, on a
// logarithmic scale (reads outnumber calls a thousandfold when coalescing
// works).
type chartData struct {
	Width, Height int
	Reads, Calls  string // polyline points
	Ticks         []tick
	Span          string
}

type tick struct {
	Y     float64
	Label string
}

func chart(h []radar.Second) chartData {
	const width, height = 600, 160
	h = h[max(len(h)-chartSeconds, 0):]
	n := len(h) / chartStep
	c := chartData{Width: width, Height: height, Span: fmt.Sprintf("last %d minutes, %d s per point, per second, log scale", chartSeconds/60, chartStep)}
	var top float64 = 1
	type pt struct{ reads, calls float64 }
	pts := make([]pt, n)
	for i := range pts {
		for _, s := range h[len(h)-(n-i)*chartStep : len(h)-(n-i-1)*chartStep] {
			pts[i].reads += float64(s.Reads)
			pts[i].calls += float64(s.Calls)
		}
		pts[i].reads /= chartStep
		pts[i].calls /= chartStep
		top = max(top, pts[i].reads, pts[i].calls)
	}
	decades := math.Ceil(math.Log10(top + 1))
	y := func(v float64) float64 { return height - height*math.Log10(v+1)/decades }
	var reads, calls strings.Builder
	for i, p := range pts {
		x := float64(width) * float64(i) / float64(max(n-1, 1))
		fmt.Fprintf(&reads, "%.1f,%.1f ", x, y(p.reads))
		fmt.Fprintf(&calls, "%.1f,%.1f ", x, y(p.calls))
	}
	c.Reads, c.Calls = reads.String(), calls.String()
	c.Ticks = append(c.Ticks, tick{Y: y(0), Label: "0"})
	for d := 0.0; d <= decades; d++ {
		v := math.Pow(10, d)
		c.Ticks = append(c.Ticks, tick{Y: y(v), Label: fmt.Sprintf("%.0f", v)})
	}
	return c
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{{.Refresh}}">
<title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.2em}h2{font-size:1.05em;margin-top:1.5em}
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .8em;border-bottom:1px solid #ddd;text-align:right}
td.key,th.key,td.loader,th.loader{text-align:left;font-family:monospace}
.rates span{margin-right:2em}.reads{stroke:#1f77b4}.calls{stroke:#d62728}
.grid{display:flex;flex-wrap:wrap;gap:2em}svg text{font-size:10px;fill:#666}
</style></head><body>
<h1 id="title">{{.Title}}</h1>
<p>As of {{.Now}}, reloading every {{.Refresh}} s. Window: <a href="?window=1m">last minute</a> · <a href="?window=10m">last ten minutes</a>.
A key's count may be up to the window's total over {{.Capacity}} above the truth (± shows the bound where it is not zero).</p>
<p class="rates" id="rates"><span>reads <b id="reads">{{.Reads}}</b>/s</span><span>origin calls <b id="calls">{{.Calls}}</b>/s</span><span>coalescing <b id="ratio">{{.Ratio}}</b> reads per origin call</span> (last {{.RateSeconds}} s)</p>
<svg width="{{.Chart.Width}}" height="{{.Chart.Height}}" viewBox="-40 -5 {{.Chart.Width}} {{.Chart.Height}}" style="overflow:visible" role="img" aria-label="reads and origin calls per second">
{{range .Chart.Ticks}}<line x1="0" x2="{{$.Chart.Width}}" y1="{{.Y}}" y2="{{.Y}}" stroke="#eee"/><text x="-5" y="{{.Y}}" text-anchor="end">{{.Label}}</text>{{end}}
<polyline class="reads" fill="none" stroke-width="2" points="{{.Chart.Reads}}"/>
<polyline class="calls" fill="none" stroke-width="2" points="{{.Chart.Calls}}"/>
</svg>
<p><span style="color:#1f77b4">━ reads</span> <span style="color:#d62728">━ origin calls</span> ({{.Chart.Span}})</p>
<h2>Loaders</h2>
<table id="loaders"><tr><th class="loader">loader</th><th>in flight</th><th>calls</th><th>failures</th><th>cooldowns</th><th>p50</th><th>p99</th></tr>
{{range .LoaderRows}}<tr data-loader="{{.Loader}}"><td class="loader">{{.Loader}}</td><td>{{.InFlight}}</td><td>{{.Calls}}</td><td>{{.Failures}}</td><td>{{.Cooldowns}}</td><td>{{.P50}}</td><td>{{.P99}}</td></tr>
{{else}}<tr><td class="loader" colspan="7">no loader</td></tr>{{end}}</table>
<div class="grid">
{{range .Measures}}<div><h2>By {{.Name}}: {{.Title}}</h2>
<table id="by-{{.Name}}"><tr><th>count</th><th class="key">key</th><th class="loader">loader</th></tr>
{{range .Keys}}<tr><td class="count">{{.Count}}{{if .Err}} ±{{.Err}}{{end}}</td><td class="key">{{.Key}}</td><td class="loader">{{.Loader}}</td></tr>
{{else}}<tr><td colspan="3" class="key">none</td></tr>{{end}}</table></div>
{{end}}</div>
</body></html>
`))
