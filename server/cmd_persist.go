package server

import (
	"errors"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/persist"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdSave(c *Conn, _ [][]byte) {
	switch err := c.srv.opts.Saver.Save(); {
	case err == nil:
		c.w.OK()
	case errors.Is(err, persist.ErrInProgress), errors.Is(err, persist.ErrOff):
		c.w.Error("ERR " + err.Error())
	default:
		c.w.Error("ERR") // Redis's reply; the log says why
	}
}

// cmdBGSave implements BGSAVE [SCHEDULE].
func cmdBGSave(c *Conn, args [][]byte) {
	schedule := false
	if len(args) > 1 {
		if len(args) > 2 || !resp.EqualFold(args[1], "schedule") {
			c.w.Error(commands.ErrSyntax)
			return
		}
		schedule = true
	}
	scheduled, err := c.srv.opts.Saver.Background(schedule)
	switch {
	case err != nil:
		c.w.Error("ERR " + err.Error())
	case scheduled:
		c.w.Status("Background saving scheduled")
	default:
		c.w.Status("Background saving started")
	}
}

func cmdLastSave(c *Conn, _ [][]byte) {
	c.w.Int(c.srv.opts.Saver.LastSave().Unix())
}
