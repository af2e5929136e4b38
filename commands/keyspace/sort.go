package keyspace

import (
	"math"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redisnum"
	"github.com/stampedeless/stampedeless/resp"
)

// SORT and SORT_RO (Redis's sort.c): the options are parsed in Redis's
// order, each error answered as the first bad option is met; the engine
// reads, sorts and stores at one instant.

func cmdSort(c *commands.Ctx, args [][]byte)   { sortCommand(c, args, false) }
func cmdSortRO(c *commands.Ctx, args [][]byte) { sortCommand(c, args, true) }

// sortCommand implements SORT key [BY pattern] [LIMIT offset count] [GET
// pattern ...] [ASC|DESC] [ALPHA] [STORE destination], and SORT_RO, to
// which STORE is a syntax error.
func sortCommand(c *commands.Ctx, args [][]byte, readonly bool) {
	q := engine.SortQuery{Count: -1, Weight: sortWeight, DenyOOM: !readonly, Ordered: c.Client.InScript()}
	var dst []byte
	for j := 2; j < len(args); j++ {
		left := len(args) - j - 1
		switch a := args[j]; {
		case resp.EqualFold(a, "asc"):
			q.Desc = false
		case resp.EqualFold(a, "desc"):
			q.Desc = true
		case resp.EqualFold(a, "alpha"):
			q.Alpha = true
		case resp.EqualFold(a, "limit") && left >= 2:
			var ok1, ok2 bool
			q.Offset, ok1 = resp.ParseInt(args[j+1])
			q.Count, ok2 = resp.ParseInt(args[j+2])
			if !ok1 || !ok2 {
				c.W.Error(commands.ErrNotInteger)
				return
			}
			j += 2
		case !readonly && resp.EqualFold(a, "store") && left >= 1:
			dst = args[j+1]
			j++
		case resp.EqualFold(a, "by") && left >= 1:
			q.By = args[j+1]
			if !engine.SortNamesKeys(q.By) {
				// Once a constant BY is given nothing is sorted, whatever
				// other BY follows, as in Redis.
				q.NoSort = true
			} else if !c.Client.ReadsAllKeys(args) {
				c.W.Error("ERR BY option of SORT denied due to insufficient ACL permissions.")
				return
			}
			j++
		case resp.EqualFold(a, "get") && left >= 1:
			if !c.Client.ReadsAllKeys(args) {
				c.W.Error("ERR GET option of SORT denied due to insufficient ACL permissions.")
				return
			}
			q.Get = append(q.Get, args[j+1])
			j++
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	res, err := c.Store.Sort(args[1], dst, q)
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case dst != nil:
		notifyStored(c, commands.EventList, "sortstore", dst, res.Stored > 0, res.Changed)
		c.W.Int(int64(res.Stored))
	default:
		c.W.Array(len(res.Values))
		for _, v := range res.Values {
			if v == nil {
				c.W.Null()
			} else {
				c.W.Bulk(v)
			}
		}
	}
}

// sortKeys finds SORT's keys as Redis's sortGetKeys does: the key, and
// the destination of the last STORE, skipping the arguments of LIMIT, GET
// and BY.
func sortKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	keys := [][]byte{args[1]}
	var dst []byte
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case resp.EqualFold(a, "limit"):
			i += 2
		case resp.EqualFold(a, "get"), resp.EqualFold(a, "by"):
			i++
		case resp.EqualFold(a, "store") && i+1 < len(args):
			dst = args[i+1]
		}
	}
	if dst != nil {
		keys = append(keys, dst)
	}
	return keys
}

// sortStoreKey finds the key a SORT changes: the destination of its last
// STORE, if any.
func sortStoreKey(args [][]byte) [][]byte {
	if keys := sortKeys(args); len(keys) > 1 {
		return keys[1:]
	}
	return nil
}

// sortROKeys finds SORT_RO's one key.
func sortROKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	return args[1:2]
}

// sortWeight reads a weight of a numeric SORT as Redis does with strtod:
// white space first is allowed, and what strtod reads must end the
// argument or be followed by a NUL byte (Redis reads a C string). NaN is
// refused, and so is every value strtod flags ERANGE: an overflow, and an
// underflow to a subnormal or zero that is not exact.
func sortWeight(b []byte) (float64, bool) {
	v, n, erange := redisnum.Strtod(b)
	return v, (n == len(b) || b[n] == 0) && !erange && !math.IsNaN(v)
}
