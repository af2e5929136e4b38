package main

// Child-process helpers, copied in spirit from bench/compare/server.go.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// server is one running child process: redis-server or stampedeless.
type server struct {
	name    string
	port    int
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
}

func (s *server) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *server) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM, then SIGKILL after 5 s. Safe to call more than once.
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

func (s *server) exitError() error {
	data, _ := os.ReadFile(s.logPath)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return fmt.Errorf("%s exited: %v; log tail:\n  %s", s.name, s.waitErr, strings.Join(lines, "\n  "))
}

// startServer starts a child on a free port and waits for PONG; a port taken
// between picking and binding is retried.
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
		h.logf("started %s pid %d on %s", name, cmd.Process.Pid, s.addr())
		return s, nil
	}
	return nil, lastErr
}

func (s *server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		if !s.alive() {
			return s.exitError()
		}
		if ping(ctx, s.addr()) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s did not answer PING within 15s", s.name, s.addr())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ping sends an inline PING on a fresh connection.
func ping(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func firstLine(ctx context.Context, dir, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
