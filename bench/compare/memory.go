package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// memResult is what the memory test measured on one server.
type memResult struct {
	server                string
	rssBefore, rssAfter   int64
	peak                  int64 // VmHWM
	dbsize                int64
	load                  time.Duration
	info                  map[string]string
	pipeErrs, pipeReplies int64
	usedBefore            int64 // INFO used_memory before the load
}

func (m memResult) perKey(keys int) float64 {
	return float64(m.rssAfter-m.rssBefore) / float64(keys)
}

// usedAfter is INFO used_memory after the load, 0 if unknown.
func (m memResult) usedAfter() int64 {
	v, _ := strconv.ParseInt(m.info["used_memory"], 10, 64)
	return v
}

// usedPerKey is the growth of used_memory per key, 0 if unknown.
func (m memResult) usedPerKey(keys int) float64 {
	if m.usedBefore <= 0 || m.usedAfter() <= 0 {
		return 0
	}
	return float64(m.usedAfter()-m.usedBefore) / float64(keys)
}

// memLoad is what a memory test loads: keys written by write (the RESP
// stream of one command per key) and described by what, for the log. A
// load of elements of fewer keys says how many commands it sends
// (replies) and keys it makes (dbsize); keys is then the elements, which
// bytes per key divide by.
type memLoad struct {
	what            string
	keys            int
	replies, dbsize int // 0: keys
	write           func(w io.Writer) error
	// purge sends MEMORY PURGE before each read of used_memory (after
	// the RSS's): stampedeless's used_memory is its live heap as of its
	// last collection, which PURGE runs; redis-server's jemalloc purges
	// its dirty pages, which used_memory does not count.
	purge bool
}

func orKeys(n, keys int) int {
	if n > 0 {
		return n
	}
	return keys
}

// memoryTest loads the same distinct keys into a fresh instance of each
// server, one after the other, and compares their RSS.
func (h *harness) memoryTest(ctx context.Context) error {
	keys, size := h.opts.memKeys, h.opts.dataSize
	results, err := h.measureEach(ctx, true, memLoad{what: fmt.Sprintf("%d keys of %d bytes", keys, size), keys: keys,
		write: func(w io.Writer) error { return writeSets(w, keys, 7, size) }})
	if err != nil {
		return err
	}
	h.printMemory(results)
	return nil
}

// measureEach measures load on a fresh instance of each server (with
// floor, bench/floor's too), one after the other.
func (h *harness) measureEach(ctx context.Context, floor bool, load memLoad) ([]memResult, error) {
	var results []memResult
	for _, start := range h.starters(true) {
		s, err := start(ctx)
		if err != nil {
			return nil, err
		}
		if !floor && s.Name == floorName {
			s.Stop()
			continue
		}
		m, err := h.measureMemory(ctx, s, load)
		s.Stop()
		if err != nil {
			return nil, err
		}
		results = append(results, m)
	}
	return results, nil
}

