package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"
)

// pingCommand is `stampedeless ping`, the container healthcheck: the image
// has no shell and no redis-cli, so the binary checks itself. It exits 0
// when the server answers PING with PONG (or, given an http:// URL, when
// the URL answers 2xx, for the demo origin), and 1 otherwise.
func pingCommand() *cli.Command {
	return &cli.Command{
		Name:      "ping",
		Usage:     "check that a server answers PING (exit 0) or not (exit 1): for healthchecks",
		ArgsUsage: "[http://host:port/path]",
		Description: "With no argument, sends PING to --addr (the server's own STAMPEDELESS_ADDR, with\n" +
			"0.0.0.0 meaning this host) and AUTHs with STAMPEDELESS_REQUIREPASS if set (as --username,\n" +
			"STAMPEDELESS_PING_USERNAME, if set).\n" +
			"With an http:// or https:// URL, GETs it and wants a 2xx status.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: defaultAddr, EnvVars: env("addr"),
				Usage: "server to PING"},
			&cli.StringFlag{Name: "username", EnvVars: env("ping-username"),
				Usage: "user to AUTH as (empty: the default user)"},
			&cli.StringFlag{Name: "password", EnvVars: env("requirepass"),
				Usage: "password to AUTH with"},
			&cli.DurationFlag{Name: "timeout", Value: 3 * time.Second,
				Usage: "give up after this long"},
		},
		Action: func(c *cli.Context) error {
			ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
			defer cancel()
			var err error
			if url := c.Args().First(); url != "" {
				err = pingHTTP(ctx, url)
			} else {
				err = pingRedis(ctx, dialable(c.String("addr")), c.String("username"), c.String("password"))
			}
			if err != nil {
				return cli.Exit("ping: "+err.Error(), 1)
			}
			fmt.Fprintln(c.App.Writer, "PONG")
			return nil
		},
	}
}

// dialable turns a listening address into one to dial: a wildcard or empty
// host (0.0.0.0:6380, [::]:6380, :6380) means this host, so loopback.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// quiet drops go-redis's own log lines: ping says what failed itself.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func pingRedis(ctx context.Context, addr, username, password string) error {
	// Process-wide, but ping is a process of its own.
	redis.SetLogger(quiet{})
	rdb := redis.NewClient(&redis.Options{Addr: addr, Username: username, Password: password, Protocol: 2, MaxRetries: -1,
		DialerRetries: 1, DisableIdentity: true})
	defer rdb.Close()
	pong, err := rdb.Ping(ctx).Result()
	if err != nil {
		return fmt.Errorf("%s: %w", addr, err)
	}
	if pong != "PONG" {
		return fmt.Errorf("%s answered %q", addr, pong)
	}
	return nil
}

func pingHTTP(ctx context.Context, url string) error {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
		return fmt.Errorf("want an http:// or https:// URL, got %q", url)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}
