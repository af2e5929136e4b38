package server

// Blocking list commands compared with redis-server where the difference
// would show: the order blocked clients are served in, what the pusher
// sees after its push, pushes inside MULTI and scripts, timeouts, CLIENT
// UNBLOCK, and clients that leave. Each scenario runs against both
// servers on fresh connections and writes a transcript; the transcripts
// must be the same. A client is known to be blocked when INFO's
// blocked_clients says so, never by sleeping.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/testwait"
)

// blockScenario drives some connections to one server and records what
// they were answered.
type blockScenario struct {
	name string
	run  func(t *testing.T, s *blockSession)
}

type blockSession struct {
	t     *testing.T
	addr  string
	conns []*compatConn
	out   []string
	ids   []string // client ids asked for, masked in the transcript
}

func (s *blockSession) conn(i int) *compatConn {
	for len(s.conns) <= i {
		s.conns = append(s.conns, dialCompat(s.t, s.addr))
	}
	return s.conns[i]
}

// do runs a command on connection i and records its reply.
func (s *blockSession) do(i int, line string) string {
	r := s.conn(i).run(compatExact, strings.Fields(line))
	shown := line
	for _, id := range s.ids {
		shown = strings.ReplaceAll(shown, " "+id, " <id>")
	}
	s.out = append(s.out, strconv.Itoa(i)+" "+shown+" -> "+r)
	return r
}

// send sends a command on connection i without reading its reply.
func (s *blockSession) send(i int, line string) {
	if err := s.conn(i).send(encodeCommand(strings.Fields(line)...)); err != nil {
		s.t.Fatal(err)
	}
}

// recv records the reply connection i has been sent.
func (s *blockSession) recv(i int) {
	r, err := s.conn(i).read()
	rendered := r.String()
	if err != nil {
		rendered = renderErr(err)
	}
	s.out = append(s.out, strconv.Itoa(i)+" <- "+rendered)
}

// blocked waits until n clients are blocked, asking on a connection of
// its own.
func (s *blockSession) blocked(n int) {
	s.t.Helper()
	c := dialCompat(s.t, s.addr)
	want := "blocked_clients:" + strconv.Itoa(n) + "\r\n"
	testwait.For(s.t, want, func() bool {
		r, err := c.do("INFO", "clients")
		return err == nil && strings.Contains(r.str, want)
	})
}

// id is connection i's client id.
func (s *blockSession) id(i int) string {
	r, err := s.conn(i).do("CLIENT", "ID")
	if err != nil {
		s.t.Fatal(err)
	}
	id := r.str
	s.ids = append(s.ids, id)
	return id
}

