package rdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// canon is a value in a form two sources of it can be compared by: every
// member as a string, sets and hashes sorted.
type canon struct {
	kind     string
	items    []string
	expireAt int64
}

func (c canon) String() string {
	return fmt.Sprintf("%s ttl=%d %d items %.200q", c.kind, c.expireAt, len(c.items), c.items)
}

func canonOf(e *Entry) canon {
	c := canon{kind: e.Kind.String(), expireAt: e.ExpireAt}
	switch e.Kind {
	case KindString:
		c.items = []string{string(e.Value)}
	case KindList:
		for _, m := range e.Members {
			c.items = append(c.items, string(m))
		}
	case KindSet:
		for _, m := range e.Members {
			c.items = append(c.items, string(m))
		}
		slices.Sort(c.items)
	case KindHash:
		for i := 0; i+1 < len(e.Pairs); i += 2 {
			c.items = append(c.items, string(e.Pairs[i])+"="+string(e.Pairs[i+1]))
		}
		slices.Sort(c.items)
	case KindZSet:
		s := slices.Clone(e.Scored)
		slices.SortFunc(s, func(a, b Scored) int {
			if a.Score != b.Score {
				if a.Score < b.Score {
					return -1
				}
				return 1
			}
			return bytes.Compare(a.Member, b.Member)
		})
		for _, m := range s {
			c.items = append(c.items, string(m.Member)+"@"+strconv.FormatFloat(m.Score, 'g', -1, 64))
		}
	}
	return c
}

func equalCanon(a, b canon) bool {
	return a.kind == b.kind && a.expireAt == b.expireAt && slices.Equal(a.items, b.items)
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// dataset is every type in every encoding the writer chooses, with
// deadlines on some, members Redis would hold as integers, and values
// past each compact encoding's bounds.
func dataset() []*Entry {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		return string(b)
	}
	var es []*Entry
	str := func(k, v string) { es = append(es, &Entry{Key: []byte(k), Kind: KindString, Value: []byte(v)}) }
	str("s:empty", "")
	str("s:int", "12345")
	str("s:neg", "-7")
	str("s:int32", "-2147483648")
	str("s:int64", "9223372036854775807")
	str("s:lead0", "007")
	str("s:text", strings.Repeat("abc", 100))
	str("s:bin", random(1000))
	str("s:big", random(70000))
	str("", "the empty key")

	var wide, ints, bigZ [][]byte
	for i := range 600 {
		wide = append(wide, []byte("f"+strconv.Itoa(i)), []byte(strconv.Itoa(i*i)))
		ints = append(ints, []byte(strconv.Itoa(i*1000-300000)))
	}
	var bigScored []Scored
	for i := range 200 {
		bigScored = append(bigScored, Scored{Member: []byte("m" + strconv.Itoa(i)), Score: float64(i) / 3})
	}
	_ = bigZ
	var longList [][]byte
	for i := range 5000 {
		longList = append(longList, []byte(fmt.Sprintf("element-%08d", i)))
	}
	es = append(es,
		&Entry{Key: []byte("h:small"), Kind: KindHash, Pairs: bs("a", "1", "b", "two", "-5", "70000", "big", "9223372036854775807")},
		&Entry{Key: []byte("h:wide"), Kind: KindHash, Pairs: wide},
		&Entry{Key: []byte("h:long"), Kind: KindHash, Pairs: bs("f", strings.Repeat("v", 100))},
		&Entry{Key: []byte("h:plain"), Kind: KindHash, Pairs: bs("x", "y"), Plain: true},
		&Entry{Key: []byte("set:ints"), Kind: KindSet, Members: bs("1", "2", "-3", "70000", "1099511627776")},
		&Entry{Key: []byte("set:int16"), Kind: KindSet, Members: bs("5", "-32768")},
		&Entry{Key: []byte("set:strs"), Kind: KindSet, Members: bs("a", "b", "c")},
		&Entry{Key: []byte("set:mixed"), Kind: KindSet, Members: bs("1", "a")},
		&Entry{Key: []byte("set:bigints"), Kind: KindSet, Members: ints},
		&Entry{Key: []byte("z:small"), Kind: KindZSet, Scored: []Scored{
			{[]byte("ninf"), math.Inf(-1)}, {[]byte("neg"), -2.25}, {[]byte("one"), 1}, {[]byte("half"), 1.5},
			{[]byte("7"), 7}, {[]byte("huge"), 1e300}, {[]byte("tiny"), 1e-300}, {[]byte("pinf"), math.Inf(1)}}},
		&Entry{Key: []byte("z:big"), Kind: KindZSet, Scored: bigScored},
		&Entry{Key: []byte("z:long"), Kind: KindZSet, Scored: []Scored{{[]byte(strings.Repeat("m", 100)), 3}}},
		&Entry{Key: []byte("l:small"), Kind: KindList, Members: bs("a", "1", "-5", "70000", "-9223372036854775808", strings.Repeat("x", 5000))},
		&Entry{Key: []byte("l:long"), Kind: KindList, Members: longList},
		&Entry{Key: []byte("l:huge"), Kind: KindList, Members: [][]byte{[]byte(random(10000)), []byte("after")}},
	)
	deadline := time.Now().Add(time.Hour).UnixMilli()
	es = append(es,
		&Entry{Key: []byte("ttl:s"), Kind: KindString, Value: []byte("v"), ExpireAt: deadline},
		&Entry{Key: []byte("ttl:h"), Kind: KindHash, Pairs: bs("f", "v"), ExpireAt: deadline + 1},
		&Entry{Key: []byte("ttl:z"), Kind: KindZSet, Scored: []Scored{{[]byte("m"), 1}}, ExpireAt: deadline + 2},
	)
	return es
}