func (h *harness) measureMemory(ctx context.Context, s *server, load memLoad) (memResult, error) {
	m := memResult{server: s.Name}
	keys := load.keys
	if err := sleep(ctx, time.Second); err != nil { // let startup allocation settle
		return m, err
	}
	var err error
	if m.rssBefore, err = s.rssBytes(); err != nil {
		return m, err
	}
	if s.Name != floorName { // it has no INFO
		h.purge(ctx, s, load)
		if info, err := s.info(ctx, "memory"); err == nil {
			m.usedBefore, _ = strconv.ParseInt(info["used_memory"], 10, 64)
		}
	}
	h.logf("memory: loading %s into %s (RSS before %.1f MiB)", load.what, s.Name, mib(m.rssBefore))
	start := time.Now()
	m.pipeErrs, m.pipeReplies, err = h.pipe(ctx, s, keys, load.write)
	m.load = time.Since(start)
	if err != nil {
		h.fail("loading %s: %v", s.Name, err)
	}
	replies, dbsize := orKeys(load.replies, keys), orKeys(load.dbsize, keys)
	if m.pipeErrs != 0 || m.pipeReplies != int64(replies) {
		h.fail("redis-cli --pipe into %s: errors %d, replies %d, want 0 and %d", s.Name, m.pipeErrs, m.pipeReplies, replies)
	}
	if !s.Alive() {
		return m, s.ExitError()
	}
	// DBSIZE should be exact at once; poll a little in case a server
	// applies writes asynchronously, and report it if so.
	deadline := time.Now().Add(5 * time.Second)
	polls := 0
	for {
		reply, err := s.do(ctx, "DBSIZE")
		if err != nil {
			return m, fmt.Errorf("DBSIZE on %s: %w", s.Name, err)
		}
		if m.dbsize, err = strconv.ParseInt(reply, 10, 64); err != nil {
			return m, fmt.Errorf("DBSIZE on %s: %q", s.Name, reply)
		}
		if m.dbsize == int64(dbsize) || time.Now().After(deadline) {
			break
		}
		polls++
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return m, err
		}
	}
	switch {
	case m.dbsize != int64(dbsize):
		h.fail("DBSIZE on %s is %d after loading %d distinct keys (max-memory %s)", s.Name, m.dbsize, dbsize, h.opts.maxMem)
	case polls > 0:
		h.note("DBSIZE on %s reached %d only %d polls (100ms apart) after the last reply", s.Name, dbsize, polls)
	}
	if err := sleep(ctx, time.Second); err != nil {
		return m, err
	}
	if m.rssAfter, err = s.rssBytes(); err != nil {
		return m, err
	}
	if m.peak, err = procStatusBytes(s.Pid(), "VmHWM"); err != nil {
		return m, err
	}
	if s.Name != floorName { // it has no INFO
		h.purge(ctx, s, load)
		if m.info, err = s.info(ctx, "memory"); err != nil {
			h.note("INFO memory on %s: %v", s.Name, err)
		}
	}
	h.logf("memory: %s DBSIZE %d, RSS %.1f MiB, load %.1fs", s.Name, m.dbsize, mib(m.rssAfter), m.load.Seconds())
	return m, nil
}

// purge sends MEMORY PURGE to s if load asks for it.
func (h *harness) purge(ctx context.Context, s *server, load memLoad) {
	if !load.purge {
		return
	}
	if _, err := s.do(ctx, "MEMORY", "PURGE"); err != nil {
		h.note("MEMORY PURGE on %s: %v", s.Name, err)
	}
}

var pipeSummary = regexp.MustCompile(`errors:\s*(\d+),\s*replies:\s*(\d+)`)

// pipeLoadWidth writes SET key:0000000..key:<keys-1> (key numbers
// zero-padded to at least width digits) with values of -d bytes to
// `redis-cli --pipe` and returns the error and reply counts it reports.
func (h *harness) pipeLoadWidth(ctx context.Context, s *server, keys, width int) (errs, replies int64, err error) {
	return h.pipe(ctx, s, keys, func(w io.Writer) error { return writeSets(w, keys, width, h.opts.dataSize) })
}

// pipe writes the commands write makes, keys of them, to `redis-cli
// --pipe` and returns the error and reply counts it reports.
func (h *harness) pipe(ctx context.Context, s *server, keys int, write func(io.Writer) error) (errs, replies int64, err error) {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Minute+time.Duration(keys/50000)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(lctx, "redis-cli", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "--pipe")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	writeErr := write(stdin)
	stdin.Close()
	runErr := cmd.Wait()
	if lctx.Err() != nil && ctx.Err() == nil {
		return 0, 0, fmt.Errorf("redis-cli --pipe timed out: %s", firstLines(out.String(), 5))
	}
	if runErr != nil {
		return 0, 0, fmt.Errorf("redis-cli --pipe: %v: %s", runErr, firstLines(out.String(), 5))
	}
	if writeErr != nil {
		return 0, 0, fmt.Errorf("writing to redis-cli --pipe: %w", writeErr)
	}
	sm := pipeSummary.FindStringSubmatch(out.String())
	if sm == nil {
		return 0, 0, fmt.Errorf("no summary from redis-cli --pipe: %s", firstLines(out.String(), 5))
	}
	errs, _ = strconv.ParseInt(sm[1], 10, 64)
	replies, _ = strconv.ParseInt(sm[2], 10, 64)
	return errs, replies, nil
}

