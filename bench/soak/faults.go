package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// faultCounts counts the faults injected, by kind.
type faultCounts struct {
	halfCommand  atomic.Int64 // a command cut off mid-argument, then the socket closed
	halfPipeline atomic.Int64 // whole commands, then a cut one, closed without reading
	fillAbandon  atomic.Int64 // a GETFILL of a cold key sent, the socket closed before the answer
	subscribeRST atomic.Int64 // SUBSCRIBE, then the socket reset
	bigBulkCut   atomic.Int64 // a 1 MiB bulk announced, 100 bytes sent, closed
	clientKill   atomic.Int64 // CLIENT KILL ID of a random client connection
	redisKill    atomic.Int64 // redis-server SIGKILLed, restarted on its port
	redisStop    atomic.Int64 // redis-server SIGSTOPped, then SIGCONTed
}

// rawFaults is the client-side fault of a connection that dies mid-command,
// one at random every interval, against a random main server.
func (h *harness) rawFaults(ctx context.Context, every time.Duration) {
	for ctx.Err() == nil {
		pause(ctx, every/2+rand.N(every))
		srv := h.mains[rand.IntN(len(h.mains))]
		conn, err := net.DialTimeout("tcp", srv.Addr(), time.Second)
		if err != nil {
			continue
		}
		switch rand.IntN(5) {
		case 0:
			conn.Write([]byte("*3\r\n$3\r\nSET\r\n$9\r\njunk:half\r\n$100\r\nonly part of the value"))
			h.f.halfCommand.Add(1)
		case 1:
			conn.Write([]byte("*2\r\n$3\r\nGET\r\n$5\r\nmix:1\r\n*3\r\n$3\r\nSET\r\n$5\r\nmix:2\r\n$1\r\nv\r\n*2\r\n$4\r\nINCR\r\n$3\r\nct"))
			h.f.halfPipeline.Add(1)
		case 2:
			key := "fill:cold:" + strconv.FormatUint(rand.Uint64(), 36)
			fmt.Fprintf(conn, "*4\r\n$7\r\nGETFILL\r\n$%d\r\n%s\r\n$1\r\n1\r\n$1\r\n0\r\n", len(key), key)
			h.f.fillAbandon.Add(1)
		case 3:
			conn.Write([]byte("*2\r\n$9\r\nSUBSCRIBE\r\n$9\r\nsoak:ch:0\r\n"))
			conn.SetReadDeadline(time.Now().Add(time.Second))
			bufio.NewReader(conn).ReadString('\n') // subscribed (or not), then reset
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			h.f.subscribeRST.Add(1)
		case 4:
			conn.Write([]byte("*3\r\n$3\r\nSET\r\n$8\r\njunk:big\r\n$1048576\r\n" + strings.Repeat("b", 100)))
			h.f.bigBulkCut.Add(1)
		}
		conn.Close()
	}
}

// clientKills sends CLIENT KILL ID for a random connection of a random main
// server every interval, sparing the soak's admin and timed connections.
func (h *harness) clientKills(ctx context.Context, every time.Duration) {
	for ctx.Err() == nil {
		pause(ctx, every/2+rand.N(every))
		srv := h.mains[rand.IntN(len(h.mains))]
		list, err := srv.admin.ClientList(ctx).Result()
		if err != nil {
			continue
		}
		var ids []string
		for _, line := range strings.Split(list, "\n") {
			var id, name string
			for _, f := range strings.Fields(line) {
				if v, ok := strings.CutPrefix(f, "id="); ok {
					id = v
				}
				if v, ok := strings.CutPrefix(f, "name="); ok {
					name = v
				}
			}
			if id != "" && name != nameAdmin && name != nameTimed {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		if srv.admin.Do(ctx, "CLIENT", "KILL", "ID", ids[rand.IntN(len(ids))]).Err() == nil {
			h.f.clientKill.Add(1)
		}
	}
}

// redisFaults kills redis-server (restarting it on its port after 1–3 s,
// empty) or stops it with SIGSTOP for 0.5–2 s, one or the other every
// interval, and records each as a window in which the fleet may load a key
// more than once. A fault under way when ctx ends is finished: Redis is
// running when it returns. A restarted Redis lives as long as life.
func (h *harness) redisFaults(ctx, life context.Context, every time.Duration) error {
	for {
		pause(ctx, every/2+rand.N(every))
		if ctx.Err() != nil {
			return nil
		}
		from := time.Now()
		if h.o.redisKill && (!h.o.redisStop || rand.IntN(2) == 0) {
			h.logf("fault: SIGKILL redis-server (pid %d)", h.redis.Pid())
			h.redis.Kill()
			h.f.redisKill.Add(1)
			time.Sleep(time.Second + rand.N(2*time.Second))
			// Restarted for the program's life, not the run's: Redis must
			// come back even when the run is ending.
			srv, err := h.redis.Restart(life)
			if err != nil {
				return fmt.Errorf("restarting redis-server: %w", err)
			}
			h.redis = srv // only this goroutine uses h.redis while the run lasts
			h.logf("fault: redis-server back (pid %d)", srv.Pid())
		} else {
			h.logf("fault: SIGSTOP redis-server (pid %d)", h.redis.Pid())
			h.redis.Signal(syscall.SIGSTOP)
			h.f.redisStop.Add(1)
			time.Sleep(500*time.Millisecond + rand.N(1500*time.Millisecond))
			h.redis.Signal(syscall.SIGCONT)
			h.logf("fault: SIGCONT redis-server")
		}
		h.addWindow(window{from: from, to: time.Now().Add(redisSettle)})
	}
}

// redisSettle is how long after Redis returns the fleet may still load a
// key more than once: the replicas' heartbeat (500 ms) notices Redis back,
// and a load started while it was away may still run.
const redisSettle = 2 * time.Second

// windows guards the fault windows the origin check excuses.
type windows struct {
	mu sync.Mutex
	ws []window
}

func (h *harness) addWindow(w window) {
	h.win.mu.Lock()
	defer h.win.mu.Unlock()
	h.win.ws = append(h.win.ws, w)
}

func (h *harness) windows() []window {
	h.win.mu.Lock()
	defer h.win.mu.Unlock()
	return append([]window(nil), h.win.ws...)
}
