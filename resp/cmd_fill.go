package resp

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
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
func cmdGetFill(c *Conn, args [][]byte) {
	ttl, grace, ok := parseTTLGrace(c, args, "getfill")
	if !ok {
		return
	}
	req := swr.Request{Key: string(args[1]), TTL: ttl, Grace: grace, Timeout: -1}
	ok = eachOption(c, args[4:], func(name, value []byte) (known, ok bool) {
		switch {
		case equalFold(name, "timeout"):
			req.Timeout, ok = parseMillis(c, value, "TIMEOUT", "getfill")
			return true, ok
		case equalFold(name, "early"):
			beta, err := strconv.ParseFloat(string(value), 64)
			// !(beta >= 0) also refuses NaN, as Redis refuses it for a float.
			if err != nil || !(beta >= 0) || math.IsInf(beta, 0) {
				c.w.Error("ERR invalid EARLY in 'getfill' command")
				return true, false
			}
			req.Early = beta
			if beta == 0 {
				req.Early = -1 // EARLY 0: off for this read, whatever --early-refresh says
			}
			return true, true
		}
		return false, false
	})
	if !ok {
		return
	}
	// Inside EXEC nothing may wait: the answer is the store's, or
	// -TIMEOUT while the load starts (TIMEOUT 0).
	req.InSection = c.tx.running
	ans, pending, err := c.srv.opts.Filler.Start(req)
	if pending != nil && req.InSection {
		ans, err = pending.Wait(context.Background())
		pending = nil
	}
	if pending == nil {
		writeFillAnswer(c, req.Key, ans, err)
		return
	}
	c.await(func(ctx context.Context) func() {
		ans, err := pending.Wait(ctx)
		return func() { writeFillAnswer(c, req.Key, ans, err) }
	})
}

// parseTTLGrace parses a read-through command's ttl and grace, in seconds
// (ttl > 0, grace ≥ 0), or answers the error.
func parseTTLGrace(c *Conn, args [][]byte, name string) (ttl, grace time.Duration, ok bool) {
	t, ok1 := parseInteger(args[2])
	g, ok2 := parseInteger(args[3])
	if !ok1 || !ok2 || t <= 0 || g < 0 || t > maxDeadlineMillis/1000 || g > maxDeadlineMillis/1000 {
		c.w.Error("ERR invalid ttl or grace in '" + name + "' command")
		return 0, 0, false
	}
	return time.Duration(t) * time.Second, time.Duration(g) * time.Second, true
}

