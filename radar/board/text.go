package board

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stampedeless/stampedeless/radar"
)

// TextKeys is how many keys per measure the text screen lists.
const TextKeys = 5

// measureTitles say what each measure counts, in radar.Measures' order.
var measureTitles = [len(radar.Measures)]string{
	"origin calls", "coalesced waiters", "stale answers", "failed origin calls", "load time (ms)",
}

// Title names the server the Board came from: its address, and its
// replica with --redis, whose own view it is.
func (b *Board) Title(addr string) string {
	t := "stampedeless radar: " + addr
	if b.Replica != "" {
		t += ", replica " + b.Replica + " (this replica's own view)"
	}
	return t + ", window " + b.Window.String()
}

// WriteText draws b as `stampedeless top` shows it, taken at now from
// the server at addr.
func WriteText(w io.Writer, b Board, addr string, now time.Time) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s   %s\n", b.Title(addr), now.Format("15:04:05"))
	reads, calls, ratio := b.Rates()
	fmt.Fprintf(&sb, "reads %s/s   origin calls %s/s   coalescing %s reads per origin call (last %ds)\n\n",
		rate(reads), rate(calls), ratioText(ratio, calls), RateSeconds)
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "LOADER\tIN FLIGHT\tCALLS\tFAILURES\tCOOLDOWNS\tP50\tP99\t\n")
	for _, l := range b.Loaders {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t\n", l.Loader, l.InFlight, l.Calls, l.Failures, l.Cooldowns,
			dur(l.P50), dur(l.P99))
	}
	if len(b.Loaders) == 0 {
		fmt.Fprintf(tw, "(no loader)\t\t\t\t\t\t\t\n")
	}
	tw.Flush()
	for i, m := range radar.Measures {
		keys := b.Keys[i]
		fmt.Fprintf(&sb, "\nBY %s: %s\n", strings.ToUpper(m.String()), measureTitles[i])
		if len(keys) == 0 {
			sb.WriteString("  (none)\n")
			continue
		}
		tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
		for _, k := range keys[:min(len(keys), TextKeys)] {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", k.Count, errText(k.Err), k.Key, k.Loader)
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// errText is a count's error bound, shown only when it is not zero.
func errText(e uint64) string {
	if e == 0 {
		return ""
	}
	return fmt.Sprintf("(±%d)", e)
}

func rate(r float64) string {
	if r >= 100 || r == 0 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

func ratioText(ratio, calls float64) string {
	if calls == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", ratio)
}

// dur shows a load time as the histogram knows it; "-" without calls.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
