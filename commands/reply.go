package commands

import (
	"bytes"

	"github.com/stampedeless/stampedeless/resp"
)

// WriteHelp replies with a subcommand help text in Redis's layout.
func WriteHelp(w *resp.Writer, name string, lines ...string) {
	w.Array(len(lines) + 3)
	w.Status(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		w.Status(l)
	}
	w.Status("HELP")
	w.Status("    Print this help.")
}

// BoolInt is b as Redis's integer reply: 1 or 0.
func BoolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// CountArg parses a count option's value (SCAN's COUNT, MEMORY USAGE's
// SAMPLES): an integer, else Redis's integer error, of at least least,
// else a syntax error, as Redis replies. It replies the error itself.
func CountArg(w *resp.Writer, b []byte, least int64) (int64, bool) {
	n, ok := resp.ParseInt(b)
	switch {
	case !ok:
		w.Error(ErrNotInteger)
	case n < least:
		w.Error(ErrSyntax)
	default:
		return n, true
	}
	return 0, false
}

// Truncate returns b cut to quote it in an error text as Redis's "%.128s"
// does: at n bytes, and at its first NUL, where a C string ends.
func Truncate(b []byte, n int) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) > n {
		return b[:n]
	}
	return b
}
