package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"
)

// usageError is a command line the CLI cannot run: an unknown subcommand
// or flag, or arguments a command does not take. main exits with status 2
// for it, as a shell builtin does for a usage error, and 1 for a failure.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// isUsageError reports whether err should end the process with status 2.
func isUsageError(err error) bool {
	var u *usageError
	return errors.As(err, &u)
}

// onUsageError turns urfave/cli's flag errors into a usageError with a
// suggestion. cli's own Suggest prints "Did you mean" to stdout, above the
// whole help text, and suggests the nearest name however far; this names
// only a near one, on the one line of the error.
func onUsageError(c *cli.Context, err error, _ bool) error {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, undefined)
	if !ok {
		return &usageError{msg}
	}
	name = strings.TrimLeft(name, "-")
	if hint := redisFlagHint(name, valueAfter(os.Args, name)); hint != "" {
		dashes := "--"
		if len(name) == 1 {
			dashes = "-" // as typed: -p is redis-cli's, not a long flag mistyped
		}
		return &usageError{"unknown flag " + dashes + name + "; " + hint}
	}
	flags := c.App.Flags // the root's
	if c.Command != nil && len(c.Command.Flags) > 0 {
		flags = c.Command.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	msg = "unknown flag --" + name
	if s := nearest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean '--%s'?", s)
	}
	return &usageError{msg}
}

// redisFlagHint answers the flags a redis-server or redis-cli user types
// first with the exact replacement, where edit distance would suggest
// something unrelated (-p is nearest to -h). value is the argument after
// the flag, when the flag parser kept it.
func redisFlagHint(name, value string) string {
	switch name {
	case "port", "p":
		port := "<port>"
		if _, err := strconv.ParseUint(value, 10, 16); err == nil {
			port = value
		}
		host, _, _ := net.SplitHostPort(defaultAddr)
		return fmt.Sprintf("stampedeless listens where --addr says: use --addr %s", net.JoinHostPort(host, port))
	case "version", "v":
		return "use 'stampedeless --version' or 'stampedeless version'"
	}
	return ""
}

// valueAfter is the argument after the flag name in args, which the flag
// parser does not keep once it has refused the flag; "" if none.
func valueAfter(args []string, name string) string {
	for i, arg := range args {
		a := strings.TrimLeft(arg, "-")
		if a == arg {
			continue // a value, not a flag
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// noArgs wraps the action of a command that takes no positional
// arguments so that it refuses them. For the root command (root), whose
// first argument can only be a mistyped subcommand (and the flags after it
// are not read), the error suggests the subcommand.
func noArgs(action cli.ActionFunc, root bool) cli.ActionFunc {
	return func(c *cli.Context) error {
		if !c.Args().Present() {
			return action(c)
		}
		arg := c.Args().First()
		if !root {
			return &usageError{fmt.Sprintf("%s takes no arguments, got '%s'", c.Command.Name, arg)}
		}
		var names []string
		for _, cmd := range c.App.Commands {
			names = append(names, cmd.Names()...)
		}
		msg := fmt.Sprintf("unknown command '%s'", arg)
		if s := nearest(arg, names); s != "" {
			msg += fmt.Sprintf("; did you mean '%s'?", s)
		}
		return &usageError{msg + " (stampedeless --help lists the commands)"}
	}
}

// nearest returns the candidate closest to s by edit distance, if it is
// near enough to be a typo of it (at most a third of its length, at least
// one edit), else "".
func nearest(s string, candidates []string) string {
	best, bestDist := "", max(len(s)/3, 1)+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// listenFlag listens on addr, given by flag; an address in use is an
// *inUseError, which names the flag that picks another, since a second
// instance on one machine is the usual cause.
func listenFlag(flag, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &inUseError{flag, addr, err}
	}
	return ln, err
}

// inUseError is a listen address another process holds.
type inUseError struct {
	flag, addr string
	err        error
}

func (e *inUseError) Error() string {
	hint := fmt.Sprintf("use --%s to pick another", e.flag)
	if e.flag == "metrics-addr" {
		hint += ", or --metrics-addr '' for no metrics"
	}
	return fmt.Sprintf("--%s %s is in use: %v (%s)", e.flag, e.addr, e.err, hint)
}

func (e *inUseError) Unwrap() error { return e.err }

// alsoInUse is err, from opening the Redis listeners, naming the metrics
// address too when it is in use as well: a second server started with the
// first one's defaults collides on both, and a user who picks another --addr
// should not meet the next collision only on the next start.
func alsoInUse(err error, metricsAddr string) error {
	var first *inUseError
	if !errors.As(err, &first) || metricsAddr == "" {
		return err
	}
	ln, merr := listenFlag("metrics-addr", metricsAddr)
	if merr == nil {
		ln.Close()
		return err
	}
	var second *inUseError
	if !errors.As(merr, &second) {
		return err
	}
	return fmt.Errorf("--%s %s and --metrics-addr %s are in use (another stampedeless running?): "+
		"pick others with --%s and --metrics-addr, or --metrics-addr '' for no metrics", first.flag, first.addr, metricsAddr, first.flag)
}