// writeSets writes the RESP stream of SETs of distinct keys, key:0000000 on
// (at least width digits).
func writeSets(w io.Writer, keys, width, size int) error {
	value := bytes.Repeat([]byte{'x'}, size)
	return writeKeyed(w, keys, width, func(bw *bufio.Writer, key []byte) {
		writeCommand(bw, []byte("SET"), key, value)
	})
}

// writeKeyed writes, through write, one command for each distinct key
// key:0000000 on (at least width digits).
func writeKeyed(w io.Writer, keys, width int, write func(bw *bufio.Writer, key []byte)) error {
	width = max(width, len(strconv.Itoa(keys-1)))
	bw := bufio.NewWriterSize(w, 1<<20)
	keyBuf := make([]byte, 0, 32)
	for i := range keys {
		keyBuf = append(keyBuf[:0], "key:"...)
		digits := strconv.Itoa(i)
		for range width - len(digits) {
			keyBuf = append(keyBuf, '0')
		}
		keyBuf = append(keyBuf, digits...)
		write(bw, keyBuf)
	}
	return bw.Flush()
}

// writeCommand writes a command as a RESP array of bulk strings; errors
// show at the writer's Flush.
func writeCommand(bw *bufio.Writer, args ...[]byte) {
	fmt.Fprintf(bw, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(bw, "$%d\r\n", len(a))
		bw.Write(a)
		bw.WriteString("\r\n")
	}
}

// hashMemoryTest loads hashes as .NET's IDistributedCache for Redis
// stores its entries (three fields: absexp and sldexp, tick counts or -1,
// and data, here -d bytes) and compares the servers' RSS. redis-server
// holds each as a hashtable (data is past hash-max-listpack-value);
// stampedeless keeps each in its record.
func (h *harness) hashMemoryTest(ctx context.Context) error {
	keys, size := h.opts.hashKeys, h.opts.dataSize
	data := bytes.Repeat([]byte{'d'}, size)
	results, err := h.measureEach(ctx, false, memLoad{what: fmt.Sprintf("%d hashes (absexp, sldexp, data of %d bytes)", keys, size), keys: keys,
		write: func(w io.Writer) error {
			return writeKeyed(w, keys, 7, func(bw *bufio.Writer, key []byte) {
				writeCommand(bw, []byte("HSET"), key, []byte("absexp"), []byte("638700000000000000"),
					[]byte("sldexp"), []byte("-1"), []byte("data"), data)
			})
		}})
	if err != nil {
		return err
	}
	fmt.Fprintf(h.out, "\n### Memory after %d small hashes (HSET key absexp <ticks> sldexp -1 data <%d bytes>, as .NET IDistributedCache)\n\n", keys, size)
	fmt.Fprintln(h.out, "| server | DBSIZE | RSS before MiB | RSS after MiB | peak RSS MiB | bytes/key | load s |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|")
	byName := map[string]memResult{}
	for _, m := range results {
		byName[m.server] = m
		fmt.Fprintf(h.out, "| %s | %d | %.1f | %.1f | %.1f | %.0f | %.1f |\n",
			m.server, m.dbsize, mib(m.rssBefore), mib(m.rssAfter), mib(m.peak), m.perKey(keys), m.load.Seconds())
	}
	if r, s := byName[redisName], byName[stampName]; r.perKey(keys) > 0 {
		fmt.Fprintf(h.out, "\nbytes/key ratio stampedeless/redis-server: **%.2f**; RSS ratio %.2f.\n",
			s.perKey(keys)/r.perKey(keys), float64(s.rssAfter)/float64(r.rssAfter))
	}
	return nil
}

