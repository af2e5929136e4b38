package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/stampedeless/stampedeless/radar"
	"github.com/stampedeless/stampedeless/radar/board"
)

// topCommand is `stampedeless top`, the stampede radar in a terminal
// (radar/board draws it) against any server: its FILL.RADAR and FILL.TOP.
func topCommand() *cli.Command {
	return &cli.Command{
		Name:  "top",
		Usage: "watch a server's stampede radar: its hottest keys, its loaders' health, reads against origin calls",
		Description: "Every --interval, shows the keys with the most origin calls, coalesced waiters, stale answers,\n" +
			"failures and load time over --window (FILL.TOP; only the keys the user may read), each loader's calls\n" +
			"in flight, errors, cooldowns and p50/p99 load time, and reads against origin calls per second\n" +
			"(FILL.RADAR). With --redis, each replica shows its own view, named on the screen. Ctrl-C stops it;\n" +
			"--once prints one screen, for scripts.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: defaultAddr, Usage: "server to watch (host:port)"},
			&cli.StringFlag{Name: "username", Usage: "user to AUTH as (empty: the default user)"},
			&cli.StringFlag{Name: "password", EnvVars: []string{"REDISCLI_AUTH"}, Usage: "password to AUTH with"},
			&cli.StringFlag{Name: "window", Value: "1m", Usage: "1m or 10m"},
			&cli.DurationFlag{Name: "interval", Value: time.Second, Usage: "time between screens"},
			&cli.BoolFlag{Name: "once", Usage: "print one screen and exit"},
		},
		Action: noArgs(func(c *cli.Context) error {
			w, ok := radar.ParseWindow(c.String("window"))
			if !ok {
				return cli.Exit("top: --window must be 1m or 10m", 2)
			}
			redis.SetLogger(quiet{})
			addr := dialable(c.String("addr"))
			rdb := redis.NewClient(&redis.Options{Addr: addr, Username: c.String("username"),
				Password: c.String("password"), DisableIdentity: true, MaxRetries: -1})
			defer rdb.Close()
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			err := board.Top(ctx, board.TopOptions{Client: rdb, Addr: addr, Window: w, Interval: c.Duration("interval"),
				Once: c.Bool("once"), Out: c.App.Writer})
			if err != nil {
				return cli.Exit("top: "+err.Error(), 1)
			}
			return nil
		}, false),
	}
}
