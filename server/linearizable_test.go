package server

// Every command atomic on any number of event loops, checked as a
// linearizability property: clients on several loops run random commands
// on a few keys, their history (each command's call and return times and
// reply) is recorded, and porcupine searches for one order of the commands,
// consistent with the times, in which a sequential model of Redis gives
// every reply seen. The same clients and model run against redis-server in
// the same test, so a model that is wrong fails there first.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/rdb"
)

// linKeys are the keys the clients share: few, so that they collide.
var linKeys = [...]string{"lk:a", "lk:b", "lk:c"}

// linKey is the model's state of one key.
type linKey struct {
	kind byte   // 0: missing, 's': a string, 'l': a list
	s    string // a string's value
	n    int    // a list's length
}

// linState is the model's state: every key's, comparable with ==.
type linState [len(linKeys)]linKey

// linOp is one command a client sent: its name, the keys (by index in
// linKeys) and the value it wrote.
type linOp struct {
	name    string
	k1, k2  int
	val     string
	replace bool
}

// linList is the payload RESTORE writes: a list of three elements.
var linList = string(rdb.Dump(&rdb.Entry{Kind: rdb.KindList, Members: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}))

const (
	linWrongType = "err:WRONGTYPE"
	linNotInt    = "err:NOTINT"
	linBusy      = "err:BUSYKEY"
)

// do sends op and renders the reply as the model does.
func (op linOp) do(ctx context.Context, c *redis.Client) string {
	k1, k2 := linKeys[op.k1], linKeys[op.k2]
	var cmd *redis.Cmd
	switch op.name {
	case "set":
		cmd = c.Do(ctx, "SET", k1, op.val)
	case "get":
		cmd = c.Do(ctx, "GET", k1)
	case "incr":
		cmd = c.Do(ctx, "INCR", k1)
	case "getdel":
		cmd = c.Do(ctx, "GETDEL", k1)
	case "setget":
		cmd = c.Do(ctx, "SET", k1, op.val, "GET")
	case "msetnx":
		cmd = c.Do(ctx, "MSETNX", k1, op.val, k2, op.val)
	case "del":
		cmd = c.Do(ctx, "DEL", k1)
	case "restore":
		if op.replace {
			cmd = c.Do(ctx, "RESTORE", k1, 0, linList, "REPLACE")
		} else {
			cmd = c.Do(ctx, "RESTORE", k1, 0, linList)
		}
	case "llen":
		cmd = c.Do(ctx, "LLEN", k1)
	case "rpush":
		cmd = c.Do(ctx, "RPUSH", k1, op.val)
	}
	v, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "nil"
	case err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE"):
		return linWrongType
	case err != nil && strings.HasPrefix(err.Error(), "BUSYKEY"):
		return linBusy
	case err != nil && strings.Contains(err.Error(), "not an integer"):
		return linNotInt
	case err != nil:
		return "err:" + err.Error()
	}
	switch v := v.(type) {
	case int64:
		return "i:" + strconv.FormatInt(v, 10)
	case string:
		return "s:" + v
	}
	return fmt.Sprintf("?%v", v)
}

// step is the sequential model: what Redis answers op in state st, and
// the state after it.
func (op linOp) step(st linState) (string, linState) {
	k, k2 := st[op.k1], st[op.k2]
	switch op.name {
	case "set":
		st[op.k1] = linKey{kind: 's', s: op.val}
		return "s:OK", st
	case "get", "getdel":
		switch k.kind {
		case 0:
			return "nil", st
		case 'l':
			return linWrongType, st
		}
		if op.name == "getdel" {
			st[op.k1] = linKey{}
		}
		return "s:" + k.s, st
	case "incr":
		switch k.kind {
		case 'l':
			return linWrongType, st
		case 0:
			k.s = "0"
		}
		n, err := strconv.ParseInt(k.s, 10, 64)
		if err != nil {
			return linNotInt, st
		}
		st[op.k1] = linKey{kind: 's', s: strconv.FormatInt(n+1, 10)}
		return "i:" + strconv.FormatInt(n+1, 10), st
	case "setget":
		switch k.kind {
		case 'l':
			return linWrongType, st
		case 0:
			st[op.k1] = linKey{kind: 's', s: op.val}
			return "nil", st
		}
		st[op.k1] = linKey{kind: 's', s: op.val}
		return "s:" + k.s, st
	case "msetnx":
		if k.kind != 0 || k2.kind != 0 {
			return "i:0", st
		}
		st[op.k1] = linKey{kind: 's', s: op.val}
		st[op.k2] = linKey{kind: 's', s: op.val}
		return "i:1", st
	case "del":
		if k.kind == 0 {
			return "i:0", st
		}
		st[op.k1] = linKey{}
		return "i:1", st
	case "restore":
		if k.kind != 0 && !op.replace {
			return linBusy, st
		}
		st[op.k1] = linKey{kind: 'l', n: 3}
		return "s:OK", st
	case "llen":
		switch k.kind {
		case 's':
			return linWrongType, st
		}
		return "i:" + strconv.Itoa(k.n), st
	case "rpush":
		if k.kind == 's' {
			return linWrongType, st
		}
		st[op.k1] = linKey{kind: 'l', n: k.n + 1}
		return "i:" + strconv.Itoa(k.n+1), st
	}
	return "?", st
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		want, next := input.(linOp).step(state.(linState))
		return want == output.(string), next
	},
	DescribeOperation: func(input, output any) string {
		op := input.(linOp)
		return fmt.Sprintf("%s %s %s %q -> %s", op.name, linKeys[op.k1], linKeys[op.k2], op.val, output)
	},
}

