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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	redisName = "redis-server"
	stampName = "stampedeless"
)

// server is one running child process: redis-server or stampedeless.
type server struct {
	name    string
	port    int
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done is closed
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *server) pid() int { return s.cmd.Process.Pid }

// alive reports whether the process is still running.
func (s *server) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// exitError describes how the process ended, with the tail of its log.
func (s *server) exitError() error {
	return fmt.Errorf("%s (pid %d) exited: %v; last lines of its log:\n  %s",
		s.name, s.pid(), s.waitErr, strings.ReplaceAll(tail(s.logPath, 10), "\n", "\n  "))
}

// stop asks the process to exit with SIGTERM and kills it if it has not
// within a few seconds. It is safe to call more than once.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil || !s.alive() {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// startRedis starts a fresh redis-server with persistence off.
func (h *harness) startRedis(ctx context.Context) (*server, error) {
	return h.startServer(ctx, redisName, func(port int) (string, []string) {
		return "redis-server", []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no"}
	})
}

// startStampedeless starts a fresh stampedeless from the binary just built.
func (h *harness) startStampedeless(ctx context.Context) (*server, error) {
	return h.startServer(ctx, stampName, func(port int) (string, []string) {
		return h.bin, []string{"--addr", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			"--metrics-addr", "", "--max-memory", h.opts.maxMem, "--log-level", "warn"}
	})
}

// startServer starts a server on a free port and waits until it answers
// PING. A port picked free may be taken before the server binds it, so a
// server that dies at startup is retried on another port.
func (h *harness) startServer(ctx context.Context, name string, argv func(port int) (string, []string)) (*server, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(h.tmp, name+"-")
		if err != nil {
			return nil, err
		}
		logPath := filepath.Join(dir, "server.log")
		logFile, err := os.Create(logPath)
		if err != nil {
			return nil, err
		}
		prog, args := argv(port)
		cmd := exec.CommandContext(ctx, prog, args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = logFile, logFile
		// Die with us even if we are killed without a chance to clean up.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			logFile.Close()
			return nil, fmt.Errorf("start %s: %w", name, err)
		}
		s := &server{name: name, port: port, cmd: cmd, logPath: logPath, done: make(chan struct{})}
		go func() {
			s.waitErr = cmd.Wait()
			logFile.Close()
			close(s.done)
		}()
		h.servers = append(h.servers, s)
		if err := s.waitReady(ctx); err != nil {
			s.stop()
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		h.logf("started %s pid %d on %s", name, s.pid(), s.addr())
		return s, nil
	}
	return nil, lastErr
}

// healthy reports why a server that just failed a request is no longer
// usable: it has exited (given a moment to be reaped), or it does not answer
// PING on a new connection within 5 seconds. It returns nil otherwise.
func (h *harness) healthy(ctx context.Context, s *server) error {
	select {
	case <-s.done:
		return s.exitError()
	case <-time.After(time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := s.do(pctx, "PING")
	if err != nil || reply != "PONG" {
		if !s.alive() {
			return s.exitError()
		}
		return fmt.Errorf("%s (pid %d) is running but does not answer PING (%q, %v)", s.name, s.pid(), reply, err)
	}
	return nil
}

// waitReady polls PING until the server answers PONG.
func (s *server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		if !s.alive() {
			return s.exitError()
		}
		reply, err := s.do(ctx, "PING")
		if err == nil && reply == "PONG" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s did not answer PING within 15s (last: %q, %v)", s.name, s.addr(), reply, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// errReply is a RESP error reply.
type errReply string

func (e errReply) Error() string { return string(e) }

// do sends one command on a fresh connection and returns the reply: simple
// strings, bulk strings and integers as text, error replies as errReply.
func (s *server) do(ctx context.Context, args ...string) (string, error) {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", s.addr())
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
	return procStatusBytes(s.pid(), "VmRSS")
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

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return "(log empty)"
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