// eachOption hands each "NAME value" pair of args to set, which reports
// whether it knows the name and whether the value is good (it answers a
// bad one's error itself). A name without a value or an unknown name is a
// syntax error. It reports whether every option was good.
func eachOption(c *Conn, args [][]byte, set func(name, value []byte) (known, ok bool)) bool {
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.w.Error(errSyntax)
			return false
		}
		known, ok := set(args[i], args[i+1])
		if !known {
			c.w.Error(errSyntax)
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
func parseMillis(c *Conn, arg []byte, opt, name string) (time.Duration, bool) {
	ms, ok := parseInteger(arg)
	if !ok || ms < 0 || ms > maxDeadlineMillis {
		c.w.Error("ERR invalid " + opt + " in '" + name + "' command")
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// await runs wait, which waits for a load, where the connection may wait:
// on its goroutine, or on one the event loop hands it to, since the loop
// must not wait. While it waits, a client that closes its connection
// cancels wait's ctx. The reply wait returns is written once the watch
// has ended.
func (c *Conn) await(wait func(ctx context.Context) (reply func())) {
	run := func() {
		ctx, stop := c.watchDisconnect()
		reply := wait(ctx)
		stop()
		reply()
	}
	// The wait happens after the handler, outside the atomic section the
	// handler runs in: the connection's goroutine finishes the command (on
	// the event loop, once the loop has handed it the connection).
	c.ev.resume = run
}

// writeFillAnswer writes GETFILL's reply.
func writeFillAnswer(c *Conn, key string, ans swr.Answer, err error) {
	switch {
	case writeFillError(c, key, err):
	case !ans.Found:
		c.w.Null()
	default:
		c.w.Bulk(ans.Value)
	}
}

// writeFillError writes the reply of a read-through error, if err is one,
// and reports whether it did.
func writeFillError(c *Conn, key string, err error) bool {
	var oe *loader.OriginError
	var te *swr.TimeoutError
	var lost *swr.LeaseLostError
	switch {
	case err == nil:
		return false
	case errors.Is(err, swr.ErrNoLoader):
		c.w.Error("NOLOADER no loader registered for key '" + string(truncate([]byte(key), 128)) + "'")
	case errors.As(err, &te):
		c.w.Error("TIMEOUT gave up waiting for the load after " + te.After.String())
	case errors.As(err, &lost):
		c.w.Error("LEASELOST " + lost.Reason)
	case errors.Is(err, engine.ErrTooLarge):
		c.w.Error(errOOM)
	case errors.As(err, &oe):
		c.w.Error("LOADERR " + oe.Loader + ": " + oe.Reason)
	default:
		c.w.Error("LOADERR " + err.Error())
	}
	return true
}

// loaderCommandAllowed applies --enable-loader-commands to this connection.
func (c *Conn) loaderCommandAllowed() bool {
	switch c.srv.opts.LoaderCommands {
	case LoaderCommandsYes:
		return true
	case LoaderCommandsNo:
		return false
	}
	return isLocal(c.remote)
}

// cmdLoaderRegister implements LOADER.REGISTER prefix url [TIMEOUT ms]
// [CONCURRENCY n] [HEADER name value ...].
func cmdLoaderRegister(c *Conn, args [][]byte) {
	if !c.loaderCommandAllowed() {
		c.w.Error("ERR LOADER.REGISTER is not allowed from this connection; see --enable-loader-commands")
		return
	}
	cfg := loader.Config{Prefix: string(args[1]), URL: string(args[2])}
	for i := 3; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.w.Error(errSyntax)
			return
		}
		if equalFold(args[i], "header") {
			if i+2 >= len(args) {
				c.w.Error(errSyntax)
				return
			}
			cfg.Headers = append(cfg.Headers, loader.Header{Name: string(args[i+1]), Value: string(args[i+2])})
			i++
			continue
		}
		n, ok := parseInteger(args[i+1])
		switch {
		case !equalFold(args[i], "timeout") && !equalFold(args[i], "concurrency"):
			c.w.Error(errSyntax)
			return
		case !ok || n < 0:
			c.w.Error(errNotInteger)
			return
		case equalFold(args[i], "timeout"):
			cfg.Timeout = time.Duration(n) * time.Millisecond
		default:
			cfg.Concurrency = int(n)
		}
	}
	// The loader's errors never quote a header value.
	register := func() {
		if err := c.srv.opts.Loaders.Register(cfg); err != nil {
			c.w.Error("ERR " + err.Error())
			return
		}
		c.w.OK()
	}
	if c.ev.looped && c.srv.opts.Loaders.Resolves(cfg.URL) {
		// Register will resolve the origin's name (--loader-allow), which
		// the event loop must not wait for.
		c.ev.resume = register
		return
	}
	register()
}

func cmdLoaderUnregister(c *Conn, args [][]byte) {
	if !c.loaderCommandAllowed() {
		c.w.Error("ERR LOADER.UNREGISTER is not allowed from this connection; see --enable-loader-commands")
		return
	}
	ok, err := c.srv.opts.Loaders.Unregister(string(args[1]))
	if err != nil {
		c.w.Error("ERR " + err.Error())
		return
	}
	c.w.Int(boolInt(ok))
}

// cmdLoaderList replies with an array of one map per loader (a flat array
// of names and values in RESP2). Headers are listed by name only: their
// values are secrets.
func cmdLoaderList(c *Conn, _ [][]byte) {
	infos := c.srv.opts.Loaders.List()
	c.w.Array(len(infos))
	for _, in := range infos {
		c.w.Map(9)
		c.w.BulkString("prefix")
		c.w.BulkString(in.Prefix)
		c.w.BulkString("url")
		c.w.BulkString(in.URL)
		c.w.BulkString("timeout_ms")
		c.w.Int(in.Timeout.Milliseconds())
		c.w.BulkString("headers")
		c.w.Array(len(in.HeaderNames))
		for _, name := range in.HeaderNames {
			c.w.BulkString(name)
		}
		c.w.BulkString("source")
		c.w.BulkString(in.Source)
		c.w.BulkString("version")
		c.w.Int(int64(in.Version))
		c.w.BulkString("in_flight")
		c.w.Int(in.InFlight)
		c.w.BulkString("fills")
		c.w.BulkString(strconv.FormatUint(in.Fills, 10))
		c.w.BulkString("failures")
		c.w.BulkString(strconv.FormatUint(in.Failures, 10))
	}
}

// cmdFillInfo implements FILL.INFO key: a map (a flat array in RESP2) of
// the key's state (fresh, stale, missing, loading, cooldown), milliseconds
// to its fresh and stale deadlines (-1: none), its loader, and whether a
// load is in flight (1 or 0 in both protocols, like Redis's own
// introspection fields).
func cmdFillInfo(c *Conn, args [][]byte) {
	in := c.srv.opts.Filler.Info(string(args[1]))
	ms := func(d time.Duration) int64 {
		if d < 0 {
			return -1
		}
		return d.Milliseconds()
	}
	c.w.Map(5)
	c.w.BulkString("state")
	c.w.BulkString(in.State)
	c.w.BulkString("fresh_ms")
	c.w.Int(ms(in.FreshIn))
	c.w.BulkString("stale_ms")
	c.w.Int(ms(in.StaleIn))
	c.w.BulkString("loader")
	c.w.BulkString(in.Loader)
	c.w.BulkString("in_flight")
	c.w.Int(boolInt(in.InFlight))
}
