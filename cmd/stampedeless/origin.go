package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/stampedeless/stampedeless/origin"
)

// originEnv names the origin's environment variables apart from the
// server's: --addr of `stampedeless origin` is STAMPEDELESS_ORIGIN_ADDR.
func originEnv(flag string) []string { return env("origin-" + flag) }

// originCommand is `stampedeless origin`, the demo HTTP origin of the
// README's five-minute stampede, scripts/demo.sh and docker-compose.yml.
func originCommand() *cli.Command {
	return &cli.Command{
		Name:  "origin",
		Usage: "run a demo HTTP origin for loaders: slow, countable, optionally failing",
		Description: "Answers GET /<key> with \"value of <key>, version N, made at <time>\" after --latency,\n" +
			"and a batch loader's POST of many keys (LOADER.REGISTER ... BATCH n) with one result each,\n" +
			"logs every call with --log-calls, and serves its counters as JSON at /stats (POST /reset zeroes them).\n" +
			"Point a loader at it: stampedeless --loader 'demo:=http://127.0.0.1:8080/{key}'",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:8080", EnvVars: originEnv("addr"),
				Usage: "address to serve HTTP on"},
			&cli.DurationFlag{Name: "latency", Value: 200 * time.Millisecond, EnvVars: originEnv("latency"),
				Usage: "how long each call takes"},
			&cli.Float64Flag{Name: "failure-rate", EnvVars: originEnv("failure-rate"),
				Usage: "share of calls answered 503, from 0 to 1"},
			&cli.BoolFlag{Name: "etag", EnvVars: originEnv("etag"),
				Usage: "send ETags and answer a matching If-None-Match with 304"},
			&cli.DurationFlag{Name: "change-every", EnvVars: originEnv("change-every"),
				Usage: "give every value a new version this often (0: never)"},
			&cli.StringFlag{Name: "not-found-prefix", EnvVars: originEnv("not-found-prefix"),
				Usage: "answer 404 for keys starting with this prefix"},
			&cli.StringSliceFlag{Name: "surrogate-key", EnvVars: originEnv("surrogate-key"),
				Usage: "tag every value with this origin tag, sent as Surrogate-Key, for PURGE.TAG; {key} is replaced by the key (repeatable)"},
			// Off by default: the demo origin shares a terminal with the
			// commands of the README's demo, which make 1,000 calls.
			&cli.BoolFlag{Name: "log-calls", EnvVars: originEnv("log-calls"),
				Usage: "log each call (its key, status and how many calls are in flight); /stats counts them either way"},
		},
		Action: noArgs(runOrigin, false),
	}
}

func runOrigin(c *cli.Context) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := origin.Options{
		Latency:        c.Duration("latency"),
		FailureRate:    c.Float64("failure-rate"),
		ETag:           c.Bool("etag"),
		ChangeEvery:    c.Duration("change-every"),
		NotFoundPrefix: c.String("not-found-prefix"),
		Tags:           c.StringSlice("surrogate-key"),
	}
	if c.Bool("log-calls") {
		opts.Logger = log
	}
	o, err := origin.New(opts)
	if err != nil {
		return err
	}
	ln, err := listenFlag("addr", c.String("addr"))
	if err != nil {
		return fmt.Errorf("origin: %w", err)
	}
	srv := &http.Server{Handler: o, ReadHeaderTimeout: 5 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("origin ready", "addr", ln.Addr().String(), "latency", opts.Latency,
		"failure_rate", opts.FailureRate, "etag", opts.ETag)

	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("calls still running at the end of the grace period were cut", "err", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	s := o.Stats()
	log.Info("origin stopped", "calls", s.Calls, "max_in_flight", s.MaxInFlight)
	return nil
}
