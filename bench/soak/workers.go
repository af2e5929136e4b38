package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client names the fault injector knows: CLIENT KILL never picks these.
const (
	nameAdmin = "soak-admin"      // the soak's own probes and injections
	nameTimed = "soak-fill-timed" // GETFILL callers whose waits are checked
)

// fillTimeoutsMs are the TIMEOUTs the GETFILL callers send; lateness is
// measured against each call's own.
var fillTimeoutsMs = []int{50, 200, 500}

// lateSlack is how far past its TIMEOUT a GETFILL may answer.
const lateSlack = 50 * time.Millisecond

// clientTimeout is how long a go-redis client in its default configuration
// waits for a reply before it gives up on the server (Options.ReadTimeout):
// no command of the soak's clients may take longer, whatever the faults.
const clientTimeout = 3 * time.Second

// tally counts what the clients did. Every field is safe for concurrent use.
type tally struct {
	ops, opErrors       atomic.Int64 // mixed GET/SET/INCR/... and their errors
	pipelines           atomic.Int64
	fills               atomic.Int64
	fillValues          atomic.Int64
	fillLoadErrs        atomic.Int64 // -LOADERR
	fillTimeouts        atomic.Int64 // -TIMEOUT
	fillOtherErrs       atomic.Int64 // connection errors and anything else
	fillWrongValue      atomic.Int64 // a value that is not the key's
	fillTimed           atomic.Int64
	fillMaxOver         atomic.Int64 // ns by which the latest timed answer passed its TIMEOUT
	published, received atomic.Int64
	pubOutOfOrder       atomic.Int64
	pubDuplicates       atomic.Int64
	txRuns, txTorn      atomic.Int64
	txErrors            atomic.Int64
	churnWrites         atomic.Int64
	churnErrors         atomic.Int64
	commands            atomic.Int64 // commands and pipelines the clients sent (waitHook)
	longestWait         atomic.Int64 // ns, the longest any of them took

	mu      sync.Mutex
	late    []lateCall    // timed answers past TIMEOUT + lateSlack
	overdue []overdueCall // commands that waited past clientTimeout
}

// overdueCall is a command or pipeline whose client waited longer than
// clientTimeout for it, or gave up on the server (a timeout error).
type overdueCall struct {
	what string // the command's name, or the pipeline's
	srv  *server
	at   time.Time
	took time.Duration
	err  error
}

// waitHook times every command and pipeline of one soak client (a go-redis
// hook), for the check that no client waits longer than its timeout.
type waitHook struct {
	t   *tally
	srv *server
}

func (w waitHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (w waitHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		t0 := time.Now()
		err := next(ctx, cmd)
		w.t.waited(ctx, w.srv, cmd.Name(), t0, err)
		return err
	}
}

func (w waitHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		t0 := time.Now()
		err := next(ctx, cmds)
		w.t.waited(ctx, w.srv, fmt.Sprintf("pipeline of %d", len(cmds)), t0, err)
		return err
	}
}

// waited records one command's wait, begun at t0, and keeps it if it was
// overdue: longer than clientTimeout (even if the end of the run cut it
// short), or ended by the client's own timeout during the run.
func (t *tally) waited(ctx context.Context, srv *server, what string, t0 time.Time, err error) {
	took := time.Since(t0)
	t.commands.Add(1)
	for {
		cur := t.longestWait.Load()
		if int64(took) <= cur || t.longestWait.CompareAndSwap(cur, int64(took)) {
			break
		}
	}
	var ne net.Error
	timedOut := ctx.Err() == nil && errors.As(err, &ne) && ne.Timeout()
	if took <= clientTimeout+lateSlack && !timedOut {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.overdue = append(t.overdue, overdueCall{what: what, srv: srv, at: t0, took: took, err: err})
}

// judgeOverdue describes the first few overdue commands, and returns how
// many there were.
func (h *harness) judgeOverdue() (n int, seen []string) {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	for i, c := range h.t.overdue {
		if i == 5 {
			seen = append(seen, fmt.Sprintf("... and %d more commands past the client's timeout", len(h.t.overdue)-5))
			break
		}
		end := c.at.Add(c.took)
		seen = append(seen, fmt.Sprintf("%s on %s at %s: answered after %v (%v); meanwhile the soak process stalled %v and the server's threads waited %v in all for a CPU",
			c.what, c.srv.Name, c.at.Format("15:04:05.000"), c.took.Round(time.Millisecond), errOrValue(c.err),
			h.stalls.within(c.at, end).Round(time.Millisecond), c.srv.cpuWait.within(c.at, end).Round(time.Millisecond)))
	}
	return len(h.t.overdue), seen
}

// lateCall is a timed GETFILL answered past its TIMEOUT plus lateSlack.
type lateCall struct {
	key         string
	srv         *server
	at          time.Time
	took, limit time.Duration
	answer      string
}

// noteLate records a late answer, to be judged at the end, when the
// samples that cover it have been taken.
func (t *tally) noteLate(c lateCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.late = append(t.late, c)
}

// judgeLate counts the late answers, apart from those during which the
// soak process itself stalled long enough to account for the lateness (the
// measurement cannot tell those from the server's), describes the first
// few, and every one in all. starved counts the counted ones during which
// the server's threads waited for a CPU at least as long, in all, as the
// lateness: likely, but not provably, a busy machine's doing.
func (h *harness) judgeLate() (counted, stalled, starved int, seen, all []string) {
	h.t.mu.Lock()
	defer h.t.mu.Unlock()
	var stalledSeen []string
	for _, c := range h.t.late {
		end := c.at.Add(c.took)
		stall, wait := h.stalls.within(c.at, end), c.srv.cpuWait.within(c.at, end)
		s := fmt.Sprintf("%s on %s at %s: TIMEOUT %v, answered after %v (%s); meanwhile the soak process stalled %v and the server's threads waited %v in all for a CPU",
			c.key, c.srv.Name, c.at.Format("15:04:05.000"), c.limit, c.took.Round(time.Millisecond), c.answer, stall.Round(time.Millisecond),
			wait.Round(time.Millisecond))
		all = append(all, s)
		over := c.took - c.limit - lateSlack
		if stall < over && wait >= over {
			starved++
		}
		switch {
		case stall >= over:
			stalled++
			if len(stalledSeen) < 3 {
				stalledSeen = append(stalledSeen, s+" (not counted)")
			}
		case len(seen) < 8:
			counted++
			seen = append(seen, s)
		default:
			counted++
		}
	}
	return counted, stalled, starved, append(seen, stalledSeen...), all
}

// newClient is a go-redis client in its default configuration, but for a
// name when the fault injector must recognize it.
func newClient(addr, name string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, ClientName: name})
}

