package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fillTest measures the product's own command on stampedeless: GETFILL hits
// of one key against GET of the same key, in the same rounds (target ≥ 0.95x
// at -P 1 and -P 16), and a stampede: -stampede-clients connections sending
// GETFILL of one cold key at once, whose origin answers after a delay. The
// stampede must cost one origin call and answer every caller, while the
// server's event loops keep serving: a PING sent on another connection all
// along shows how long a loop turn can take.
func (h *harness) fillTest(ctx context.Context) error {
	var calls atomic.Int64
	delay := 200 * time.Millisecond
	value := strings.Repeat("v", h.opts.dataSize)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(delay)
		fmt.Fprint(w, value)
	}))
	defer origin.Close()
	// Room for the stampede's clients and the test's own two.
	s, err := h.startBuild(ctx, stampName, h.bin, h.opts.maxMem, "--max-clients", strconv.Itoa(h.opts.stampedeClients+10))
	if err != nil {
		return err
	}
	defer s.Stop()
	admin, err := dialRESP(s.Addr())
	if err != nil {
		return err
	}
	defer admin.Close()
	if r, err := admin.do("LOADER.REGISTER", "fill:", origin.URL+"/{key}", "TIMEOUT", "30000"); err != nil || r != "+OK" {
		return fmt.Errorf("LOADER.REGISTER: %q %v", r, err)
	}
	if r, err := admin.do("GETFILL", "fill:hot", "86400", "60"); err != nil || !strings.HasPrefix(r, "$") {
		return fmt.Errorf("GETFILL fill:hot: %q %v", r, err)
	}
	if r, err := admin.do("SET", "plain:hot", value); err != nil || r != "+OK" {
		return fmt.Errorf("SET plain:hot: %q %v", r, err)
	}

	fmt.Fprintf(h.out, "\n### GETFILL hits against GET, one key, the same stampedeless (%d rounds, median)\n\n", h.opts.rounds)
	fmt.Fprintln(h.out, "| pipeline | GET rps | GETFILL rps | ratio | GET p99 ms | GETFILL p99 ms |")
	fmt.Fprintln(h.out, "|---:|---:|---:|---:|---:|---:|")
	for _, p := range []int{1, 16} {
		n := h.opts.n
		if p > 1 {
			n *= pipelineScale
		}
		var gets, fills []sample
		for round := range h.opts.rounds {
			for _, cmd := range [][]string{{"GET", "plain:hot"}, {"GETFILL", "fill:hot", "86400", "60"}} {
				args := append([]string{"-n", strconv.Itoa(n), "-P", strconv.Itoa(p)}, cmd...)
				got, _, err := h.benchmarkArgs(ctx, s, args, n)
				if err != nil {
					h.fail("redis-benchmark %s, round %d: %v", strings.Join(cmd, " "), round, err)
					continue
				}
				for _, smp := range got {
					if cmd[0] == "GET" {
						gets = append(gets, smp)
					} else {
						fills = append(fills, smp)
					}
				}
			}
		}
		if len(gets) == 0 || len(fills) == 0 {
			continue
		}
		g, f := medianSample(gets), medianSample(fills)
		ratio := f.rps / g.rps
		fmt.Fprintf(h.out, "| %d | %.0f | %.0f | **%.2f** %s | %.3f | %.3f |\n", p, g.rps, f.rps, ratio, mark(ratio >= 0.95), g.p99, f.p99)
	}
	if calls.Load() != 1 {
		h.note("GETFILL hits called the origin %d times; want 1 (the first fill)", calls.Load())
	}
	if err := h.stampede(ctx, s, &calls, delay); err != nil {
		return err
	}
	return h.restartFill(ctx)
}

