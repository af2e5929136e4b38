package server

// Every command atomic on any number of event loops, checked as a
// linearizability property: clients on several loops run random commands
// on a few keys, their history (each command's call and return times and
// reply) is recorded, and porcupine searches for one order of the commands,
// consistent with the times, in which a sequential model of Redis gives
// every reply seen. The same clients and model run against redis-server in
// the same test, so a model that is wrong fails there first.
//
// The commands are those whose atomicity is the handler's to keep: the
// ones that read or write two or three keys (MSETNX, LMOVE, RPOPLPUSH,
// SMOVE, SUNIONSTORE, SINTERSTORE, ZUNIONSTORE, BITOP, ZRANGESTORE, RENAME,
// RENAMENX, COPY), the ones that read before they write (INCR, GETDEL,
// GETEX, SET ... GET, RESTORE), deadlines (EXPIRE, PERSIST, TTL), reads of
// whole values, KEYS, and MULTI/EXEC and EVAL of two commands each.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/rdb"
)

// linKeys are the keys the clients share: two for each type, so that
// commands of one type collide on them, and more often meet a key of
// their type than not.
var linKeys = [...]string{"lk:s1", "lk:s2", "lk:l1", "lk:l2", "lk:S1", "lk:S2", "lk:z1", "lk:z2"}

// linFamily is each command's pair of keys: strings' (0), lists' (1),
// sets' (2) or sorted sets' (3); the commands of every type draw one.
var linFamily = map[string]int{
	"llen": 1, "rpush": 1, "lrange": 1, "lmove": 1, "rpoplpush": 1, "restore": 1,
	"sadd": 2, "smembers": 2, "smove": 2, "sunionstore": 2, "sinterstore": 2,
	"zadd": 3, "zrange": 3, "zunionstore": 3, "zrangestore": 3,
	"set": 0, "get": 0, "incr": 0, "getdel": 0, "getex": 0, "setget": 0, "msetnx": 0, "bitop": 0,
}

// linKey is the model's state of one key, comparable with ==.
type linKey struct {
	kind byte // 0: missing, 's': string, 'l': list, 'S': set, 'z': sorted set
	// v is the value: a string's bytes; a list's elements joined by
	// commas, head first; a set's one-letter members, sorted; a sorted
	// set's "member:score" pairs joined by commas, sorted by member.
	v   string
	ttl bool // the key has a deadline (always far ahead)
}

// linState is the model's state: every key's, comparable with ==.
type linState [len(linKeys)]linKey

// linCmd is one command: its name, the keys it names (by index in
// linKeys), the value or member it writes and its flag (REPLACE).
type linCmd struct {
	name       string
	k1, k2, k3 int
	val        string
	replace    bool
}

// linOp is what a client sent: one command, or two in MULTI/EXEC
// (how "multi") or in one EVAL (how "eval").
type linOp struct {
	how  string
	cmds []linCmd
}

// linList is the payload RESTORE writes: a list of three elements.
var linList = string(rdb.Dump(&rdb.Entry{Kind: rdb.KindList, Members: [][]byte{[]byte("a"), []byte("b"), []byte("c")}}))

// The errors the model tells apart.
const (
	linWrongType = "err:WRONGTYPE"
	linNotInt    = "err:NOTINT"
	linBusy      = "err:BUSYKEY"
	linNoKey     = "err:NOSUCHKEY"
)

// args is the command as sent.
func (c linCmd) args() []any {
	k1, k2, k3 := linKeys[c.k1], linKeys[c.k2], linKeys[c.k3]
	switch c.name {
	case "set", "rpush", "sadd":
		return []any{c.name, k1, c.val}
	case "setget":
		return []any{"set", k1, c.val, "get"}
	case "msetnx":
		return []any{"msetnx", k1, c.val, k2, c.val}
	case "restore":
		if c.replace {
			return []any{"restore", k1, "0", linList, "replace"}
		}
		return []any{"restore", k1, "0", linList}
	case "lrange":
		return []any{"lrange", k1, "0", "-1"}
	case "lmove":
		return []any{"lmove", k1, k2, "left", "right"}
	case "rpoplpush", "rename", "renamenx":
		return []any{c.name, k1, k2}
	case "smove":
		return []any{"smove", k1, k2, c.val}
	case "sunionstore", "sinterstore":
		return []any{c.name, k3, k1, k2}
	case "bitop":
		return []any{"bitop", "or", k3, k1, k2}
	case "zadd":
		return []any{"zadd", k1, c.val, c.val}
	case "zrange":
		return []any{"zrange", k1, "0", "-1", "withscores"}
	case "zunionstore":
		return []any{"zunionstore", k3, "2", k1, k2}
	case "zrangestore":
		return []any{"zrangestore", k3, k1, "0", "-1"}
	case "copy":
		if c.replace {
			return []any{"copy", k1, k2, "replace"}
		}
		return []any{"copy", k1, k2}
	case "expire":
		return []any{"expire", k1, "100"}
	case "keys":
		return []any{"keys", "lk:*"}
	case "getex":
		return []any{"getex", k1, "ex", "100"}
	}
	return []any{c.name, k1} // get, incr, getdel, del, llen, smembers, persist, ttl
}