// isRedisError reports whether err is a reply from the server (as opposed
// to a connection error or the end of the run).
func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// fillWorker loops GETFILL of the fill: keys, ttl 1 s and a grace of 0 or
// 1 s, each with a TIMEOUT from fillTimeouts. A timed worker checks that
// every answer came within its TIMEOUT plus lateSlack; its client is never
// killed, since a retry after a killed connection waits twice.
func (h *harness) fillWorker(ctx context.Context, srv *server, rdb *redis.Client, timed bool) {
	for ctx.Err() == nil {
		pause(ctx, h.o.pace)
		key := "fill:" + strconv.Itoa(rand.IntN(h.o.fillKeys))
		ms := fillTimeoutsMs[rand.IntN(len(fillTimeoutsMs))]
		t0 := time.Now()
		v, err := rdb.Do(ctx, "GETFILL", key, 1, rand.IntN(2), "TIMEOUT", ms).Text()
		took := time.Since(t0)
		if ctx.Err() != nil {
			return
		}
		h.t.fills.Add(1)
		switch {
		case err == nil:
			h.t.fillValues.Add(1)
			if !strings.HasPrefix(v, "value of "+key+", ") {
				h.t.fillWrongValue.Add(1)
			}
		case errors.Is(err, redis.Nil):
		case isRedisError(err) && strings.HasPrefix(err.Error(), "LOADERR"):
			h.t.fillLoadErrs.Add(1)
		case isRedisError(err) && strings.HasPrefix(err.Error(), "TIMEOUT"):
			h.t.fillTimeouts.Add(1)
		default:
			h.t.fillOtherErrs.Add(1)
		}
		if !timed {
			continue
		}
		h.t.fillTimed.Add(1)
		limit := time.Duration(ms) * time.Millisecond
		for over := int64(took - limit); ; {
			cur := h.t.fillMaxOver.Load()
			if over <= cur || h.t.fillMaxOver.CompareAndSwap(cur, over) {
				break
			}
		}
		if took > limit+lateSlack {
			h.t.noteLate(lateCall{key: key, srv: srv, at: t0, took: took, limit: limit, answer: errOrValue(err)})
		}
	}
}

func errOrValue(err error) string {
	if err == nil {
		return "a value"
	}
	return err.Error()
}

// mixedWorker sends GET, SET (some with EX), INCR, DEL, EXPIRE, MGET and
// pipelines of those over a keyspace of mix: and ctr: keys, checking only
// that the server answers.
func (h *harness) mixedWorker(ctx context.Context, rdb *redis.Client) {
	const keys = 5000
	mix := func() string { return "mix:" + strconv.Itoa(rand.IntN(keys)) }
	one := func(c redis.Cmdable) error {
		switch r := rand.IntN(10); {
		case r < 4:
			return c.Get(ctx, mix()).Err()
		case r < 6:
			return c.Set(ctx, mix(), strings.Repeat("m", 10+rand.IntN(500)), 0).Err()
		case r < 7:
			return c.Set(ctx, mix(), "x", time.Duration(1+rand.IntN(5))*time.Second).Err()
		case r < 8:
			return c.Incr(ctx, "ctr:"+strconv.Itoa(rand.IntN(100))).Err()
		case r < 9:
			return c.Del(ctx, mix()).Err()
		default:
			return c.MGet(ctx, mix(), mix(), mix()).Err()
		}
	}
	for ctx.Err() == nil {
		pause(ctx, h.o.pace)
		var err error
		if rand.IntN(10) == 0 {
			_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for range 10 {
					one(p)
				}
				return nil
			})
			h.t.pipelines.Add(1)
		} else {
			err = one(rdb)
		}
		if ctx.Err() != nil {
			return
		}
		h.t.ops.Add(1)
		if err != nil && !errors.Is(err, redis.Nil) {
			h.t.opErrors.Add(1)
		}
	}
}

