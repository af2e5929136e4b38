package tracking

import (
	"bytes"
	"slices"
)

// Info is what CLIENT TRACKINGINFO, GETREDIR and LIST show of a
// connection's tracking.
type Info struct {
	On, BCAST, OptIn, OptOut, NoLoop, Broken bool
	Redirect                                 int64
	Prefixes                                 []string
}

// Info is what t shows.
func (t *Tracker) Info() Info {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Info{On: t.on, BCAST: t.bcast, OptIn: t.optin, OptOut: t.optout, NoLoop: t.noloop,
		Broken: t.broken, Redirect: t.redirect, Prefixes: slices.Clone(t.prefixes)}
}

// CheckOn is Redis's error for CLIENT TRACKING ON with options o, given
// the modes t has, or "".
func (t *Tracker) CheckOn(o Options) string {
	ti := t.Info()
	switch {
	case !o.BCAST && len(o.Prefixes) > 0:
		return "ERR PREFIX option requires BCAST mode to be enabled"
	case ti.On && ti.BCAST != o.BCAST:
		return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	case o.BCAST && (o.OptIn || o.OptOut):
		return "ERR OPTIN and OPTOUT are not compatible with BCAST"
	case o.OptIn && o.OptOut:
		return "ERR You can't specify both OPTIN mode and OPTOUT mode"
	case o.OptIn && ti.OptOut || o.OptOut && ti.OptIn:
		return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	case o.BCAST:
		return t.prefixOverlap(o.Prefixes)
	}
	return ""
}

// prefixOverlap is Redis's error for BCAST prefixes that overlap with one
// another or with those t has, or "".
func (t *Tracker) prefixOverlap(prefixes [][]byte) string {
	overlap := func(a, b []byte) bool { return bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a) }
	t.mu.Lock()
	mine := slices.Clone(t.prefixes)
	t.mu.Unlock()
	for i, p := range prefixes {
		for _, m := range mine {
			if overlap([]byte(m), p) {
				return "ERR Prefix '" + string(p) + "' overlaps with an existing prefix '" + m +
					"'. Prefixes for a single client must not overlap."
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + string(p) + "' overlaps with another provided prefix '" + string(q) +
					"'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}
