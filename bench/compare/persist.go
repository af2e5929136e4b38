package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// persistResult is one server's snapshot of -persist-keys keys, over
// -persist-rounds SAVEs and restarts.
type persistResult struct {
	server string
	saves  []float64 // SAVE's reply time, seconds
	bytes  int64     // the file's size
	loads  []float64 // from the restart to answering PING, seconds (redis-server answers -LOADING until loaded)
	dbsize int64     // after the last restart
}

// persistServer is one server of the snapshot test, with a --dir of its
// own.
type persistServer struct {
	name string
	dir  string
	s    *server
}

func (h *harness) startPersist(ctx context.Context, p *persistServer) error {
	s, err := h.startServer(ctx, p.name, func(port int) (string, []string) {
		if p.name == redisName {
			return "redis-server", []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
				"--appendonly", "no", "--daemonize", "no", "--dir", p.dir, "--dbfilename", "dump.rdb"}
		}
		return h.bin, []string{"--addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), "--metrics-addr", "",
			"--max-memory", h.opts.maxMem, "--log-level", "warn", "--dir", p.dir, "--dbfilename", "dump.rdb"}
	})
	p.s = s
	return err
}

// persistTest loads -persist-keys SETs of -d bytes into redis-server and
// stampedeless, each with a --dir of its own, then -persist-rounds times
// times SAVE on each in turn, then -persist-rounds times kills each in
// turn and times a restart from the file until it answers PING with every
// key in. The servers alternate so that other processes' load falls on
// both alike.
func (h *harness) persistTest(ctx context.Context) error {
	keys := h.opts.persistKeys
	servers := []*persistServer{{name: redisName}, {name: stampName}}
	results := make([]persistResult, len(servers))
	defer func() {
		for _, p := range servers {
			if p.s != nil {
				p.s.Stop()
			}
		}
	}()
	for i, p := range servers {
		p.dir = filepath.Join(h.tmp, "persist-"+p.name)
		if err := os.MkdirAll(p.dir, 0o700); err != nil {
			return err
		}
		if err := h.startPersist(ctx, p); err != nil {
			return err
		}
		results[i].server = p.name
		h.logf("persist: loading %d keys into %s", keys, p.name)
		errs, replies, err := h.pipe(ctx, p.s, keys, func(w io.Writer) error { return writeSets(w, keys, 7, h.opts.dataSize) })
		if err != nil || errs != 0 || replies != int64(keys) {
			h.fail("loading %s for the snapshot: %v, errors %d, replies %d", p.name, err, errs, replies)
			return nil
		}
	}
	for range h.opts.persistRounds {
		for i, p := range servers {
			t0 := time.Now()
			if reply, err := p.s.do(ctx, "SAVE"); err != nil || reply != "OK" {
				h.fail("SAVE on %s: %q %v", p.name, reply, err)
				return nil
			}
			results[i].saves = append(results[i].saves, time.Since(t0).Seconds())
			if fi, err := os.Stat(filepath.Join(p.dir, "dump.rdb")); err == nil {
				results[i].bytes = fi.Size()
			}
		}
	}
	for range h.opts.persistRounds {
		for i, p := range servers {
			p.s.Stop() // a kill: the restart loads what SAVE wrote
			t0 := time.Now()
			if err := h.startPersist(ctx, p); err != nil {
				return err
			}
			results[i].loads = append(results[i].loads, time.Since(t0).Seconds())
			reply, err := p.s.do(ctx, "DBSIZE")
			if err != nil {
				return err
			}
			if results[i].dbsize, _ = strconv.ParseInt(reply, 10, 64); results[i].dbsize != int64(keys) {
				h.fail("%s has %d keys after the restart, want %d", p.name, results[i].dbsize, keys)
			}
		}
	}
	for _, r := range results {
		h.logf("persist: %s SAVE %s s, %d bytes, restart %s s", r.server, seconds(r.saves), r.bytes, seconds(r.loads))
	}
	fmt.Fprintf(h.out, "\n### Snapshot of %d keys of %d bytes (SAVE, then a restart from the file)\n\n", keys, h.opts.dataSize)
	fmt.Fprintf(h.out, "Medians of %d SAVEs and %d restarts of each server, in turns (each round's in parentheses).\n\n", h.opts.persistRounds, h.opts.persistRounds)
	fmt.Fprintln(h.out, "| server | SAVE s | file MiB | restart until PING s | DBSIZE after |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(h.out, "| %s | %.2f (%s) | %.1f | %.2f (%s) | %d |\n", r.server, median(r.saves), seconds(r.saves), mib(r.bytes),
			median(r.loads), seconds(r.loads), r.dbsize)
	}
	rs, ss := results[0], results[1]
	if median(rs.saves) > 0 && rs.bytes > 0 && median(rs.loads) > 0 {
		fmt.Fprintf(h.out, "\nstampedeless/redis-server: SAVE **%.2f**, file size **%.2f**, restart **%.2f** (targets ≤ 1.0, ≤ 1.1, ≤ 1.0).\n",
			median(ss.saves)/median(rs.saves), float64(ss.bytes)/float64(rs.bytes), median(ss.loads)/median(rs.loads))
	}
	return nil
}

// seconds formats xs as "0.51, 0.49".
func seconds(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strings.Join(parts, ", ")
}