// render writes a reply as the model does.
func (c linCmd) render(v any, err error) string {
	switch {
	case errors.Is(err, redis.Nil):
		return "nil"
	case err != nil:
		return linError(err.Error())
	}
	return c.renderValue(v)
}

func (c linCmd) renderValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "nil"
	case redis.Error:
		return linError(v.Error())
	case int64:
		if c.name == "ttl" && v > 0 {
			return "i:+"
		}
		return "i:" + strconv.FormatInt(v, 10)
	case string:
		return "s:" + v
	case float64:
		return "f:" + strconv.FormatFloat(v, 'g', -1, 64)
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = c.renderValue(e)
		}
		if c.name == "smembers" || c.name == "keys" { // an order Redis does not keep
			slices.Sort(parts)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprintf("?%T %v", v, v)
}

func linError(text string) string {
	switch {
	case strings.HasPrefix(text, "WRONGTYPE"):
		return linWrongType
	case strings.HasPrefix(text, "BUSYKEY"):
		return linBusy
	case strings.Contains(text, "not an integer"):
		return linNotInt
	case strings.Contains(text, "no such key"):
		return linNoKey
	}
	return "err:" + text
}

// linScript runs its ARGV's commands, each as its length then its
// arguments, with redis.pcall, and returns their replies.
const linScript = `
local out, i = {}, 1
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  out[#out+1] = redis.pcall(unpack(ARGV, i+1, i+n))
  i = i + n + 1
end
return out`

// do sends op and renders its reply as the model does.
func (op linOp) do(ctx context.Context, c *redis.Client) string {
	switch op.how {
	case "multi":
		var cmds []*redis.Cmd
		_, _ = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for _, cmd := range op.cmds {
				cmds = append(cmds, p.Do(ctx, cmd.args()...))
			}
			return nil
		})
		if len(cmds) != len(op.cmds) {
			return "err:EXEC"
		}
		parts := make([]string, len(cmds))
		for i, cmd := range cmds {
			parts[i] = op.cmds[i].render(cmd.Result())
		}
		return strings.Join(parts, " ; ")
	case "eval":
		var argv []any
		for _, cmd := range op.cmds {
			args := cmd.args()
			argv = append(argv, len(args))
			argv = append(argv, args...)
		}
		v, err := c.Eval(ctx, linScript, linKeys[:], argv...).Result()
		replies, ok := v.([]any)
		if err != nil || !ok || len(replies) != len(op.cmds) {
			return fmt.Sprintf("err:EVAL %v %v", v, err)
		}
		parts := make([]string, len(replies))
		for i, r := range replies {
			parts[i] = op.cmds[i].renderValue(r)
		}
		return strings.Join(parts, " ; ")
	}
	return op.cmds[0].render(c.Do(ctx, op.cmds[0].args()...).Result())
}

// step is the sequential model: what Redis answers op in state st, and
// the state after it.
func (op linOp) step(st linState) (string, linState) {
	parts := make([]string, len(op.cmds))
	for i, cmd := range op.cmds {
		parts[i], st = cmd.step(st)
	}
	return strings.Join(parts, " ; "), st
}

