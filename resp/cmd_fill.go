package resp

import (
	"errors"
	"strconv"
	"time"

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

// cmdGetFill implements GETFILL key ttl grace [TIMEOUT ms].
func cmdGetFill(c *Conn, args [][]byte) {
	ttl, ok1 := parseInteger(args[2])
	grace, ok2 := parseInteger(args[3])
	if !ok1 || !ok2 || ttl <= 0 || grace < 0 || ttl > maxDeadlineMillis/1000 || grace > maxDeadlineMillis/1000 {
		c.w.Error("ERR invalid ttl or grace in 'getfill' command")
		return
	}
	req := swr.Request{Key: string(args[1]), TTL: time.Duration(ttl) * time.Second,
		Grace: time.Duration(grace) * time.Second, Timeout: -1}
	switch {
	case len(args) == 4:
	case len(args) == 6 && equalFold(args[4], "timeout"):
		ms, ok := parseInteger(args[5])
		if !ok || ms < 0 {
			c.w.Error("ERR invalid TIMEOUT in 'getfill' command")
			return
		}
		req.Timeout = time.Duration(ms) * time.Millisecond
	default:
		c.w.Error(errSyntax)
		return
	}
	ans, pending, err := c.srv.opts.Filler.Start(req)
	if pending == nil {
		writeFillAnswer(c, req.Key, ans, err)
		return
	}
	wait := func() {
		ctx, stop := c.watchDisconnect()
		ans, err := pending.Wait(ctx)
		stop()
		writeFillAnswer(c, req.Key, ans, err)
	}
	if c.ev.looped {
		// The event loop must not wait: it hands the connection to a
		// goroutine, which waits and answers.
		c.ev.resume = wait
		return
	}
	wait()
}

// writeFillAnswer writes GETFILL's reply.
func writeFillAnswer(c *Conn, key string, ans swr.Answer, err error) {
	var oe *loader.OriginError
	var te *swr.TimeoutError
	switch {
	case errors.Is(err, swr.ErrNoLoader):
		c.w.Error("NOLOADER no loader registered for key '" + string(truncate([]byte(key), 128)) + "'")
	case errors.As(err, &te):
		c.w.Error("TIMEOUT gave up waiting for the load after " + te.After.String())
	case errors.As(err, &oe):
		c.w.Error("LOADERR " + oe.Loader + ": " + oe.Reason)
	case err != nil:
		c.w.Error("LOADERR " + err.Error())
	case !ans.Found:
		c.w.Null()
	default:
		c.w.Bulk(ans.Value)
	}
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

// cmdLoaderRegister implements LOADER.REGISTER prefix url [TIMEOUT ms] [CONCURRENCY n].
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
		n, ok := parseInteger(args[i+1])
		switch {
		case !ok || n < 0:
			c.w.Error(errNotInteger)
			return
		case equalFold(args[i], "timeout"):
			cfg.Timeout = time.Duration(n) * time.Millisecond
		case equalFold(args[i], "concurrency"):
			cfg.Concurrency = int(n)
		default:
			c.w.Error(errSyntax)
			return
		}
	}
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
	c.w.Int(boolInt(c.srv.opts.Loaders.Unregister(string(args[1]))))
}

// cmdLoaderList replies with one flat map per loader.
func cmdLoaderList(c *Conn, _ [][]byte) {
	infos := c.srv.opts.Loaders.List()
	c.w.Array(len(infos))
	for _, in := range infos {
		c.w.Array(12)
		c.w.BulkString("prefix")
		c.w.BulkString(in.Prefix)
		c.w.BulkString("url")
		c.w.BulkString(in.URL)
		c.w.BulkString("timeout_ms")
		c.w.Int(in.Timeout.Milliseconds())
		c.w.BulkString("in_flight")
		c.w.Int(in.InFlight)
		c.w.BulkString("fills")
		c.w.BulkString(strconv.FormatUint(in.Fills, 10))
		c.w.BulkString("failures")
		c.w.BulkString(strconv.FormatUint(in.Failures, 10))
	}
}

// cmdFillInfo implements FILL.INFO key: a flat map of the key's state
// (fresh, stale, missing, loading, cooldown), milliseconds to its fresh and
// stale deadlines (-1: none), its loader, and whether a load is in flight.
func cmdFillInfo(c *Conn, args [][]byte) {
	in := c.srv.opts.Filler.Info(string(args[1]))
	ms := func(d time.Duration) int64 {
		if d < 0 {
			return -1
		}
		return d.Milliseconds()
	}
	c.w.Array(10)
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