// randomLinOp draws a command.
func randomLinOp(r *rand.Rand) linOp {
	names := [...]string{"set", "get", "incr", "getdel", "setget", "msetnx", "del", "restore", "restore", "llen", "rpush"}
	op := linOp{name: names[r.IntN(len(names))], k1: r.IntN(len(linKeys)), val: strconv.Itoa(r.IntN(5))}
	op.k2 = (op.k1 + 1 + r.IntN(len(linKeys)-1)) % len(linKeys)
	op.replace = r.IntN(2) == 0
	if op.name == "set" && r.IntN(3) == 0 {
		op.val = "x" // not an integer: INCR's error
	}
	return op
}

// linHistory runs clients clients of ops commands each against addr and
// returns their history.
func linHistory(t *testing.T, addr string, clients, ops int, seed uint64) []porcupine.Operation {
	t.Helper()
	ctx := context.Background()
	start := time.Now()
	var mu sync.Mutex
	var history []porcupine.Operation
	var wg sync.WaitGroup
	for id := range clients {
		wg.Go(func() {
			c := redis.NewClient(&redis.Options{Addr: addr})
			defer c.Close()
			r := rand.New(rand.NewPCG(seed, uint64(id)))
			for range ops {
				op := randomLinOp(r)
				call := time.Since(start).Nanoseconds()
				out := op.do(ctx, c)
				ret := time.Since(start).Nanoseconds()
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: id, Input: op, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return history
}

// TestCommandsAreLinearizable: the history of many clients on several event
// loops has a sequential order that the model of Redis accepts, as
// redis-server's has.
func TestCommandsAreLinearizable(t *testing.T) {
	const clients, ops = 8, 150
	redisAddr := startRedis(t)
	check := func(t *testing.T, addr string, seed uint64) {
		redis.NewClient(&redis.Options{Addr: addr}).Del(context.Background(), linKeys[:]...)
		history := linHistory(t, addr, clients, ops, seed)
		switch res, info := porcupine.CheckOperationsVerbose(linModel, history, time.Minute); res {
		case porcupine.Illegal:
			t.Errorf("%d commands of %d clients have no order Redis's model accepts:\n%s", len(history), clients, linExplain(history, info))
		case porcupine.Unknown:
			t.Logf("the check of %d commands did not finish in a minute", len(history))
		}
	}
	t.Run("redis-server", func(t *testing.T) { check(t, redisAddr, 1) })
	for _, loops := range []int{4, 8} {
		t.Run(fmt.Sprintf("event-loops=%d", loops), func(t *testing.T) {
			ts := startServer(t, Options{EventLoops: loops})
			for seed := range uint64(3) {
				check(t, ts.addr, seed+2)
			}
		})
	}
}

// linExplain describes where the longest order the checker found stops:
// its last commands with the model's state after each, and the commands
// that could come next, none of which the model accepts there.
func linExplain(history []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var longest []int
	for _, partition := range info.PartialLinearizations() {
		for _, order := range partition {
			if len(order) > len(longest) {
				longest = order
			}
		}
	}
	var b strings.Builder
	st := linState{}
	done := map[int]bool{}
	for i, at := range longest {
		op := history[at]
		var out string
		out, st = op.Input.(linOp).step(st)
		done[at] = true
		if i >= len(longest)-6 {
			fmt.Fprintf(&b, "  ok   client %d [%d, %d] %s (model: %s) -> %+v\n", op.ClientId, op.Call, op.Return,
				linModel.DescribeOperation(op.Input, op.Output), out, st)
		}
	}
	first := int64(1 << 62)
	for i, op := range history {
		if !done[i] {
			first = min(first, op.Return)
		}
	}
	for i, op := range history {
		if !done[i] && op.Call <= first {
			want, _ := op.Input.(linOp).step(st)
			fmt.Fprintf(&b, "  next client %d [%d, %d] %s (model: %s)\n", op.ClientId, op.Call, op.Return,
				linModel.DescribeOperation(op.Input, op.Output), want)
		}
	}
	return b.String()
}
