package board

import (
	"context"
	"io"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/radar"
)

// TopOptions configure Top.
type TopOptions struct {
	Client   redis.UniversalClient
	Addr     string // names the server on the screen
	Window   radar.Window
	Interval time.Duration // between screens; if zero, a second
	Once     bool          // one screen, no clearing: for scripts
	Out      io.Writer
	Now      func() time.Time // the screen's time; if nil, time.Now
}

// clearScreen moves the cursor home and clears the terminal (ANSI).
const clearScreen = "\x1b[H\x1b[2J"

// Top is `stampedeless top`: a screen of the server's radar every
// Interval, over the last, until ctx ends (nil then) or the server fails
// to answer; with Once, one screen.
func Top(ctx context.Context, o TopOptions) error {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		b, err := Remote(ctx, o.Client, o.Window)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !o.Once {
			io.WriteString(o.Out, clearScreen)
		}
		if err := WriteText(o.Out, b, o.Addr, o.Now()); err != nil || o.Once {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
