// Package redistest starts real redis-server processes for tests: a single
// server, a master watched by a Sentinel, or a Redis Cluster of several
// masters created with redis-cli --cluster create. Each listens on free
// loopback ports and is stopped when its test ends. Binary finds the Redis
// programs for any test that runs them; FreeAddr gives any test server a
// loopback address reserved for its test, and ExternalIP and DialFrom let a test connect from
// outside loopback.
package redistest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// Server is one redis-server process.
type Server struct {
	t    testing.TB
	bin  string
	port int
	dir  string
	conf string // config file given first, if any
	args []string
	cmd  *exec.Cmd
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Start starts a redis-server with no persistence. Without redis-server the
// test skips, or fails when CI is set (see Binary).
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: Binary(t, "redis-server"), port: freePort(t), dir: t.TempDir(), args: extra}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	var args []string
	if s.conf != "" {
		args = append(args, s.conf)
	}
	args = append(args, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", s.dir, "--logfile", filepath.Join(s.dir, "redis.log"))
	args = append(args, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	testwait.For(s.t, "redis-server to listen on "+s.Addr(), func() bool {
		nc, err := net.Dial("tcp", s.Addr())
		if err == nil {
			nc.Close()
		}
		return err == nil
	})
}

// Stop kills the server at once, as a crash would. It may be called twice.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Pause stops the process (SIGSTOP) without closing its connections, as a
// hung Redis looks to its clients; Resume continues it.
func (s *Server) Pause()  { s.cmd.Process.Signal(syscall.SIGSTOP) }
func (s *Server) Resume() { s.cmd.Process.Signal(syscall.SIGCONT) }

// Restart starts a stopped server again on the same port, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Cluster is a Redis Cluster of redis-server processes.
type Cluster struct {
	t     testing.TB
	Nodes []*Server
}

// Addrs are the nodes' addresses, comma-separated, as --redis takes them.
func (c *Cluster) Addrs() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	return strings.Join(addrs, ",")
}

// Stop kills every node.
func (c *Cluster) Stop() {
	for _, n := range c.Nodes {
		n.Stop()
	}
}

// Restart starts every node again, empty but with its slots (each keeps its
// nodes.conf), and waits until the cluster is ok.
func (c *Cluster) Restart() {
	c.t.Helper()
	for _, n := range c.Nodes {
		n.Restart()
	}
	c.waitOK()
}

// Sentinel is a redis-server master watched by one Sentinel.
type Sentinel struct {
	Master *Server
	// Addr is the Sentinel's address; MasterName, the name it knows the
	// master by.
	Addr, MasterName string
}

// Stop kills the master; the Sentinel stays up, as when a Redis host dies.
func (s *Sentinel) Stop() { s.Master.Stop() }

// Restart starts the master again, empty, on its port.
func (s *Sentinel) Restart() { s.Master.Restart() }

// StartSentinel starts a master and a Sentinel (redis-server --sentinel)
// that monitors it under the name "mymaster", and waits until the Sentinel
// reports the master's address.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	master := Start(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "sentinel.conf")
	_, port, _ := net.SplitHostPort(master.Addr())
	text := fmt.Sprintf("sentinel monitor mymaster 127.0.0.1 %s 1\nsentinel down-after-milliseconds mymaster 60000\n", port)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, bin: Binary(t, "redis-server"), port: freePort(t), dir: dir}
	// The config file comes first: redis-server takes it as its first
	// argument, and Sentinel rewrites it as it learns.
	s.args = []string{"--sentinel"}
	s.conf = conf
	s.start()
	t.Cleanup(s.Stop)
	cli := Binary(t, "redis-cli")
	var out []byte
	var err error
	if !testwait.Until(func() bool {
		out, err = exec.Command(cli, "-p", strconv.Itoa(s.port), "sentinel", "get-master-addr-by-name", "mymaster").Output()
		return err == nil && strings.Contains(string(out), port)
	}) {
		t.Fatalf("sentinel does not know the master: %v %s", err, out)
	}
	return &Sentinel{Master: master, Addr: s.Addr(), MasterName: "mymaster"}
}

