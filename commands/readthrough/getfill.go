package readthrough

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/swr"
)

// cmdGetFill implements GETFILL key ttl grace [TIMEOUT ms] [EARLY beta].
func (f *family) cmdGetFill(c *commands.Ctx, args [][]byte) {
	ttl, grace, ok := parseTTLGrace(c, args[2], args[3], "getfill")
	if !ok {
		return
	}
	req := swr.Request{TTL: ttl, Grace: grace, Timeout: -1}
	if len(args) > 4 {
		if req.Timeout, req.Early, ok = getFillOptions(c, args[4:]); !ok {
			return
		}
	}
	// Inside EXEC nothing may wait: the answer is the store's, or
	// -TIMEOUT while the load starts (TIMEOUT 0).
	req.InSection = c.Client.InSection()
	// A fresh hit is written where it lies; the rest needs the request.
	if f.filler(c).ServeFresh(req, args[1], c.W.Bulk) {
		return
	}
	req.Key = string(args[1])
	ans, pending, err := f.filler(c).Start(req)
	if pending != nil && req.InSection {
		ans, err = pending.Wait(context.Background())
		pending = nil
	}
	if pending == nil {
		writeFillAnswer(c, req.Key, ans, err)
		return
	}
	c.Client.Await(func(ctx context.Context) func() {
		ans, err := pending.Wait(ctx)
		return func() { writeFillAnswer(c, req.Key, ans, err) }
	})
}

// getFillOptions parses GETFILL's options TIMEOUT (-1 when not given) and
// EARLY, or answers the error. It is apart from cmdGetFill, and returns
// values, so that a GETFILL without options makes neither the closure nor
// a request on the heap.
func getFillOptions(c *commands.Ctx, opts [][]byte) (timeout time.Duration, early float64, ok bool) {
	timeout = -1
	ok = eachOption(c, opts, func(name, value []byte) (known, ok bool) {
		switch {
		case resp.EqualFold(name, "timeout"):
			timeout, ok = parseMillis(c, value, "TIMEOUT", "getfill")
			return true, ok
		case resp.EqualFold(name, "early"):
			beta, err := strconv.ParseFloat(string(value), 64)
			// !(beta >= 0) also refuses NaN, as Redis refuses it for a float.
			if err != nil || !(beta >= 0) || math.IsInf(beta, 0) {
				c.W.Error("ERR invalid EARLY in 'getfill' command")
				return true, false
			}
			early = beta
			if beta == 0 {
				early = -1 // EARLY 0: off for this read, whatever --early-refresh says
			}
			return true, true
		}
		return false, false
	})
	return timeout, early, ok
}

// cmdMGetFill implements MGETFILL ttl grace [TIMEOUT ms] key [key ...]:
// GETFILL of each key, answered with an array in key order. An element is
// the value, nil (the origin says the key does not exist), or the error
// GETFILL would have answered for that key alone (-LOADERR, -TIMEOUT,
// -NOLOADER), as an error element, as EXEC's array carries its commands'
// errors. TIMEOUT is an option only when a key follows its value: a first
// key named TIMEOUT is given after "TIMEOUT ms".
func (f *family) cmdMGetFill(c *commands.Ctx, args [][]byte) {
	ttl, grace, ok := parseTTLGrace(c, args[1], args[2], "mgetfill")
	if !ok {
		return
	}
	timeout, keys := time.Duration(-1), mgetfillKeys(args)
	if len(keys) < len(args)-3 { // TIMEOUT ms came before the keys
		if timeout, ok = parseMillis(c, args[4], "TIMEOUT", "mgetfill"); !ok {
			return
		}
	}
	reqs := make([]swr.Request, len(keys))
	for i, k := range keys {
		// Inside EXEC nothing may wait, as for GETFILL.
		reqs[i] = swr.Request{Key: string(k), TTL: ttl, Grace: grace, Timeout: timeout, InSection: c.Client.InSection()}
	}
	answers, pending := f.filler(c).StartMany(reqs)
	if pending != nil && c.Client.InSection() {
		answers, pending = pending.Wait(context.Background()), nil
	}
	if pending == nil {
		writeFillAnswers(c, reqs, answers)
		return
	}
	c.Client.Await(func(ctx context.Context) func() {
		answers := pending.Wait(ctx)
		return func() { writeFillAnswers(c, reqs, answers) }
	})
}

// mgetfillKeys finds MGETFILL's keys: those after ttl, grace and TIMEOUT
// ms, if given. It is the handler's parser, and the key positions of the
// ACL, tracking and the shared tier: "MGETFILL 60 30 TIMEOUT 100 k" names
// one key, k.
func mgetfillKeys(args [][]byte) [][]byte {
	if len(args) < 4 {
		return nil
	}
	if resp.EqualFold(args[3], "timeout") && len(args) >= 6 {
		return args[5:]
	}
	return args[3:]
}

// writeFillAnswers writes MGETFILL's reply: one GETFILL reply per key, in
// an array.
func writeFillAnswers(c *commands.Ctx, reqs []swr.Request, answers []swr.KeyAnswer) {
	c.W.Array(len(answers))
	for i, a := range answers {
		writeFillAnswer(c, reqs[i].Key, a.Answer, a.Err)
	}
}