func writeFile(t testing.TB, es []*Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	expires := 0
	for _, e := range es {
		if e.ExpireAt != 0 {
			expires++
		}
	}
	w.Header(DefaultAux(time.Now(), 1<<20))
	w.SelectDB(0, len(es), expires)
	for _, e := range es {
		w.Write(e)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func readAll(b []byte, opts Options) (map[string]canon, *Reader, error) {
	r := NewReader(bytes.NewReader(b), int64(len(b)), opts)
	out := map[string]canon{}
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			return out, r, err
		}
		out[string(e.Key)] = canonOf(e)
	}
}

func compare(t *testing.T, what string, want, got map[string]canon) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: key %q missing", what, k)
		} else if !equalCanon(w, g) {
			t.Errorf("%s: key %q:\n got %v\nwant %v", what, k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: extra key %q", what, k)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	es := dataset()
	want := map[string]canon{}
	for _, e := range es {
		want[string(e.Key)] = canonOf(e)
	}
	got, r, err := readAll(writeFile(t, es), Options{})
	if err != nil {
		t.Fatal(err)
	}
	compare(t, "round trip", want, got)
	if r.Version() != Version || len(r.Aux()) != 5 || r.Aux()[0] != (AuxField{"redis-ver", RedisVersion}) {
		t.Errorf("version %d, aux %v", r.Version(), r.Aux())
	}
}

// Every prefix of a good file is refused as corrupt, and so is every
// one-byte change (by its checksum, if nothing else).
func TestTruncatedAndFlipped(t *testing.T) {
	var es []*Entry // a few KB of every kind, so that every byte is tried
	for _, e := range dataset() {
		if k := string(e.Key); k != "s:big" && k != "s:bin" && k != "h:wide" && k != "set:bigints" && k != "z:big" && !strings.HasPrefix(k, "l:") {
			es = append(es, e)
		}
	}
	file := writeFile(t, append(es, &Entry{Key: []byte("z"), Kind: KindZSet, Scored: []Scored{{[]byte("m"), 1.5}}},
		&Entry{Key: []byte("l"), Kind: KindList, Members: bs("a", "1")}, &Entry{Key: []byte("i"), Kind: KindSet, Members: bs("1", "2")}))
	for n := range len(file) {
		if _, _, err := readAll(file[:n], Options{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d of %d bytes: %v, want ErrCorrupt", n, len(file), err)
		}
	}
	step := max(1, len(file)/4000)
	for i := 0; i < len(file); i += step {
		bad := slices.Clone(file)
		bad[i] ^= 0x20
		if _, _, err := readAll(bad, Options{}); err == nil {
			t.Fatalf("byte %d flipped: read without error", i)
		}
	}
	bad := slices.Clone(file)
	bad[len(bad)-20] ^= 1 // inside the last value's bytes
	if _, _, err := readAll(bad, Options{}); !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped value byte: %v", err)
	}
}

// A length larger than the input is refused before it is allocated.
func TestLengthPastInput(t *testing.T) {
	var b []byte
	b = append(b, "REDIS0010"...)
	b = append(b, typeString)
	b = appendString(b, []byte("k"))
	b = appendLen(b, 1<<40) // a string of a terabyte
	_, _, err := readAll(b, Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "left") {
		t.Fatalf("got %v", err)
	}
	b = append(b[:len(b)-9], appendLen(nil, 1<<20)...)
	b = append(b, make([]byte, 1<<20)...)
	if _, _, err := readAll(b, Options{MaxValue: 1 << 10}); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "bound") {
		t.Fatalf("past MaxValue: %v", err)
	}
}