// restartFill is a restart that is not a stampede: keys filled through
// GETFILL, some fresh and some past their TTL within their grace, are
// saved (SAVE), the server is killed and started again on the same --dir,
// and clients read every key at once. Keys that were fresh cost no origin
// call; each stale key costs one, its refresh.
func (h *harness) restartFill(ctx context.Context) error {
	const keys = 1000 // of each kind
	var mu sync.Mutex
	calls := map[string]int{}
	value := strings.Repeat("v", h.opts.dataSize)
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		fmt.Fprint(w, value)
	}))
	defer origin.Close()
	dir, err := os.MkdirTemp(h.tmp, "restart-fill-")
	if err != nil {
		return err
	}
	args := []string{"--dir", dir, "--loader", "r:=" + origin.URL + "/{key}"}
	s, err := h.startBuild(ctx, stampName, h.bin, h.opts.maxMem, args...)
	if err != nil {
		return err
	}
	c, err := dialRESP(s.Addr())
	if err != nil {
		s.Stop()
		return err
	}
	for i := range keys {
		// Fresh for an hour; fresh for a second, then an hour of grace.
		for _, cmd := range [][]string{{"GETFILL", fmt.Sprintf("r:fresh:%d", i), "3600", "3600"}, {"GETFILL", fmt.Sprintf("r:stale:%d", i), "1", "3600"}} {
			if r, err := c.do(cmd...); err != nil || !strings.HasPrefix(r, "$") {
				c.Close()
				s.Stop()
				return fmt.Errorf("restart test: %s: %q %v", strings.Join(cmd, " "), r, err)
			}
		}
	}
	if err := sleep(ctx, 1500*time.Millisecond); err != nil {
		return err
	}
	r, err := c.do("SAVE")
	c.Close()
	s.Stop() // a kill: the restart loads what SAVE wrote
	if err != nil || r != "+OK" {
		return fmt.Errorf("restart test: SAVE: %q %v", r, err)
	}
	mu.Lock()
	clear(calls)
	mu.Unlock()
	s, err = h.startBuild(ctx, stampName, h.bin, h.opts.maxMem, args...)
	if err != nil {
		return err
	}
	defer s.Stop()
	// Every key read by 20 clients at once, right after the start.
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range 20 {
		wg.Go(func() {
			c, err := dialRESP(s.Addr())
			if err != nil {
				failed.Add(1)
				return
			}
			defer c.Close()
			for i := range keys {
				k := (i + w*keys/20) % keys
				for _, key := range []string{fmt.Sprintf("r:fresh:%d", k), fmt.Sprintf("r:stale:%d", k)} {
					if r, err := c.do("GETFILL", key, "3600", "3600"); err != nil || !strings.HasPrefix(r, "$") {
						failed.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	// The stale keys' refreshes run in the background: wait for them.
	count := func() (fresh, stale, most int) {
		mu.Lock()
		defer mu.Unlock()
		for path, n := range calls {
			if strings.Contains(path, ":fresh:") {
				fresh += n
			} else {
				stale += n
			}
			most = max(most, n)
		}
		return fresh, stale, most
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if _, stale, _ := count(); stale >= keys {
			break
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return err
		}
	}
	if err := sleep(ctx, 200*time.Millisecond); err != nil { // any call past the one per key
		return err
	}
	fresh, stale, most := count()
	fmt.Fprintf(h.out, "\n### A restart under reads: %d fresh and %d stale keys (GETFILL), SAVE, a kill, a start on the same --dir, 20 clients reading every key\n\n", keys, keys)
	fmt.Fprintln(h.out, "| origin calls for fresh keys (target 0) | for stale keys (target 1 each) | most for one key | reads that failed |")
	fmt.Fprintln(h.out, "|---:|---:|---:|---:|")
	fmt.Fprintf(h.out, "| %d %s | %d %s | %d | %d |\n", fresh, mark(fresh == 0), stale, mark(stale == keys && most <= 1), most, failed.Load())
	return nil
}

// stampede sends GETFILL of one cold key from -stampede-clients connections
// at once and reports the origin calls, the callers answered and the PING
// round trips measured meanwhile.
func (h *harness) stampede(ctx context.Context, s *server, calls *atomic.Int64, delay time.Duration) error {
	clients := h.opts.stampedeClients
	before := calls.Load()
	conns := make([]net.Conn, 0, clients)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range clients {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			return fmt.Errorf("stampede: dialing client %d: %w (raise ulimit -n)", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	pinger, err := dialRESP(s.Addr())
	if err != nil {
		return err
	}
	defer pinger.Close()
	stop := make(chan struct{})
	var rtts []time.Duration
	var pingErr error
	var pings sync.WaitGroup
	pings.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			start := time.Now()
			if r, err := pinger.do("PING"); err != nil || r != "+PONG" {
				pingErr = fmt.Errorf("PING during the stampede: %q %v", r, err)
				return
			}
			rtts = append(rtts, time.Since(start))
		}
	})
	req := []byte("*4\r\n$7\r\nGETFILL\r\n$10\r\nfill:stamp\r\n$2\r\n60\r\n$2\r\n10\r\n")
	start := time.Now()
	for _, c := range conns {
		if _, err := c.Write(req); err != nil {
			close(stop)
			pings.Wait()
			return fmt.Errorf("stampede: sending: %w", err)
		}
	}
	var answered, wrong atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			c.SetReadDeadline(time.Now().Add(time.Minute))
			r, err := readRESPLine(bufio.NewReader(c))
			switch {
			case err != nil:
			case strings.HasPrefix(r, "$"):
				answered.Add(1)
			default:
				wrong.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	pings.Wait()
	if pingErr != nil {
		return pingErr
	}
	slices.Sort(rtts)
	p99, worst := time.Duration(0), time.Duration(0)
	if len(rtts) > 0 {
		p99, worst = rtts[len(rtts)*99/100], rtts[len(rtts)-1]
	}
	origin := calls.Load() - before
	fmt.Fprintf(h.out, "\n### A stampede: %d clients GETFILL one cold key (origin answers in %v)\n\n", clients, delay)
	fmt.Fprintln(h.out, "| origin calls | callers answered | other replies | all answered in s | PINGs meanwhile | PING p99 ms | PING max ms |")
	fmt.Fprintln(h.out, "|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Fprintf(h.out, "| %d %s | %d %s | %d | %.2f | %d | %.3f | %.3f |\n", origin, mark(origin == 1), answered.Load(),
		mark(answered.Load() == int64(clients)), wrong.Load(), took.Seconds(), len(rtts),
		float64(p99)/float64(time.Millisecond), float64(worst)/float64(time.Millisecond))
	return nil
}

// respConn is one connection to a server for the few commands a test
// sends itself, each answered by one line (a status, an error, an integer,
// or a bulk string's header and body).
type respConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRESP(addr string) (*respConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &respConn{Conn: c, r: bufio.NewReader(c)}, nil
}

func (c *respConn) do(args ...string) (string, error) {
	bw := bufio.NewWriter(c)
	bargs := make([][]byte, len(args))
	for i, a := range args {
		bargs[i] = []byte(a)
	}
	writeCommand(bw, bargs...)
	if err := bw.Flush(); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	return readRESPLine(c.r)
}

// readRESPLine reads one reply's first line, and a bulk string's body.
func readRESPLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if strings.HasPrefix(line, "$") {
		if n, err := strconv.Atoi(line[1:]); err == nil && n >= 0 {
			body := make([]byte, n+2)
			if _, err := io.ReadFull(r, body); err != nil {
				return "", err
			}
		}
	}
	return line, nil
}
