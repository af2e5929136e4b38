package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// checkerKeys is how many keys each read-your-writes checker owns.
const checkerKeys = 64

// rwResult sums the checkers' findings.
type rwResult struct {
	mu       sync.Mutex
	acked    int64 // acknowledged SETs
	unacked  int64 // SETs that got an error: their value may or may not be stored
	reads    int64 // reads compared with what was written
	lost     int64 // reads that did not return the acknowledged value
	evicted  int64 // misses while the server's evicted_keys had moved: not counted as lost
	examples []string
}

func (r *rwResult) add(c *rwChecker) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acked += c.acked
	r.unacked += c.unacked
	r.reads += c.reads
	r.lost += c.lost
	r.evicted += c.evictedMiss
	for _, e := range c.examples {
		if len(r.examples) < 5 {
			r.examples = append(r.examples, e)
		}
	}
}

// rwChecker owns checkerKeys keys on one server, writes them with SET
// (alone and in pipelines) and reads them back on the same server, later
// and at the end, as a client reading its own writes would.
//
// Soundness: only this checker writes its keys, with no expiry, and never
// more than a few KiB in all, on a server whose --max-memory is far above
// what the run stores and that takes no churn (the churn has its own
// server). A read must return the last acknowledged value, or a value whose
// SET got an error since (it may have been applied). A miss counts as lost
// only if the server's evicted_keys (which also counts keys refused at
// admission) is what it was before that value was written; so the check
// holds even if someone runs it with a bound the data does not fit.
type rwChecker struct {
	id   int
	rdb  *redis.Client
	srv  *server
	pace time.Duration // pause between operations

	keys   []string
	last   []string   // last acknowledged value per key, "" for none
	unsure [][]string // values written since, without an acknowledgement
	evAt   []int64    // the server's evicted_keys sampled before the acknowledged write
	seq    int

	acked, unacked, reads, lost, evictedMiss int64
	examples                                 []string
}

func newChecker(id int, rdb *redis.Client, srv *server, pace time.Duration) *rwChecker {
	c := &rwChecker{id: id, rdb: rdb, srv: srv, pace: pace, last: make([]string, checkerKeys),
		unsure: make([][]string, checkerKeys), evAt: make([]int64, checkerKeys)}
	for i := range checkerKeys {
		c.keys = append(c.keys, fmt.Sprintf("rw:%d:%d", id, i))
	}
	return c
}

// run writes and reads until ctx ends, then reads every key once more on
// a fresh context.
func (c *rwChecker) run(ctx context.Context) {
	for ctx.Err() == nil {
		pause(ctx, c.pace)
		switch r := rand.IntN(10); {
		case r < 5:
			c.set(ctx, rand.IntN(checkerKeys))
		case r < 7:
			c.pipeline(ctx)
		default:
			c.read(ctx, rand.IntN(checkerKeys))
		}
	}
	final, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range c.keys {
		c.read(final, i)
	}
}

func (c *rwChecker) value() string {
	c.seq++
	return strconv.Itoa(c.id) + ":" + strconv.Itoa(c.seq)
}

// wrote records the outcome of SET keys[i] v.
func (c *rwChecker) wrote(i int, v string, ev int64, err error) {
	if err != nil {
		c.unacked++
		c.unsure[i] = append(c.unsure[i], v)
		return
	}
	c.acked++
	c.last[i], c.unsure[i], c.evAt[i] = v, nil, ev
}

func (c *rwChecker) set(ctx context.Context, i int) {
	v, ev := c.value(), c.srv.evicted.Load()
	err := c.rdb.Set(ctx, c.keys[i], v, 0).Err()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err()) // cut short by the end of the run: unknown outcome
	}
	c.wrote(i, v, ev, err)
}

// pipeline SETs four keys and GETs them back in one pipeline.
func (c *rwChecker) pipeline(ctx context.Context) {
	idx := rand.Perm(checkerKeys)[:4]
	vals := make([]string, len(idx))
	ev := c.srv.evicted.Load()
	cmds, _ := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for n, i := range idx {
			vals[n] = c.value()
			p.Set(ctx, c.keys[i], vals[n], 0)
		}
		for _, i := range idx {
			p.Get(ctx, c.keys[i])
		}
		return nil
	})
	if len(cmds) != 2*len(idx) {
		return
	}
	for n, i := range idx {
		err := cmds[n].Err()
		if ctx.Err() != nil {
			err = errors.Join(err, ctx.Err())
		}
		c.wrote(i, vals[n], ev, err)
	}
	for n, i := range idx {
		get := cmds[len(idx)+n].(*redis.StringCmd)
		c.compare(ctx, i, get.Val(), get.Err())
	}
}

func (c *rwChecker) read(ctx context.Context, i int) {
	v, err := c.rdb.Get(ctx, c.keys[i]).Result()
	c.compare(ctx, i, v, err)
}

// compare checks what a GET of keys[i] returned.
func (c *rwChecker) compare(ctx context.Context, i int, got string, err error) {
	missing := errors.Is(err, redis.Nil)
	if err != nil && !missing {
		return // no answer: nothing to compare
	}
	c.reads++
	switch {
	case missing && c.last[i] == "":
		return // never acknowledged: nothing may be there yet
	case !missing && (got == c.last[i] || slices.Contains(c.unsure[i], got)):
		return
	case missing:
		now, err := c.srv.evictedNow(ctx)
		if err != nil {
			c.reads-- // cannot tell eviction from loss: not a checked read
			return
		}
		if now != c.evAt[i] {
			c.evictedMiss++
			return
		}
	}
	c.lost++
	if len(c.examples) < 5 {
		shown := strconv.Quote(got)
		if missing {
			shown = "nil"
		}
		c.examples = append(c.examples, fmt.Sprintf("%s on %s at %s: read %s, acknowledged %q (and %d unacknowledged writes since)",
			c.keys[i], c.srv.Name, time.Now().Format("15:04:05.000"), shown, c.last[i], len(c.unsure[i])))
	}
}
