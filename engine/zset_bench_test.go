package engine

import (
	"fmt"
	"testing"
)

// BenchmarkZSetListpack measures the listpack form's common operations
// on a sorted set of 100 members: ZSCORE, ZADD of a new score and a
// ZRANGEBYSCORE of ten members.
func BenchmarkZSetListpack(b *testing.B) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	pairs := make([]ScoreMember, 100)
	for i := range pairs {
		pairs[i] = ScoreMember{Member: fmt.Appendf(nil, "member:%d", i), Score: float64(i)}
	}
	key := []byte("z")
	if _, err := s.ZAdd(key, ZAddOptions{}, pairs); err != nil {
		b.Fatal(err)
	}
	m := [][]byte{[]byte("member:50")}
	b.Run("zscore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s.ZScore(key, m)
		}
	})
	b.Run("zadd", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			s.ZAdd(key, ZAddOptions{}, []ScoreMember{{Member: m[0], Score: float64(i % 100)}})
		}
	})
	r := ZRange{By: ZByScore, Min: ScoreBound{Value: 40}, Max: ScoreBound{Value: 49}, Limit: -1}
	b.Run("zrangebyscore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			zrange(s, key, r)
		}
	})
}