func blockScenarios() []blockScenario {
	return []blockScenario{
		{"bzpopmin-served-oldest-first", func(t *testing.T, s *blockSession) {
			for i := 1; i <= 2; i++ {
				s.send(i, "BZPOPMIN z 0")
				s.blocked(i)
			}
			s.do(0, "ZADD z 3 c 1 a 2 b")
			for i := 1; i <= 2; i++ {
				s.recv(i)
			}
			s.do(0, "ZRANGE z 0 -1 WITHSCORES")
		}},
		{"bzpopmax-several-keys-and-types", func(t *testing.T, s *blockSession) {
			s.send(1, "BZPOPMAX z1 z2 0")
			s.blocked(1)
			s.do(0, "SET z1 str")
			s.do(0, "RPUSH z2 notazset")
			s.do(0, "DEL z2")
			s.do(0, "ZADD z2 5 x 7.5 y")
			s.recv(1)
			s.do(0, "ZRANGE z2 0 -1 WITHSCORES")
		}},
		{"bzmpop-count-in-exec", func(t *testing.T, s *blockSession) {
			s.send(1, "BZMPOP 0 2 z1 z2 MAX COUNT 2")
			s.blocked(1)
			s.do(0, "MULTI")
			s.do(0, "ZADD z2 1 a 2 b 3 c")
			s.do(0, "ZCARD z2")
			s.do(0, "EXEC")
			s.recv(1)
			s.do(0, "ZRANGE z2 0 -1 WITHSCORES")
		}},
		{"bzpop-at-once-timeouts-and-errors", func(t *testing.T, s *blockSession) {
			s.do(0, "ZADD z 1 a 2 b")
			s.do(0, "BZPOPMIN z 0")
			s.do(0, "BZPOPMAX z 0")
			s.do(0, "BZPOPMIN z 0.01")
			s.do(0, "BZMPOP 0.01 1 z MIN")
			s.do(0, "BZPOPMIN z -1")
			s.do(0, "BZPOPMIN z x")
			s.do(0, "BZMPOP 0 0 z MIN")
			s.do(0, "BZMPOP 0 1 z SIDEWAYS")
			s.do(0, "BZMPOP 0 1 z MIN COUNT 0")
			s.do(0, "BZPOPMIN z")
			s.do(0, "SET s str")
			s.do(0, "BZPOPMIN s 0")
			s.do(0, "MULTI")
			s.do(0, "BZPOPMIN none 0")
			s.do(0, "BZMPOP 0 1 none MAX")
			s.do(0, "EXEC")
		}},
		{"served-oldest-first", func(t *testing.T, s *blockSession) {
			for i := 1; i <= 3; i++ {
				s.send(i, "BLPOP k 0")
				s.blocked(i)
			}
			s.do(0, "RPUSH k a b c d")
			for i := 1; i <= 3; i++ {
				s.recv(i)
			}
			s.do(0, "LRANGE k 0 -1")
		}},
		{"pusher-sees-it-taken", func(t *testing.T, s *blockSession) {
			s.send(1, "BRPOP k 0")
			s.blocked(1)
			s.do(0, "LPUSH k x")
			s.do(0, "LLEN k")
			s.do(0, "EXISTS k")
			s.recv(1)
		}},
		{"several-keys", func(t *testing.T, s *blockSession) {
			s.send(1, "BLPOP k1 k2 k3 0")
			s.blocked(1)
			s.do(0, "SET k1 str")
			s.do(0, "RPUSH k3 x y")
			s.recv(1)
			s.do(0, "LRANGE k3 0 -1")
		}},
		{"wrong-type-stays-blocked", func(t *testing.T, s *blockSession) {
			s.send(1, "BLPOP k 0")
			s.blocked(1)
			s.do(0, "SET k str")
			s.do(0, "DEL k")
			s.do(0, "RPUSH k x")
			s.recv(1)
		}},
		{"push-in-multi-wakes-after-exec", func(t *testing.T, s *blockSession) {
			s.send(1, "BLPOP k 0")
			s.blocked(1)
			s.do(0, "MULTI")
			s.do(0, "RPUSH k a b")
			s.do(0, "LLEN k")
			s.do(0, "LPOP k")
			s.do(0, "EXEC")
			s.recv(1)
			s.do(0, "LLEN k")
		}},
		{"push-in-script-wakes-after-it", func(t *testing.T, s *blockSession) {
			s.send(1, "BLMPOP 0 1 k RIGHT COUNT 5")
			s.blocked(1)
			s.do(0, "EVAL redis.call('RPUSH',KEYS[1],'a','b','c');return(redis.call('LLEN',KEYS[1])) 1 k")
			s.recv(1)
			s.do(0, "EXISTS k")
		}},
		{"blmove-chain", func(t *testing.T, s *blockSession) {
			s.send(1, "BLMOVE src mid RIGHT LEFT 0")
			s.blocked(1)
			s.send(2, "BRPOPLPUSH mid dst 0")
			s.blocked(2)
			s.do(0, "RPUSH src x")
			s.recv(1)
			s.recv(2)
			s.do(0, "LRANGE src 0 -1")
			s.do(0, "LRANGE mid 0 -1")
			s.do(0, "LRANGE dst 0 -1")
		}},
		{"blmove-destination-wrong-type", func(t *testing.T, s *blockSession) {
			s.do(0, "SET dst str")
			s.send(1, "BLMOVE src dst LEFT LEFT 0")
			s.blocked(1)
			s.do(0, "RPUSH src x")
			s.recv(1)
			s.do(0, "LRANGE src 0 -1")
		}},
		{"timeouts", func(t *testing.T, s *blockSession) {
			s.do(1, "BLPOP k 0.01")
			s.do(1, "BRPOP k 0.01")
			s.do(1, "BLMOVE k d LEFT LEFT 0.01")
			s.do(1, "BRPOPLPUSH k d 0.01")
			s.do(1, "BLMPOP 0.01 1 k LEFT")
			s.blocked(0)
			s.do(0, "RPUSH k x")
			s.do(0, "LLEN k")
		}},
		{"client-unblock", func(t *testing.T, s *blockSession) {
			id := s.id(1)
			s.do(0, "CLIENT UNBLOCK "+id)
			s.send(1, "BLPOP k 0")
			s.blocked(1)
			s.do(0, "CLIENT UNBLOCK "+id+" TIMEOUT")
			s.recv(1)
			s.do(0, "CLIENT UNBLOCK "+id)
			s.send(1, "BLMOVE k d LEFT LEFT 0")
			s.blocked(1)
			s.do(0, "CLIENT UNBLOCK "+id+" ERROR")
			s.recv(1)
			s.send(1, "BLMOVE k d LEFT LEFT 0")
			s.blocked(1)
			s.do(0, "CLIENT UNBLOCK "+id)
			s.recv(1)
			s.blocked(0)
			s.do(0, "RPUSH k x")
			s.do(0, "LLEN k")
		}},
		{"disconnect-loses-nothing", func(t *testing.T, s *blockSession) {
			s.send(1, "BLPOP k 0")
			s.send(2, "BLPOP k 0")
			s.blocked(2)
			s.conn(1).nc.Close()
			s.blocked(1)
			s.conn(2).nc.Close()
			s.blocked(0)
			s.do(0, "RPUSH k x")
			s.do(0, "LRANGE k 0 -1")
		}},
		{"rename-and-copy-wake", func(t *testing.T, s *blockSession) {
			s.send(1, "BLPOP k1 0")
			s.blocked(1)
			s.send(2, "BLPOP k2 0")
			s.blocked(2)
			s.do(0, "RPUSH src a b")
			s.do(0, "RENAME src k1")
			s.recv(1)
			s.do(0, "COPY k1 k2")
			s.recv(2)
			s.do(0, "LRANGE k1 0 -1")
			s.do(0, "LRANGE k2 0 -1")
		}},
		{"client-list-flags", func(t *testing.T, s *blockSession) {
			id := s.id(1)
			s.send(1, "BLPOP k 0")
			s.blocked(1)
			r, err := s.conn(0).do("CLIENT", "LIST", "ID", id)
			if err != nil {
				t.Fatal(err)
			}
			flags := strings.Fields(r.str)
			flags = slices.DeleteFunc(flags, func(f string) bool { return !strings.HasPrefix(f, "flags=") && !strings.HasPrefix(f, "cmd=") })
			s.out = append(s.out, strings.Join(flags, " "))
			s.do(0, "RPUSH k x")
			s.recv(1)
		}},
		{"pipelined-after-block", func(t *testing.T, s *blockSession) {
			s.send(1, "BLPOP k 0")
			s.send(1, "PING")
			s.blocked(1)
			s.do(0, "RPUSH k x")
			s.recv(1)
			s.recv(1)
		}},
	}
}