// StartCluster starts n redis-server processes in cluster mode and joins
// them into a Redis Cluster of n masters with no replicas, then waits until
// every node reports the cluster ok.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	cli := Binary(t, "redis-cli")
	c := &Cluster{t: t}
	args := []string{"--cluster", "create"}
	for range n {
		// The cluster bus gets its own free port (cluster-port, Redis 7), so
		// the default port+10000 need not be free.
		s := Start(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--cluster-port", strconv.Itoa(freePort(t)))
		c.Nodes = append(c.Nodes, s)
		args = append(args, s.Addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.waitOK()
	return c
}

// waitOK waits until every node reports cluster_state:ok.
func (c *Cluster) waitOK() {
	t := c.t
	t.Helper()
	cli := Binary(t, "redis-cli")
	for _, node := range c.Nodes {
		host, port, _ := net.SplitHostPort(node.Addr())
		var out []byte
		var err error
		if !testwait.Until(func() bool {
			out, err = exec.Command(cli, "-h", host, "-p", port, "cluster", "info").Output()
			return err == nil && strings.Contains(string(out), "cluster_state:ok")
		}) {
			t.Fatalf("cluster node %s not ok: %v\n%s", node.Addr(), err, out)
		}
	}
}

// Binary returns the path of a Redis program on PATH (redis-server, or
// redis-cli from redis-tools); every test that runs one finds it here. When
// it is missing the test fails if the CI environment variable is set (as
// scripts/test.sh and .ci/run set it), because there a skip would pass a run
// that compared nothing against Redis; on a developer's machine without Redis
// it skips, saying what to install.
func Binary(t testing.TB, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err == nil {
		return bin
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%s not found on PATH and CI is set: install redis-server and redis-tools (Redis 7), or unset CI to skip the tests that need them", name)
	}
	t.Skipf("skipped: %s not found on PATH; install redis-server and redis-tools (Redis 7) to run the tests that compare against a real Redis", name)
	return ""
}

// freePort returns a loopback port reserved for t (see FreeAddr).
func freePort(t testing.TB) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(FreeAddr(t))
	n, _ := strconv.Atoi(port)
	return n
}

// FreeAddr returns a loopback host:port for any server a test starts
// (stampedeless processes included), reserved until the test ends: a
// server stopped and restarted on it (Server.Restart) finds it still free.
//
// A port the kernel picked (listening on port 0) and then closed is not
// reserved at all: the kernel hands it out again, to another process's
// listener or as the local port of an outgoing connection, and a Redis
// started or restarted on it then fails to bind while the test talks to
// whatever holds it. So the port is drawn instead from below the kernel's
// ephemeral range, which it never hands out on its own, and reserved
// against the other test processes by an exclusive lock (flock) on a file
// named after it in a directory they share, held until the test ends.
func FreeAddr(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "stampedeless-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(fmt.Errorf("reserving a port: %w", err))
	}
	lo, hi := reservableRange()
	for range 1000 {
		port := lo + rand.IntN(hi-lo)
		if lock, ok := reserve(dir, port); ok {
			t.Cleanup(func() { lock.Close() }) // closing the file releases the lock
			return "127.0.0.1:" + strconv.Itoa(port)
		}
	}
	t.Fatalf("reserving a port: no free port in %d-%d", lo, hi)
	return ""
}

// reserve takes port's lock file in dir and checks that nothing listens on
// the port; it returns the open file holding the lock.
func reserve(dir string, port int) (*os.File, bool) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil { // a process that does not reserve ports holds it
		f.Close()
		return nil, false
	}
	ln.Close()
	return f, true
}

// reservableRange is the ports FreeAddr draws from: up to 12000 ports just
// below the kernel's ephemeral range (Linux's ip_local_port_range; where it
// cannot be read, below Linux's default of 32768).
func reservableRange() (lo, hi int) {
	hi = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 2048 {
				hi = n
			}
		}
	}
	return max(1024, hi-12000), hi
}
