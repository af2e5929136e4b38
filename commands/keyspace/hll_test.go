package keyspace

import (
	"testing"
)

// TestHyperLogLog: PFADD, PFCOUNT, PFMERGE and PFDEBUG.
func TestHyperLogLog(t *testing.T) {
	h := newFamily(t)
	h.Run([]Case{
		{"SET str v", "OK"},
		{"PFADD hll a b c", 1},
		{"PFADD hll a", 0},
		{"PFADD hll", 0},
		{"PFADD new", 1},
		{"PFCOUNT hll", 3},
		{"PFCOUNT nosuch", 0},
		{"PFADD h2 c d e", 1},
		{"PFCOUNT hll h2", 5},
		{"PFMERGE hm hll h2", "OK"},
		{"PFCOUNT hm", 5},
		{"PFMERGE hm2", "OK"},
		{"EXISTS hm2", 1},
		{"PFADD str a", Err("WRONGTYPE Key is not a valid HyperLogLog string value.")},
		{"PFCOUNT str", Err("WRONGTYPE Key is not a valid HyperLogLog string value.")},
		{"PFMERGE hm str", Err("WRONGTYPE Key is not a valid HyperLogLog string value.")},
		{"PFMERGE str hll", Err("WRONGTYPE Key is not a valid HyperLogLog string value.")},
		{`SET bad "HYLL\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"`, "OK"},
		{"PFCOUNT bad", Err("WRONGTYPE Key is not a valid HyperLogLog string value.")},
		{"PFDEBUG GETREG nosuch", Err("ERR The specified key does not exist")},
		{"PFDEBUG ENCODING hll", "sparse"},
		{"PFDEBUG TODENSE hll", 1},
		{"PFDEBUG ENCODING hll", "dense"},
		{"PFDEBUG TODENSE hll", 0},
		{"PFDEBUG DECODE hll", Err("ERR HLL encoding is not sparse")},
		{"PFDEBUG BOGUS hll", Err("ERR Unknown PFDEBUG subcommand 'BOGUS'")},
		{"PFDEBUG GETREG str", Err("WRONGTYPE Key is not a valid HyperLogLog string value.")},
		{"PFADD hd a b", 1},
		{"PFDEBUG DECODE hd", "Z:12711 v:2,1 Z:3068 v:1,1 Z:603"},
		{"PFDEBUG TODENSE hd", 1},
		{"PFDEBUG DECODE hd", Err("ERR HLL encoding is not sparse")},
		{"PFCOUNT hd", 2},
		{"PFSELFTEST", "OK"},
	})
}
