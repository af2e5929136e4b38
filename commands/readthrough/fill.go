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

// Who may run LOADER.REGISTER and LOADER.UNREGISTER, which make the server
// send requests where a client says: Redis 7's convention for dangerous
// commands (enable-module-command).
const (
	LoaderCommandsNo    = "no"
	LoaderCommandsYes   = "yes"
	LoaderCommandsLocal = "local" // only connections from loopback
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

// loaderCommandAllowed applies --enable-loader-commands to this connection.
func (f *family) loaderCommandAllowed(c *commands.Ctx) bool {
	switch f.opts.LoaderCommands {
	case LoaderCommandsYes:
		return true
	case LoaderCommandsNo:
		return false
	}
	return c.Client.Local()
}

// cmdLoaderRegister implements LOADER.REGISTER prefix url [TIMEOUT ms]
// [CONCURRENCY n] [BATCH n] [HEADER name value ...].
func (f *family) cmdLoaderRegister(c *commands.Ctx, args [][]byte) {
	if !f.loaderCommandAllowed(c) {
		c.W.Error("ERR LOADER.REGISTER is not allowed from this connection; see --enable-loader-commands")
		return
	}
	if len(args[1]) == 0 {
		// Refused rather than taken as a loader for every key, which a
		// typo or an unset variable in a script would register.
		c.W.Error("ERR prefix must not be empty: a loader for every key is registered only at start, with --loader =url")
		return
	}
	cfg := loader.Config{Prefix: string(args[1]), URL: string(args[2])}
	for i := 3; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.W.Error(commands.ErrSyntax)
			return
		}
		if resp.EqualFold(args[i], "header") {
			if i+2 >= len(args) {
				c.W.Error(commands.ErrSyntax)
				return
			}
			cfg.Headers = append(cfg.Headers, loader.Header{Name: string(args[i+1]), Value: string(args[i+2])})
			i++
			continue
		}
		n, ok := resp.ParseInt(args[i+1])
		switch {
		case !resp.EqualFold(args[i], "timeout") && !resp.EqualFold(args[i], "concurrency") && !resp.EqualFold(args[i], "batch"):
			c.W.Error(commands.ErrSyntax)
			return
		case !ok || n < 0 || n > math.MaxInt32:
			c.W.Error(commands.ErrNotInteger)
			return
		case resp.EqualFold(args[i], "timeout"):
			cfg.Timeout = time.Duration(n) * time.Millisecond
		case resp.EqualFold(args[i], "batch"):
			cfg.Batch = int(n)
		default:
			cfg.Concurrency = int(n)
		}
	}
	// The loader's errors never quote a header value.
	register := func() {
		if err := f.opts.Loaders.Register(cfg); err != nil {
			c.W.Error("ERR " + err.Error())
			return
		}
		f.logLoaderChange(c, "loader registered", cfg.Prefix, cfg.URL)
		c.W.OK()
	}
	if f.opts.Loaders.Resolves(cfg.URL) {
		// Register will resolve the origin's name (--loader-allow), which
		// the event loop must not wait for.
		c.Client.Defer(register)
		return
	}
	register()
}

func (f *family) cmdLoaderUnregister(c *commands.Ctx, args [][]byte) {
	if !f.loaderCommandAllowed(c) {
		c.W.Error("ERR LOADER.UNREGISTER is not allowed from this connection; see --enable-loader-commands")
		return
	}
	ok, err := f.opts.Loaders.Unregister(string(args[1]))
	if err != nil {
		c.W.Error("ERR " + err.Error())
		return
	}
	if ok {
		f.logLoaderChange(c, "loader unregistered", string(args[1]), "")
	}
	c.W.Int(commands.BoolInt(ok))
}

// cmdLoaderList replies with an array of one map per loader (a flat array
// of names and values in RESP2). Headers are listed by name only: their
// values are secrets.
func (f *family) cmdLoaderList(c *commands.Ctx, _ [][]byte) {
	infos := f.opts.Loaders.List()
	c.W.Array(len(infos))
	for _, in := range infos {
		c.W.Map(11)
		c.W.BulkString("prefix")
		c.W.BulkString(in.Prefix)
		c.W.BulkString("url")
		c.W.BulkString(in.URL)
		c.W.BulkString("timeout_ms")
		c.W.Int(in.Timeout.Milliseconds())
		c.W.BulkString("batch")
		c.W.Int(int64(in.Batch))
		c.W.BulkString("headers")
		c.W.Array(len(in.HeaderNames))
		for _, name := range in.HeaderNames {
			c.W.BulkString(name)
		}
		c.W.BulkString("source")
		c.W.BulkString(in.Source)
		c.W.BulkString("version")
		c.W.Int(int64(in.Version))
		c.W.BulkString("in_flight")
		c.W.Int(in.InFlight)
		c.W.BulkString("fills")
		c.W.BulkString(strconv.FormatUint(in.Fills, 10))
		c.W.BulkString("failures")
		c.W.BulkString(strconv.FormatUint(in.Failures, 10))
		c.W.BulkString("batches")
		c.W.BulkString(strconv.FormatUint(in.Batches, 10))
	}
}

// cmdFillInfo implements FILL.INFO key: a map (a flat array in RESP2) of
// the key's state (fresh, stale, missing, loading, cooldown), milliseconds
// to its fresh and stale deadlines (-1: none), its loader, whether a
// load is in flight (1 or 0 in both protocols, like Redis's own
// introspection fields), and the origin's tags of its value.
func (f *family) cmdFillInfo(c *commands.Ctx, args [][]byte) {
	in := f.filler(c).Info(string(args[1]))
	ms := func(d time.Duration) int64 {
		if d < 0 {
			return -1
		}
		return d.Milliseconds()
	}
	c.W.Map(6)
	c.W.BulkString("state")
	c.W.BulkString(in.State)
	c.W.BulkString("fresh_ms")
	c.W.Int(ms(in.FreshIn))
	c.W.BulkString("stale_ms")
	c.W.Int(ms(in.StaleIn))
	c.W.BulkString("loader")
	c.W.BulkString(in.Loader)
	c.W.BulkString("in_flight")
	c.W.Int(commands.BoolInt(in.InFlight))
	c.W.BulkString("tags")
	c.W.Array(len(in.Tags))
	for _, t := range in.Tags {
		c.W.BulkString(t)
	}
}
