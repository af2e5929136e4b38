package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// persistResult is one server's snapshot of -persist-keys keys.
type persistResult struct {
	server string
	save   time.Duration // SAVE's reply time
	bytes  int64         // the file's size
	load   time.Duration // from the restart to answering PING (redis-server answers -LOADING until loaded)
	dbsize int64         // after the restart
}

// persistTest loads -persist-keys SETs of -d bytes into redis-server and
// stampedeless, each with a --dir of its own, times SAVE, kills the
// server, and times a restart from the file until it answers PING with
// every key in.
func (h *harness) persistTest(ctx context.Context) error {
	keys := h.opts.persistKeys
	var results []persistResult
	for _, name := range []string{redisName, stampName} {
		dir := filepath.Join(h.tmp, "persist-"+name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		start := func() (*server, error) {
			return h.startServer(ctx, name, func(port int) (string, []string) {
				if name == redisName {
					return "redis-server", []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
						"--appendonly", "no", "--daemonize", "no", "--dir", dir, "--dbfilename", "dump.rdb"}
				}
				return h.bin, []string{"--addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), "--metrics-addr", "",
					"--max-memory", h.opts.maxMem, "--log-level", "warn", "--dir", dir, "--dbfilename", "dump.rdb"}
			})
		}
		s, err := start()
		if err != nil {
			return err
		}
		r := persistResult{server: name}
		h.logf("persist: loading %d keys into %s", keys, name)
		errs, replies, err := h.pipe(ctx, s, keys, func(w io.Writer) error { return writeSets(w, keys, 7, h.opts.dataSize) })
		if err != nil || errs != 0 || replies != int64(keys) {
			h.fail("loading %s for the snapshot: %v, errors %d, replies %d", name, err, errs, replies)
		}
		t0 := time.Now()
		if reply, err := s.do(ctx, "SAVE"); err != nil || reply != "OK" {
			h.fail("SAVE on %s: %q %v", name, reply, err)
		}
		r.save = time.Since(t0)
		if fi, err := os.Stat(filepath.Join(dir, "dump.rdb")); err == nil {
			r.bytes = fi.Size()
		}
		s.Stop() // a kill: the restart loads what SAVE wrote
		t0 = time.Now()
		s, err = start()
		if err != nil {
			return err
		}
		r.load = time.Since(t0)
		reply, err := s.do(ctx, "DBSIZE")
		if err != nil {
			return err
		}
		if r.dbsize, _ = strconv.ParseInt(reply, 10, 64); r.dbsize != int64(keys) {
			h.fail("%s has %d keys after the restart, want %d", name, r.dbsize, keys)
		}
		s.Stop()
		h.logf("persist: %s SAVE %.2fs, %d bytes, restart %.2fs", name, r.save.Seconds(), r.bytes, r.load.Seconds())
		results = append(results, r)
	}
	fmt.Fprintf(h.out, "\n### Snapshot of %d keys of %d bytes (SAVE, then a restart from the file)\n\n", keys, h.opts.dataSize)
	fmt.Fprintln(h.out, "| server | SAVE s | file MiB | restart until PING s | DBSIZE after |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|")
	for _, r := range results {
		fmt.Fprintf(h.out, "| %s | %.2f | %.1f | %.2f | %d |\n", r.server, r.save.Seconds(), mib(r.bytes), r.load.Seconds(), r.dbsize)
	}
	if len(results) == 2 && results[0].save > 0 && results[0].bytes > 0 && results[0].load > 0 {
		rs, ss := results[0], results[1]
		fmt.Fprintf(h.out, "\nstampedeless/redis-server: SAVE **%.2f**, file size **%.2f**, restart **%.2f** (targets ≤ 1.0, ≤ 1.1, ≤ 1.0).\n",
			ss.save.Seconds()/rs.save.Seconds(), float64(ss.bytes)/float64(rs.bytes), ss.load.Seconds()/rs.load.Seconds())
	}
	return nil
}
