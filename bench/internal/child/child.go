// Package child runs the servers a benchmark measures (redis-server,
// stampedeless) as child processes on free loopback ports, and holds the
// small environment helpers the benchmark reports share.
package child

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

// Server is one running child process.
type Server struct {
	Name    string
	Port    int
	Cmd     *exec.Cmd
	LogPath string
	done    chan struct{} // closed when the process has exited
	waitErr error         // valid after done is closed
	// argv and dir are how it was started, for Restart.
	argv func(port int) (string, []string)
	dir  string
}

// Addr is the server's loopback address.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// Pid is the child's process id.
func (s *Server) Pid() int { return s.Cmd.Process.Pid }

// Done is closed when the process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Alive reports whether the process is still running.
func (s *Server) Alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// ExitError describes how the process ended, with the tail of its log.
func (s *Server) ExitError() error {
	return fmt.Errorf("%s (pid %d) exited: %v; last lines of its log:\n  %s",
		s.Name, s.Pid(), s.waitErr, strings.ReplaceAll(Tail(s.LogPath, 10), "\n", "\n  "))
}

// Stop asks the process to exit with SIGTERM and kills it if it has not
// within a few seconds. It is safe to call more than once.
func (s *Server) Stop() {
	if s.Cmd == nil || s.Cmd.Process == nil || !s.Alive() {
		return
	}
	s.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.Cmd.Process.Kill()
		<-s.done
	}
}

// Start runs name on a free port, in a new directory under dir with its
// output in server.log, and waits until it answers PING. argv gives the
// program and arguments for a port. A port picked free may be taken before
// the child binds it, so a child that fails to come up is retried on
// another port. The child dies with this process even if it is killed.
func Start(ctx context.Context, dir, name string, argv func(port int) (string, []string)) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := start(ctx, dir, name, argv)
		if err != nil {
			return nil, err
		}
		if err := s.waitReady(ctx); err != nil {
			s.Stop()
			lastErr = err
			if ctx.Err() != nil {
				break
			}
			continue
		}
		return s, nil
	}
	return nil, lastErr
}

func start(ctx context.Context, parent, name string, argv func(port int) (string, []string)) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, name+"-")
	if err != nil {
		return nil, err
	}
	return run(ctx, dir, name, port, argv)
}

// run starts the process in dir on port, its output appended to
// dir/server.log.
func run(ctx context.Context, dir, name string, port int, argv func(port int) (string, []string)) (*Server, error) {
	logPath := filepath.Join(dir, "server.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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
	s := &Server{Name: name, Port: port, Cmd: cmd, LogPath: logPath, done: make(chan struct{}), argv: argv, dir: dir}
	go func() {
		s.waitErr = cmd.Wait()
		logFile.Close()
		close(s.done)
	}()
	return s, nil
}

// Kill ends the process with SIGKILL, as a crash would, and waits for it.
func (s *Server) Kill() {
	if s.Alive() {
		s.Cmd.Process.Kill()
	}
	<-s.done
}

// Signal sends sig to the process (SIGSTOP and SIGCONT hang and resume it
// with its connections open).
func (s *Server) Signal(sig os.Signal) error { return s.Cmd.Process.Signal(sig) }

// Restart starts the process again, after Kill or Stop, on the same port
// and in the same directory, and waits until it answers PING. The port may
// have been taken meanwhile; then it fails. As with Start, the process is
// killed when ctx ends.
func (s *Server) Restart(ctx context.Context) (*Server, error) {
	if s.Alive() {
		return nil, fmt.Errorf("%s (pid %d) is still running", s.Name, s.Pid())
	}
	ns, err := run(ctx, s.dir, s.Name, s.Port, s.argv)
	if err != nil {
		return nil, err
	}
	if err := ns.waitReady(ctx); err != nil {
		ns.Stop()
		return nil, err
	}
	return ns, nil
}

// waitReady polls PING until the server answers PONG. A server that
// answers -LOADING is loading its snapshot, and is waited for as long as
// it says so.
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		if !s.Alive() {
			return s.ExitError()
		}
		err := Ping(ctx, s.Addr())
		if err == nil {
			return nil
		}
		if strings.Contains(err.Error(), "-LOADING") {
			deadline = time.Now().Add(15 * time.Second)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s on %s did not answer PING within 15s (last: %v)", s.Name, s.Addr(), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Ping sends an inline PING on a fresh connection and wants +PONG.
func Ping(ctx context.Context, addr string) error {
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

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Tail returns the last n lines of a file.
func Tail(path string, n int) string {
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

// ModuleRoot is the directory holding the go.mod of the module the
// benchmark runs in: the stampedeless repository.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run from the stampedeless repository")
	}
	return filepath.Dir(gomod), nil
}

// Build compiles the command in pkg, relative to the module root, into
// bin, with the compiler's output to log.
func Build(ctx context.Context, root, bin, pkg string, log io.Writer) error {
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	build.Dir = root
	build.Stdout, build.Stderr = log, log
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build %s: %w", pkg, err)
	}
	return nil
}

// FirstLine runs a command in dir and returns the first line it printed,
// or "" if it failed: for version strings in a report's header.
func FirstLine(ctx context.Context, dir, name string, args ...string) string {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

// CPUModel is the first CPU's model name from /proc/cpuinfo.
func CPUModel() string {
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

// ShellQuote quotes s for a POSIX shell when it needs it, so a report can
// show the command line that reproduces it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
