package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/bench/internal/child"
)

const (
	redisName = "redis-server"
	stampName = "stampedeless"
	baseName  = "baseline"    // -baseline: another stampedeless build
	floorName = "floor"       // bench/floor: a minimal Go server, a goroutine per connection
	epollName = "floor-epoll" // bench/floor -loop epoll: the same on one event-loop thread
)

// server is one running child process, with the RESP helpers this
// benchmark uses on it.
type server struct{ *child.Server }

// startRedis starts a fresh redis-server with persistence off and the
// extra configuration given, e.g. "--maxmemory", "64mb".
func (h *harness) startRedis(ctx context.Context, extra ...string) (*server, error) {
	return h.startRedisNamed(ctx, redisName, extra...)
}

// startRedisNamed is startRedis under another name, for a second
// redis-server in one test.
func (h *harness) startRedisNamed(ctx context.Context, name string, extra ...string) (*server, error) {
	return h.startServer(ctx, name, func(port int) (string, []string) {
		return "redis-server", append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no"}, extra...)
	})
}

// startStampedeless starts a fresh stampedeless from the binary just built,
// with -max-memory.
func (h *harness) startStampedeless(ctx context.Context) (*server, error) {
	if h.opts.atBound {
		return h.startStampedelessWith(ctx, h.opts.boundMem)
	}
	return h.startStampedelessWith(ctx, h.opts.maxMem)
}

// startStampedelessWith starts a fresh stampedeless with --max-memory maxMem.
func (h *harness) startStampedelessWith(ctx context.Context, maxMem string) (*server, error) {
	return h.startBuild(ctx, stampName, h.bin, maxMem)
}

// startBaseline starts the -baseline build as startStampedeless starts
// the one just built.
func (h *harness) startBaseline(ctx context.Context) (*server, error) {
	if h.opts.atBound {
		return h.startBuild(ctx, baseName, h.opts.baseline, h.opts.boundMem)
	}
	return h.startBuild(ctx, baseName, h.opts.baseline, h.opts.maxMem)
}

// startBuild starts the stampedeless binary bin under name, with the
// extra flags given.
func (h *harness) startBuild(ctx context.Context, name, bin, maxMem string, extra ...string) (*server, error) {
	return h.startServer(ctx, name, func(port int) (string, []string) {
		args := append([]string{"--addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			"--metrics-addr", "", "--max-memory", maxMem, "--log-level", "warn"}, extra...)
		if h.opts.loops > 0 {
			args = append(args, "--event-loops", strconv.Itoa(h.opts.loops))
		}
		return bin, args
	})
}

// startFloor returns a function starting bench/floor with the network
// design loop under name.
func (h *harness) startFloor(name, loop string) func(context.Context) (*server, error) {
	return func(ctx context.Context) (*server, error) {
		return h.startServer(ctx, name, func(port int) (string, []string) {
			return h.floorBin, []string{"-addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), "-loop", loop}
		})
	}
}

// starters are the servers a test measures, redis-server first. The memory
// test leaves out the event-loop floor: it stores exactly what the other
// floor does.
func (h *harness) starters(memory bool) []func(context.Context) (*server, error) {
	redis := func(ctx context.Context) (*server, error) { return h.startRedis(ctx) }
	if h.opts.atBound && !memory {
		redis = func(ctx context.Context) (*server, error) {
			return h.startRedis(ctx, "--maxmemory", h.opts.boundMem, "--maxmemory-policy", "allkeys-lfu")
		}
	}
	s := []func(context.Context) (*server, error){redis, h.startStampedeless}
	if h.opts.baseline != "" && !memory {
		s = append(s, h.startBaseline)
	}
	if h.floorBin != "" && !(h.opts.atBound && !memory) {
		s = append(s, h.startFloor(floorName, "goroutines"))
		if !memory && runtime.GOOS == "linux" {
			s = append(s, h.startFloor(epollName, "epoll"))
		}
	}
	return s
}

// startServer starts a child server and keeps it for cleanup.
func (h *harness) startServer(ctx context.Context, name string, argv func(port int) (string, []string)) (*server, error) {
	cs, err := child.Start(ctx, h.tmp, name, argv)
	if err != nil {
		return nil, err
	}
	s := &server{cs}
	h.servers = append(h.servers, s)
	h.logf("started %s pid %d on %s", name, s.Pid(), s.Addr())
	return s, nil
}

// healthy reports why a server that just failed a request is no longer
// usable: it has exited (given a moment to be reaped), or it does not answer
// PING on a new connection within 5 seconds. It returns nil otherwise.
func (h *harness) healthy(ctx context.Context, s *server) error {
	select {
	case <-s.Done():
		return s.ExitError()
	case <-time.After(time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := s.do(pctx, "PING")
	if err != nil || reply != "PONG" {
		if !s.Alive() {
			return s.ExitError()
		}
		return fmt.Errorf("%s (pid %d) is running but does not answer PING (%q, %v)", s.Name, s.Pid(), reply, err)
	}
	return nil
}

// errReply is a RESP error reply.
type errReply string

func (e errReply) Error() string { return string(e) }

// do sends one command on a fresh connection and returns the reply: simple
// strings, bulk strings and integers as text, error replies as errReply.
func (s *server) do(ctx context.Context, args ...string) (string, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return "", err
	}
	defer conn.Close()
	deadline := time.Now().Add(60 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	var req bytes.Buffer
	fmt.Fprintf(&req, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := conn.Write(req.Bytes()); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", errors.New("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errReply(line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", fmt.Errorf("bad bulk length %q", line)
		}
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	default:
		return "", fmt.Errorf("unexpected reply %q", line)
	}
}

// info returns the fields of INFO section as a map.
func (s *server) info(ctx context.Context, section string) (map[string]string, error) {
	text, err := s.do(ctx, "INFO", section)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
			fields[k] = v
		}
	}
	return fields, nil
}

// rssBytes reads VmRSS of the process from /proc.
func (s *server) rssBytes() (int64, error) {
	return procStatusBytes(s.Pid(), "VmRSS")
}

func procStatusBytes(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != field {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("/proc/%d/status: odd %s line %q", pid, field, line)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", pid, field)
}