// zsetMemoryTest loads one sorted set of -zset-members members
// (member:0000000 on, 14 bytes, with pseudo-random scores) by ZADDs of
// 1,000 members and compares the servers' RSS and used_memory per member.
// Both hold it as a skiplist: redis-server's skiplist and dict,
// stampedeless's counted B+tree and map on the Go heap.
func (h *harness) zsetMemoryTest(ctx context.Context) error {
	members := h.opts.zsetSize
	results, err := h.measureEach(ctx, false, memLoad{what: fmt.Sprintf("one sorted set of %d members", members),
		keys: members, replies: members / collBatch, dbsize: 1, purge: true,
		write: func(w io.Writer) error { return zsetMembers(w, members) }})
	if err != nil {
		return err
	}
	h.printElementMemory(fmt.Sprintf("one sorted set of %d members (ZADD of 1,000 members of 14 bytes at a time, random scores)", members), "member", members, results)
	return nil
}

func (h *harness) printMemory(results []memResult) {
	keys := h.opts.memKeys
	fmt.Fprintf(h.out, "\n### Memory after %d SETs of distinct keys with %d-byte values\n\n", keys, h.opts.dataSize)
	fmt.Fprintf(h.out, "Fresh server each, loaded with `redis-cli --pipe`; VmRSS from /proc/<pid>/status 1 s after the load. stampedeless runs with `--max-memory %s`.\n\n", h.opts.maxMem)
	fmt.Fprintln(h.out, "| server | DBSIZE | RSS before MiB | RSS after MiB | peak RSS MiB | bytes/key | load s | used_memory MiB |")
	fmt.Fprintln(h.out, "|---|---:|---:|---:|---:|---:|---:|---:|")
	byName := map[string]memResult{}
	for _, m := range results {
		byName[m.server] = m
		used := "n/a"
		if v, err := strconv.ParseInt(m.info["used_memory"], 10, 64); err == nil {
			used = fmt.Sprintf("%.1f", mib(v))
		}
		fmt.Fprintf(h.out, "| %s | %d | %.1f | %.1f | %.1f | %.0f | %.1f | %s |\n",
			m.server, m.dbsize, mib(m.rssBefore), mib(m.rssAfter), mib(m.peak), m.perKey(keys), m.load.Seconds(), used)
	}
	r, rok := byName[redisName]
	s, sok := byName[stampName]
	if rok && sok && r.rssAfter > 0 && r.perKey(keys) > 0 {
		ratio := float64(s.rssAfter) / float64(r.rssAfter)
		fmt.Fprintf(h.out, "\nRSS ratio stampedeless/redis-server: **%.2f** %s (target ≤ 1.5); bytes/key ratio: %.2f; peak RSS ratio: %.2f.\n",
			ratio, mark(ratio <= 1.5), s.perKey(keys)/r.perKey(keys), float64(s.peak)/float64(r.peak))
	}
	if f, ok := byName[floorName]; ok && rok && r.perKey(keys) > 0 && f.perKey(keys) > 0 {
		fmt.Fprintf(h.out, "\nThe Go floor (`bench/floor`, one `map[string][]byte`): bytes/key against redis-server %.2f, RSS %.2f; stampedeless against the floor: bytes/key %.2f, RSS %.2f.\n",
			f.perKey(keys)/r.perKey(keys), float64(f.rssAfter)/float64(r.rssAfter),
			s.perKey(keys)/f.perKey(keys), float64(s.rssAfter)/float64(f.rssAfter))
	}
	if sok {
		var parts []string
		for _, f := range []string{"used_memory", "used_memory_rss", "cache_cost_bytes"} {
			if v, ok := s.info[f]; ok {
				parts = append(parts, fmt.Sprintf("%s=%s", f, v))
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					parts[len(parts)-1] += fmt.Sprintf(" (%.1f MiB)", mib(n))
				}
			} else {
				parts = append(parts, f+" missing")
			}
		}
		fmt.Fprintf(h.out, "\nstampedeless INFO memory after the load: %s.\n", strings.Join(parts, ", "))
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