// Encodings of the model's values.
func linSplit(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func linZSet(v string) map[string]int {
	z := map[string]int{}
	for _, pair := range linSplit(v) {
		m, score, _ := strings.Cut(pair, ":")
		z[m], _ = strconv.Atoi(score)
	}
	return z
}

func linZKey(z map[string]int) linKey {
	if len(z) == 0 {
		return linKey{}
	}
	var pairs []string
	for m, score := range z {
		pairs = append(pairs, m+":"+strconv.Itoa(score))
	}
	slices.Sort(pairs)
	return linKey{kind: 'z', v: strings.Join(pairs, ",")}
}

func linSetKey(members string) linKey {
	if members == "" {
		return linKey{}
	}
	b := []byte(members)
	slices.Sort(b)
	return linKey{kind: 'S', v: string(slices.Compact(b))}
}

// step is the sequential model of one command.
func (c linCmd) step(st linState) (string, linState) {
	k, k2 := st[c.k1], st[c.k2]
	isString := k.kind == 0 || k.kind == 's'
	switch c.name {
	case "set":
		st[c.k1] = linKey{kind: 's', v: c.val}
		return "s:OK", st
	case "get", "getdel", "getex":
		switch {
		case k.kind == 0:
			return "nil", st
		case !isString:
			return linWrongType, st
		case c.name == "getdel":
			st[c.k1] = linKey{}
		case c.name == "getex":
			st[c.k1].ttl = true
		}
		return "s:" + k.v, st
	case "incr":
		if !isString {
			return linWrongType, st
		}
		if k.kind == 0 {
			k.v = "0"
		}
		n, err := strconv.ParseInt(k.v, 10, 64)
		if err != nil {
			return linNotInt, st
		}
		st[c.k1] = linKey{kind: 's', v: strconv.FormatInt(n+1, 10), ttl: k.ttl}
		return "i:" + strconv.FormatInt(n+1, 10), st
	case "setget":
		if !isString {
			return linWrongType, st
		}
		st[c.k1] = linKey{kind: 's', v: c.val}
		if k.kind == 0 {
			return "nil", st
		}
		return "s:" + k.v, st
	case "bitop":
		if !isString || k2.kind != 0 && k2.kind != 's' {
			return linWrongType, st
		}
		res := []byte(k.v)
		if len(k2.v) > len(res) {
			res = append(res, make([]byte, len(k2.v)-len(res))...)
		}
		for i := range len(k2.v) {
			res[i] |= k2.v[i]
		}
		st[c.k3] = linKey{}
		if len(res) > 0 {
			st[c.k3] = linKey{kind: 's', v: string(res)}
		}
		return "i:" + strconv.Itoa(len(res)), st
	case "msetnx":
		if k.kind != 0 || k2.kind != 0 {
			return "i:0", st
		}
		st[c.k1] = linKey{kind: 's', v: c.val}
		st[c.k2] = linKey{kind: 's', v: c.val}
		return "i:1", st
	case "del":
		if k.kind == 0 {
			return "i:0", st
		}
		st[c.k1] = linKey{}
		return "i:1", st
	case "restore":
		if k.kind != 0 && !c.replace {
			return linBusy, st
		}
		st[c.k1] = linKey{kind: 'l', v: "a,b,c"}
		return "s:OK", st
	case "llen", "rpush", "lrange":
		if k.kind != 0 && k.kind != 'l' {
			return linWrongType, st
		}
		list := linSplit(k.v)
		switch c.name {
		case "rpush":
			list = append(list, c.val)
			st[c.k1] = linKey{kind: 'l', v: strings.Join(list, ","), ttl: k.ttl}
			return "i:" + strconv.Itoa(len(list)), st
		case "lrange":
			for i := range list {
				list[i] = "s:" + list[i]
			}
			return "[" + strings.Join(list, ",") + "]", st
		}
		return "i:" + strconv.Itoa(len(list)), st
	case "lmove", "rpoplpush":
		// Redis: a missing source answers nil whatever the destination.
		switch {
		case k.kind == 0:
			return "nil", st
		case k.kind != 'l', k2.kind != 0 && k2.kind != 'l':
			return linWrongType, st
		}
		src := linSplit(k.v)
		var e string
		if c.name == "lmove" {
			e, src = src[0], src[1:]
		} else {
			e, src = src[len(src)-1], src[:len(src)-1]
		}
		if c.k1 == c.k2 { // a rotation: the key is never empty
			if c.name == "lmove" {
				src = append(src, e)
			} else {
				src = append([]string{e}, src...)
			}
			st[c.k1].v = strings.Join(src, ",")
			return "s:" + e, st
		}
		st[c.k1] = linKey{kind: 'l', v: strings.Join(src, ","), ttl: k.ttl}
		if len(src) == 0 {
			st[c.k1] = linKey{}
		}
		dk := st[c.k2]
		dst := linSplit(dk.v)
		if c.name == "lmove" {
			dst = append(dst, e)
		} else {
			dst = append([]string{e}, dst...)
		}
		st[c.k2] = linKey{kind: 'l', v: strings.Join(dst, ","), ttl: dk.ttl}
		return "s:" + e, st
	case "sadd", "smembers":
		if k.kind != 0 && k.kind != 'S' {
			return linWrongType, st
		}
		if c.name == "smembers" {
			var members []string
			for _, m := range k.v {
				members = append(members, "s:"+string(m))
			}
			return "[" + strings.Join(members, ",") + "]", st
		}
		if strings.Contains(k.v, c.val) {
			return "i:0", st
		}
		next := linSetKey(k.v + c.val)
		next.ttl = k.ttl
		st[c.k1] = next
		return "i:1", st
	case "smove":
		switch {
		case k.kind == 0:
			return "i:0", st
		case k.kind != 'S', k2.kind != 0 && k2.kind != 'S':
			return linWrongType, st
		case !strings.Contains(k.v, c.val):
			return "i:0", st
		case c.k1 == c.k2:
			return "i:1", st
		}
		src := linSetKey(strings.ReplaceAll(k.v, c.val, ""))
		src.ttl = k.ttl && src.kind != 0
		st[c.k1] = src
		dst := linSetKey(k2.v + c.val)
		dst.ttl = k2.ttl
		st[c.k2] = dst
		return "i:1", st
	case "sunionstore", "sinterstore":
		if k.kind != 0 && k.kind != 'S' || k2.kind != 0 && k2.kind != 'S' {
			return linWrongType, st
		}
		members := k.v + k2.v
		if c.name == "sinterstore" {
			members = ""
			for _, m := range k.v {
				if strings.ContainsRune(k2.v, m) {
					members += string(m)
				}
			}
		}
		st[c.k3] = linSetKey(members)
		return "i:" + strconv.Itoa(len(st[c.k3].v)), st
	case "zadd":
		if k.kind != 0 && k.kind != 'z' {
			return linWrongType, st
		}
		z := linZSet(k.v)
		_, had := z[c.val]
		z[c.val], _ = strconv.Atoi(c.val)
		next := linZKey(z)
		next.ttl = k.ttl
		st[c.k1] = next
		return "i:" + strconv.Itoa(1-linInt(had)), st
	case "zrange":
		if k.kind != 0 && k.kind != 'z' {
			return linWrongType, st
		}
		z := linZSet(k.v)
		members := make([]string, 0, len(z))
		for m := range z {
			members = append(members, m)
		}
		slices.SortFunc(members, func(a, b string) int {
			if z[a] != z[b] {
				return z[a] - z[b]
			}
			return strings.Compare(a, b)
		})
		for i, m := range members {
			members[i] = "[s:" + m + ",f:" + strconv.Itoa(z[m]) + "]"
		}
		return "[" + strings.Join(members, ",") + "]", st
	case "zunionstore":
		union := map[string]int{}
		for _, src := range []linKey{k, k2} {
			switch src.kind {
			case 0:
			case 'S': // a set's members count with score 1
				for _, m := range src.v {
					union[string(m)]++
				}
			case 'z':
				for m, score := range linZSet(src.v) {
					union[m] += score
				}
			default:
				return linWrongType, st
			}
		}
		st[c.k3] = linZKey(union)
		return "i:" + strconv.Itoa(len(union)), st
	case "zrangestore":
		if k.kind != 0 && k.kind != 'z' {
			return linWrongType, st
		}
		z := linZSet(k.v)
		st[c.k3] = linZKey(z)
		return "i:" + strconv.Itoa(len(z)), st
	case "rename", "renamenx":
		switch {
		case k.kind == 0:
			return linNoKey, st
		case c.name == "rename" && c.k1 == c.k2:
			return "s:OK", st
		case c.name == "renamenx" && (c.k1 == c.k2 || k2.kind != 0):
			return "i:0", st
		}
		st[c.k2], st[c.k1] = k, linKey{}
		if c.name == "renamenx" {
			return "i:1", st
		}
		return "s:OK", st
	case "copy":
		if k.kind == 0 || k2.kind != 0 && !c.replace {
			return "i:0", st
		}
		st[c.k2] = k
		return "i:1", st
	case "expire":
		if k.kind == 0 {
			return "i:0", st
		}
		st[c.k1].ttl = true
		return "i:1", st
	case "persist":
		if !k.ttl {
			return "i:0", st
		}
		st[c.k1].ttl = false
		return "i:1", st
	case "keys":
		var keys []string
		for i, k := range st {
			if k.kind != 0 {
				keys = append(keys, "s:"+linKeys[i])
			}
		}
		slices.Sort(keys)
		return "[" + strings.Join(keys, ",") + "]", st
	case "ttl":
		switch {
		case k.kind == 0:
			return "i:-2", st
		case !k.ttl:
			return "i:-1", st
		}
		return "i:+", st
	}
	return "?", st
}

func linInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

var linModel = porcupine.Model{
	Init: func() any { return linState{} },
	Step: func(state, input, output any) (bool, any) {
		want, next := input.(linOp).step(state.(linState))
		return want == output.(string), next
	},
	DescribeOperation: func(input, output any) string {
		op := input.(linOp)
		var cmds []string
		for _, c := range op.cmds {
			args := c.args()
			if c.name == "restore" {
				args[3] = "<list a,b,c>"
			}
			cmds = append(cmds, strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
		}
		return fmt.Sprintf("%s%v -> %s", op.how, cmds, output)
	},
}

// linNames are the commands drawn, the common ones more than once.
var linNames = [...]string{
	"set", "set", "get", "incr", "getdel", "getex", "setget", "msetnx", "bitop", "del",
	"restore", "llen", "rpush", "rpush", "lrange", "lmove", "rpoplpush",
	"sadd", "sadd", "smembers", "smove", "smove", "sunionstore", "sinterstore",
	"zadd", "zadd", "zrange", "zunionstore", "zrangestore",
	"rename", "renamenx", "copy", "expire", "persist", "ttl", "keys",
}

// randomLinCmd draws a command.
func randomLinCmd(r *rand.Rand) linCmd {
	c := linCmd{name: linNames[r.IntN(len(linNames))]}
	family, ok := linFamily[c.name]
	if !ok || r.IntN(20) == 0 { // now and then another type's keys
		family = r.IntN(len(linKeys) / 2)
	}
	c.k1 = 2*family + r.IntN(2)
	c.k2 = c.k1 ^ 1
	c.k3 = 2*family + r.IntN(2)
	if c.name == "zunionstore" && r.IntN(3) == 0 {
		c.k2 = 2*2 + r.IntN(2) // a set, whose members count with score 1
	}
	switch c.name {
	case "lmove", "rpoplpush", "smove", "rename", "renamenx":
		if r.IntN(4) == 0 { // the same key, which each names a case of
			c.k2 = c.k1
		}
	}
	c.replace = r.IntN(2) == 0
	switch c.name {
	case "sadd", "smove":
		c.val = string(rune('a' + r.IntN(4)))
	case "set":
		c.val = strconv.Itoa(r.IntN(5))
		if r.IntN(3) == 0 {
			c.val = "x" // not an integer: INCR's error
		}
	default:
		c.val = strconv.Itoa(r.IntN(5))
	}
	return c
}

// randomLinOp draws what a client sends: mostly one command, sometimes two
// in MULTI/EXEC or in one script.
func randomLinOp(r *rand.Rand) linOp {
	switch r.IntN(10) {
	case 0:
		return linOp{how: "multi", cmds: []linCmd{randomLinCmd(r), randomLinCmd(r)}}
	case 1:
		op := linOp{how: "eval"}
		for len(op.cmds) < 2 {
			// A script's replies are RESP2's: ZRANGE's scores would be
			// strings there.
			if c := randomLinCmd(r); c.name != "zrange" {
				op.cmds = append(op.cmds, c)
			}
		}
		return op
	}
	return linOp{cmds: []linCmd{randomLinCmd(r)}}
}

// linErrors finds the errors in a rendered reply.
var linErrors = regexp.MustCompile(`err:[A-Z]*`)

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

// linRounds is how many histories each server setting is checked on:
// LIN_ROUNDS in the environment (the soak sets more), else 3.
func linRounds() int {
	if n, err := strconv.Atoi(os.Getenv("LIN_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
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
		known := map[string]bool{linWrongType: true, linNotInt: true, linBusy: true, linNoKey: true}
		for _, op := range history {
			for _, e := range linErrors.FindAllString(op.Output.(string), -1) {
				if !known[e] {
					t.Fatalf("a reply the model does not know: %s", linModel.DescribeOperation(op.Input, op.Output))
				}
			}
		}
		switch res, info := porcupine.CheckOperationsVerbose(linModel, history, time.Minute); res {
		case porcupine.Illegal:
			t.Errorf("%d commands of %d clients (seed %d) have no order Redis's model accepts:\n%s",
				len(history), clients, seed, linExplain(history, info))
		case porcupine.Unknown:
			t.Logf("the check of %d commands did not finish in a minute", len(history))
		}
	}
	t.Run("redis-server", func(t *testing.T) {
		for seed := range uint64(2) {
			check(t, redisAddr, seed+100)
		}
	})
	for _, loops := range []int{4, 8} {
		t.Run(fmt.Sprintf("event-loops=%d", loops), func(t *testing.T) {
			ts := startServer(t, Options{EventLoops: loops})
			for seed := range uint64(linRounds()) {
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
