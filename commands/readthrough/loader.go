package readthrough

import (
	"math"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/loader"
	"github.com/stampedeless/stampedeless/resp"
)

// Who may run LOADER.REGISTER and LOADER.UNREGISTER, which make the server
// send requests where a client says: Redis 7's convention for dangerous
// commands (enable-module-command).
const (
	LoaderCommandsNo    = "no"
	LoaderCommandsYes   = "yes"
	LoaderCommandsLocal = "local" // only connections from loopback
)

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
