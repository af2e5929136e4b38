package keyspace

import (
	"bytes"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// lcsMatch is one range LCS ... IDX reports: where a run of the common
// subsequence lies in each string, inclusive, and its length.
type lcsMatch struct {
	aStart, aEnd, bStart, bEnd, n int
}

// cmdLCS implements LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len]
// [WITHMATCHLEN] with Redis's dynamic programming table, so that among
// several longest common subsequences it picks the one Redis picks.
// Missing keys are empty strings.
func cmdLCS(c *commands.Ctx, args [][]byte) {
	// Both keys at one instant, as Redis's one thread reads them.
	var values [2][]byte
	otherType := false
	readMulti(c, args[1:3], func(i int, t engine.Type, v []byte, found bool) {
		switch {
		case found && t != engine.TypeString:
			otherType = true
		case found:
			values[i] = bytes.Clone(v)
		}
	})
	if otherType {
		// Redis's own text here, not -WRONGTYPE.
		c.W.Error("ERR The specified keys must contain string values")
		return
	}
	a, b := values[0], values[1]
	var getLen, getIdx, withLen bool
	var minLen int64
	for j := 3; j < len(args); j++ {
		switch opt := args[j]; {
		case resp.EqualFold(opt, "idx"):
			getIdx = true
		case resp.EqualFold(opt, "len"):
			getLen = true
		case resp.EqualFold(opt, "withmatchlen"):
			withLen = true
		case resp.EqualFold(opt, "minmatchlen") && j+1 < len(args):
			j++
			n, ok := resp.ParseInt(args[j])
			if !ok {
				c.W.Error(commands.ErrNotInteger)
				return
			}
			minLen = max(n, 0)
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	if getLen && getIdx {
		c.W.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	// Redis bounds the table, 4 bytes a cell, by proto-max-bulk-len.
	cells := (uint64(len(a)) + 1) * (uint64(len(b)) + 1)
	if cells*4 > uint64(c.Client.MaxBulk()) {
		c.W.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	width := len(b) + 1
	table := make([]uint32, cells)
	at := func(i, j int) uint32 { return table[i*width+j] }
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				table[i*width+j] = at(i-1, j-1) + 1
			} else {
				table[i*width+j] = max(at(i-1, j), at(i, j-1))
			}
		}
	}
	total := int(at(len(a), len(b)))
	if getLen {
		c.W.Int(int64(total))
		return
	}
	// Walk back from the end, collecting the subsequence and its runs.
	seq := make([]byte, total)
	var matches []lcsMatch
	idx := total
	active := false
	var cur lcsMatch
	for i, j := len(a), len(b); i > 0 && j > 0; {
		emit := false
		if a[i-1] == b[j-1] {
			seq[idx-1] = a[i-1]
			switch {
			case !active:
				cur = lcsMatch{aStart: i - 1, aEnd: i - 1, bStart: j - 1, bEnd: j - 1}
				active = true
			case cur.aStart == i && cur.bStart == j:
				cur.aStart--
				cur.bStart--
			default:
				emit = true
			}
			if cur.aStart == 0 || cur.bStart == 0 {
				emit = true
			}
			idx, i, j = idx-1, i-1, j-1
		} else {
			if at(i-1, j) > at(i, j-1) {
				i--
			} else {
				j--
			}
			emit = active
		}
		if emit {
			cur.n = cur.aEnd - cur.aStart + 1
			if minLen == 0 || int64(cur.n) >= minLen {
				matches = append(matches, cur)
			}
			active = false
		}
	}
	if !getIdx {
		c.W.Bulk(seq)
		return
	}
	c.W.Map(2)
	c.W.BulkString("matches")
	c.W.Array(len(matches))
	for _, m := range matches {
		c.W.Array(2 + int(commands.BoolInt(withLen)))
		c.W.Array(2)
		c.W.Int(int64(m.aStart))
		c.W.Int(int64(m.aEnd))
		c.W.Array(2)
		c.W.Int(int64(m.bStart))
		c.W.Int(int64(m.bEnd))
		if withLen {
			c.W.Int(int64(m.n))
		}
	}
	c.W.BulkString("len")
	c.W.Int(int64(total))
}