func TestBlockingCompat(t *testing.T) {
	redisAddr := startRedis(t)
	// One loop, and two: a waker and a blocked client on different loops.
	for _, loops := range []int{1, 2} {
		ts := startServer(t, Options{EventLoops: loops})
		for _, sc := range blockScenarios() {
			name := fmt.Sprintf("%s/loops=%d", sc.name, loops)
			t.Run(name, func(t *testing.T) {
				transcript := func(addr string) []string {
					flush := dialCompat(t, addr)
					if _, err := flush.do("FLUSHALL"); err != nil {
						t.Fatal(err)
					}
					s := &blockSession{t: t, addr: addr}
					sc.run(t, s)
					return s.out
				}
				want, got := transcript(redisAddr), transcript(ts.addr)
				if strings.Join(want, "\n") != strings.Join(got, "\n") {
					t.Errorf("redis:\n\t%s\nours:\n\t%s", strings.Join(want, "\n\t"), strings.Join(got, "\n\t"))
				}
				// Its clients served, timed out, unblocked or gone, none
				// is left blocked.
				r := dialRaw(t, ts.addr)
				testwait.For(t, "INFO to count no blocked client after the scenario", func() bool {
					return strings.Contains(r.do("INFO", "clients"), "blocked_clients:0"+`\r\n`)
				})
			})
		}
	}
}