// publisher publishes "<id>:<seq>" with an increasing seq to the soak
// channels, one at a time.
func (h *harness) publisher(ctx context.Context, rdb *redis.Client, id string) {
	for seq := 0; ctx.Err() == nil; seq++ {
		ch := "soak:ch:" + strconv.Itoa(rand.IntN(4))
		if rdb.Publish(ctx, ch, id+":"+strconv.Itoa(seq)).Err() == nil {
			h.t.published.Add(1)
		}
		pause(ctx, 2*time.Millisecond)
	}
}

// subscriber subscribes to the soak channels and to the pattern over them,
// and checks that each publisher's messages come in the order published,
// per subscription; after a killed connection go-redis resubscribes, and
// what was published meanwhile is lost, which is allowed.
func (h *harness) subscriber(ctx context.Context, rdb *redis.Client) {
	ps := rdb.Subscribe(ctx, "soak:ch:0", "soak:ch:1", "soak:ch:2", "soak:ch:3")
	defer ps.Close()
	if err := ps.PSubscribe(ctx, "soak:ch:*"); err != nil {
		return
	}
	last := map[string]int{} // (pattern or not, publisher) -> last seq
	msgs := ps.Channel()
	for {
		var m *redis.Message
		select {
		case <-ctx.Done():
			return
		case m = <-msgs:
		}
		id, s, ok := strings.Cut(m.Payload, ":")
		seq, err := strconv.Atoi(s)
		if !ok || err != nil {
			h.t.pubOutOfOrder.Add(1) // not a message we sent: worse than out of order
			continue
		}
		h.t.received.Add(1)
		k := m.Pattern + "|" + id
		prev, seen := last[k]
		switch {
		case seen && seq < prev:
			h.t.pubOutOfOrder.Add(1)
		case seen && seq == prev:
			h.t.pubDuplicates.Add(1) // a PUBLISH retried after a killed connection
		}
		last[k] = max(prev, seq)
	}
}

// multiSupported sends MULTI then DISCARD on a connection of its own.
func multiSupported(ctx context.Context, addr string) (bool, string) {
	rdb := newClient(addr, nameAdmin)
	defer rdb.Close()
	conn := rdb.Conn()
	defer conn.Close()
	if err := conn.Do(ctx, "MULTI").Err(); err != nil {
		return false, "MULTI answered: " + err.Error()
	}
	if err := conn.Do(ctx, "DISCARD").Err(); err != nil {
		return false, "DISCARD after MULTI answered: " + err.Error()
	}
	return true, "MULTI and DISCARD accepted"
}

// multiWorker runs MULTI; SET a v; INCR n; SET b v; EXEC on keys of its own
// and then reads a and b, which must hold the same value whether EXEC ran
// or not: a transaction is all or nothing.
func (h *harness) multiWorker(ctx context.Context, rdb *redis.Client, id int) {
	a, b, n := fmt.Sprintf("tx:%d:a", id), fmt.Sprintf("tx:%d:b", id), fmt.Sprintf("tx:%d:n", id)
	for seq := 0; ctx.Err() == nil; seq++ {
		pause(ctx, h.o.pace)
		v := strconv.Itoa(seq)
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, a, v, 0)
			p.Incr(ctx, n)
			p.Set(ctx, b, v, 0)
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		h.t.txRuns.Add(1)
		if err != nil {
			h.t.txErrors.Add(1)
		}
		vals, err := rdb.MGet(ctx, a, b).Result()
		if err != nil || ctx.Err() != nil {
			continue
		}
		if vals[0] != vals[1] {
			h.t.txTorn.Add(1)
		}
	}
}

// churnWorker writes new random keys with values of 64 B to 4 KiB to the
// churn server, in pipelines of 32, and reads a few back, so the store
// lives at its --max-memory bound, evicting.
func (h *harness) churnWorker(ctx context.Context, rdb *redis.Client) {
	for ctx.Err() == nil {
		pause(ctx, 5*h.o.pace)
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for range 32 {
				p.Set(ctx, "churn:"+strconv.FormatUint(rand.Uint64(), 36), strings.Repeat("c", 64+rand.IntN(4096-64)), 0)
			}
			p.Get(ctx, "churn:"+strconv.FormatUint(rand.Uint64(), 36))
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		h.t.churnWrites.Add(32)
		if err != nil && !errors.Is(err, redis.Nil) {
			h.t.churnErrors.Add(1)
		}
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
