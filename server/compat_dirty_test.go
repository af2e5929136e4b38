package server

import (
	"strconv"
	"strings"
	"testing"
)

// infoInt reads an integer field of INFO section from c.
func (c *compatConn) infoInt(t *testing.T, section, field string) int64 {
	t.Helper()
	r, err := c.do("INFO", section)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(r.str, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %s", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// compareCounted runs each command on both servers and compares, beside
// the replies, how much each moved the INFO field (a counter).
func compareCounted(t *testing.T, p compatPair, section, field string, steps []string) {
	t.Helper()
	for _, line := range steps {
		args := strings.Fields(line)
		redisBefore, oursBefore := p.redis.infoInt(t, section, field), p.ours.infoInt(t, section, field)
		want, got := p.redis.run(compatExact, args), p.ours.run(compatExact, args)
		if want != got {
			t.Fatalf("%s:\n\tredis: %s\n\tours:  %s", line, want, got)
		}
		redisMoved := p.redis.infoInt(t, section, field) - redisBefore
		oursMoved := p.ours.infoInt(t, section, field) - oursBefore
		if redisMoved != oursMoved {
			t.Errorf("%s moved %s by %d on redis-server, by %d here", line, field, redisMoved, oursMoved)
		}
	}
}

// TestCompatDirtyOfInPlaceWrites: SETBIT and BITFIELD count a change
// (rdb_changes_since_last_save), break a WATCH and send "setbit" only
// when they made the key, lengthened it or changed a bit, as redis-server
// 7.0 (the Tcl suite's "SETBIT/BITFIELD only increase dirty when the
// value changed"); APPEND and SETRANGE always do.
func TestCompatDirtyOfInPlaceWrites(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		p.flush(t)
		compareCounted(t, p, "persistence", "rdb_changes_since_last_save", []string{
			"SETBIT foo 0 0", "BITFIELD foo2 SET i5 0 0",
			"SETBIT foo 0 0", "BITFIELD foo2 SET i5 0 0",
			"SETBIT foo 0 1", "SETBIT foo 0 1", "SETBIT foo 0 0", "SETBIT foo 0 0",
			"BITFIELD foo2 SET i5 0 1", "BITFIELD foo2 SET i5 0 1", "BITFIELD foo2 SET i5 0 0",
			"BITFIELD foo3 INCRBY i5 0 1", "BITFIELD foo3 INCRBY i5 0 1", "BITFIELD foo3 INCRBY u8 8 0",
			"SETBIT foo 90 0", "BITFIELD foo2 SET i5 90 0", "BITFIELD foo2 SET u8 0 0 SET u8 0 0",
			"BITFIELD foo2 OVERFLOW FAIL INCRBY u2 0 9", "BITFIELD foo2 GET u8 0",
			"SET s 1234", "SETBIT s 0 0", "SETBIT s 2 1", "SETRANGE s 0 1", "SETRANGE s 0 1", "APPEND s x",
		})
		// Redis breaks a WATCH on a change only.
		for _, write := range []string{"SETBIT foo 0 0", "BITFIELD foo2 SET i5 0 0", "SETBIT foo 0 1", "SETRANGE s 0 1"} {
			runCompatSteps(t, p, compatScript{name: "watch, then " + write, steps: []compatStep{
				cs("WATCH foo foo2 s"), cs(write), cs("MULTI"), cs("ECHO PONG"), cs("EXEC"),
			}})
		}
	})
}

// TestCompatInfoMigrateSockets: INFO's stats have Redis's
// migrate_cached_sockets, which the Tcl suite's dump unit reads: 0 on a
// server that migrated nothing (TestCompatMigrate follows it as MIGRATE
// caches and drops its connections).
func TestCompatInfoMigrateSockets(t *testing.T) {
	redisAddr := startRedis(t)
	ts := startServer(t, Options{})
	forEachProtocol(t, func(t *testing.T, proto int) {
		p := dialCompatPair(t, redisAddr, ts.addr, proto)
		if r, o := p.redis.infoInt(t, "stats", "migrate_cached_sockets"), p.ours.infoInt(t, "stats", "migrate_cached_sockets"); r != o {
			t.Errorf("migrate_cached_sockets: redis %d, ours %d", r, o)
		}
	})
}
