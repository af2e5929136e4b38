package server

import (
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// cmdShutdown implements SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] with
// Redis 7's argument rules. With snapshots on it saves first (unless
// NOSAVE); there is no replica to wait for, so every form then stops the
// server the way SIGTERM does (a graceful drain, Options.Shutdown); as in
// Redis the client gets no reply, its connection is closed. ABORT has no
// shutdown in progress to abort: the drain, once started, is not stopped.
func cmdShutdown(c *Conn, args [][]byte) {
	var save, nosave, abort, other bool
	for _, a := range args[1:] {
		switch {
		case resp.EqualFold(a, "nosave"):
			nosave = true
		case resp.EqualFold(a, "save"):
			save = true
		case resp.EqualFold(a, "now"), resp.EqualFold(a, "force"):
			other = true
		case resp.EqualFold(a, "abort"):
			abort = true
		default:
			c.w.Error(commands.ErrSyntax)
			return
		}
	}
	if abort && (save || nosave || other) || save && nosave {
		c.w.Error(commands.ErrSyntax)
		return
	}
	if abort {
		c.w.Error("ERR No shutdown in progress.")
		return
	}
	stop := c.srv.opts.Shutdown
	if stop == nil {
		c.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	// As Redis: with snapshots on, SHUTDOWN saves (SAVE or not) unless
	// NOSAVE, and a failed save leaves the server running. The process
	// saves once more at exit only if something changed meanwhile.
	saver := c.srv.opts.Saver
	if nosave {
		saver.SkipFinalSave()
	} else if saver.Enabled() {
		saver.Wait()
		if err := saver.Save(); err != nil {
			c.srv.log.Error("SHUTDOWN: the snapshot failed; not shutting down", "err", err)
			c.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
			return
		}
	}
	c.srv.log.Warn("SHUTDOWN asked by a client; shutting down", "client", c.remote.String(), "id", c.id,
		"user", c.user.Load().Name())
	stop()
	c.quit = true
}