// parseTTLGrace parses a read-through command's ttl and grace, in seconds
// (ttl > 0, grace ≥ 0), or answers the error, which names the argument and
// its rule. Their deadlines are bounded as SET ... EX's: one past what the
// engine's clock holds (2262) gets Redis's invalid expire time.
func parseTTLGrace(c *commands.Ctx, ttlArg, graceArg []byte, name string) (ttl, grace time.Duration, ok bool) {
	t, ok := resp.ParseInt(ttlArg)
	if !ok || t <= 0 {
		c.W.Error("ERR ttl must be a positive integer number of seconds")
		return 0, 0, false
	}
	g, ok := resp.ParseInt(graceArg)
	if !ok || g < 0 {
		c.W.Error("ERR grace must be 0 or a positive integer number of seconds")
		return 0, 0, false
	}
	// The stale deadline, ttl + grace from now, must fit; each term is
	// checked first so that the sum cannot overflow. Under a century
	// together they fit until 2162, so the clock is read (the store's)
	// only for longer ones: a GETFILL hit reads it often enough already.
	const century = 100 * 365 * 24 * 3600
	if t <= century && g <= century && t+g <= century {
		return time.Duration(t) * time.Second, time.Duration(g) * time.Second, true
	}
	left := (engine.MaxDeadlineMillis - c.Store.Now().UnixMilli()) / 1000
	if t > left || g > left || t+g > left {
		c.W.Error("ERR invalid expire time in '" + name + "' command")
		return 0, 0, false
	}
	return time.Duration(t) * time.Second, time.Duration(g) * time.Second, true
}

// eachOption hands each "NAME value" pair of args to set, which reports
// whether it knows the name and whether the value is good (it answers a
// bad one's error itself). A name without a value or an unknown name is a
// syntax error. It reports whether every option was good.
func eachOption(c *commands.Ctx, args [][]byte, set func(name, value []byte) (known, ok bool)) bool {
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.W.Error(commands.ErrSyntax)
			return false
		}
		known, ok := set(args[i], args[i+1])
		if !known {
			c.W.Error(commands.ErrSyntax)
			return false
		}
		if !ok {
			return false
		}
	}
	return true
}

// parseMillis parses the milliseconds (≥ 0) of option opt of command name,
// or answers the error.
func parseMillis(c *commands.Ctx, arg []byte, opt, name string) (time.Duration, bool) {
	ms, ok := resp.ParseInt(arg)
	if !ok || ms < 0 || ms > engine.MaxDeadlineMillis {
		c.W.Error("ERR invalid " + opt + " in '" + name + "' command")
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// writeFillAnswer writes GETFILL's reply.
func writeFillAnswer(c *commands.Ctx, key string, ans swr.Answer, err error) {
	switch {
	case writeFillError(c, key, err):
	case !ans.Found:
		c.W.Null()
	default:
		c.W.Bulk(ans.Value)
	}
}

// writeFillError writes the reply of a read-through error, if err is one,
// and reports whether it did.
func writeFillError(c *commands.Ctx, key string, err error) bool {
	if err == nil {
		return false
	}
	writeFillErrorReply(c, key, err)
	return true
}

// writeFillErrorReply writes the reply of read-through error err. It is a
// function of its own so that a hit (no error) never makes the targets of
// errors.As, which escape to the heap.
func writeFillErrorReply(c *commands.Ctx, key string, err error) {
	var oe *loader.OriginError
	var te *swr.TimeoutError
	var lost *swr.LeaseLostError
	var cooling *swr.CooldownError
	switch {
	case errors.Is(err, swr.ErrNoLoader):
		c.W.Error("NOLOADER no loader registered for key '" + string(commands.Truncate([]byte(key), 128)) + "'")
	case errors.As(err, &te):
		c.W.Error("TIMEOUT gave up waiting for the load after " + te.After.String())
	case errors.As(err, &lost):
		c.W.Error("LEASELOST " + lost.Reason)
	case errors.Is(err, engine.ErrTooLarge), errors.Is(err, engine.ErrWrongType):
		// The store's own errors answer as every command answers them.
		commands.WriteError(c.W, err)
	case errors.As(err, &cooling) && errors.As(err, &oe):
		c.W.Error("LOADERR " + loaderLabel(oe.Loader) + "cooling down for " + roughly(cooling.Left) + " after: " + oe.Reason)
	case errors.As(err, &oe):
		c.W.Error("LOADERR " + loaderLabel(oe.Loader) + oe.Reason)
	default:
		c.W.Error("LOADERR " + err.Error())
	}
}

// loaderLabel is how a -LOADERR reply names a loader: its prefix and a
// colon, which a prefix such as "user:" already ends with.
func loaderLabel(prefix string) string {
	if strings.HasSuffix(prefix, ":") {
		return prefix + " "
	}
	return prefix + ": "
}

// roughly writes a cooldown's time left to a tenth of a second (4.2s).
func roughly(d time.Duration) string {
	if d < 100*time.Millisecond {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
