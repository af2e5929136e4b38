package engine

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// TestListModel runs random list operations against the store and against
// a model of plain slices, and compares every result and, after each
// operation, the whole list: in default nodes and in 4-entry ones, so
// that lists cross the record's bound, split into chunks and come back.
func TestListModel(t *testing.T) {
	for _, size := range []int64{ListMaxListpackSize, 4, -1} {
		t.Run(strconv.FormatInt(size, 10), func(t *testing.T) {
			s := newStore(t, Options{})
			s.SetListMaxListpackSize(size)
			model := map[string][][]byte{}
			rng := rand.New(rand.NewPCG(5, uint64(size)))
			keys := []string{"a", "b", "c"}
			key := func() string { return keys[rng.IntN(len(keys))] }
			elem := func() []byte {
				if rng.IntN(30) == 0 {
					return bytes.Repeat([]byte("long"), 1+rng.IntN(300))
				}
				return []byte("e" + strconv.Itoa(rng.IntN(8)))
			}
			idx := func() int64 { return int64(rng.IntN(80) - 40) }
			for step := range 2500 {
				k := key()
				cur := model[k]
				var got, want any
				switch op := rng.IntN(11); op {
				case 0, 1, 2:
					var es [][]byte
					for n := 1 + rng.IntN(1+rng.IntN(100)); n > 0; n-- {
						es = append(es, elem())
					}
					left := rng.IntN(2) == 0
					n, err := s.LPush([]byte(k), es, left, false)
					got = fmt.Sprint(n, err)
					for _, e := range es {
						if left {
							cur = append([][]byte{e}, cur...)
						} else {
							cur = append(cur, e)
						}
					}
					want = fmt.Sprint(len(cur), nil)
				case 3:
					count, left := rng.IntN(50), rng.IntN(2) == 0
					popped, _, err := s.LPop([]byte(k), count, left)
					got = fmt.Sprint(popped, err)
					count = min(count, len(cur))
					var exp [][]byte
					if left {
						exp, cur = slices.Clone(cur[:count]), cur[count:]
					} else {
						for i := range count {
							exp = append(exp, cur[len(cur)-1-i])
						}
						cur = cur[:len(cur)-count]
					}
					want = fmt.Sprint(exp, nil)
					if count == 0 {
						want = fmt.Sprint([][]byte(nil), nil)
						if len(popped) == 0 {
							got = want
						}
					}
				case 4:
					start, stop := idx(), idx()
					r, err := lrange(s, []byte(k), start, stop)
					var w elemCollector
					errTo := s.LRangeTo([]byte(k), start, stop, &w)
					got = fmt.Sprint(r, err, "to", w.elems, w.arrays, errTo)
					var exp [][]byte
					if from, to, ok := listRange(start, stop, len(cur)); ok {
						exp = cur[from : to+1]
					}
					want = fmt.Sprint(exp, nil, "to", exp, []int{len(exp)}, nil)
				case 5:
					i, e := idx(), elem()
					err := s.LSet([]byte(k), i, e)
					got = fmt.Sprint(err)
					at, ok := listIndex(i, len(cur))
					switch {
					case len(cur) == 0:
						want = fmt.Sprint(ErrNoSuchKey)
					case !ok:
						want = fmt.Sprint(ErrIndexOutOfRange)
					default:
						cur = slices.Clone(cur)
						cur[at] = e
						want = fmt.Sprint(nil)
					}
				case 6:
					pivot, e, before := elem(), elem(), rng.IntN(2) == 0
					n, err := s.LInsert([]byte(k), before, pivot, e)
					got = fmt.Sprint(n, err)
					at := slices.IndexFunc(cur, func(x []byte) bool { return bytes.Equal(x, pivot) })
					switch {
					case len(cur) == 0:
						want = fmt.Sprint(0, nil)
					case at < 0:
						want = fmt.Sprint(-1, nil)
					default:
						if !before {
							at++
						}
						cur = slices.Insert(slices.Clone(cur), at, e)
						want = fmt.Sprint(len(cur), nil)
					}
				case 7:
					count, e := int64(rng.IntN(7)-3), elem()
					n, err := s.LRem([]byte(k), count, e)
					got = fmt.Sprint(n, err)
					gone := 0
					next := slices.Clone(cur)
					limit := int(max(count, -count))
					if count < 0 {
						for i := len(next) - 1; i >= 0 && (limit == 0 || gone < limit); i-- {
							if bytes.Equal(next[i], e) {
								next = slices.Delete(next, i, i+1)
								gone++
							}
						}
					} else {
						for i := 0; i < len(next) && (limit == 0 || gone < limit); {
							if bytes.Equal(next[i], e) {
								next = slices.Delete(next, i, i+1)
								gone++
								continue
							}
							i++
						}
					}
					cur = next
					want = fmt.Sprint(gone, nil)
				case 8:
					start, stop := idx(), idx()
					_, err := s.LTrim([]byte(k), start, stop)
					got = fmt.Sprint(err)
					if from, to, ok := listRange(start, stop, len(cur)); ok {
						cur = cur[from : to+1]
					} else {
						cur = nil
					}
					want = fmt.Sprint(nil)
				case 9:
					dst := key()
					fromLeft, toLeft := rng.IntN(2) == 0, rng.IntN(2) == 0
					e, found, err := s.LMove([]byte(k), []byte(dst), fromLeft, toLeft)
					got = fmt.Sprint(string(e), found, err)
					if len(cur) == 0 {
						want = fmt.Sprint("", false, nil)
						break
					}
					var moved []byte
					if fromLeft {
						moved, cur = cur[0], cur[1:]
					} else {
						moved, cur = cur[len(cur)-1], cur[:len(cur)-1]
					}
					model[k] = cur
					d := model[dst]
					if toLeft {
						d = append([][]byte{moved}, d...)
					} else {
						d = append(slices.Clone(d), moved)
					}
					model[dst] = d
					cur = model[k]
					want = fmt.Sprint(string(moved), true, nil)
				default:
					e := elem()
					q := LPosQuery{Rank: []int64{1, 2, -1, -2}[rng.IntN(4)], Count: int64(rng.IntN(4) - 1), MaxLen: int64(rng.IntN(40))}
					r, err := s.LPos([]byte(k), e, q)
					got = fmt.Sprint(r, err)
					want = fmt.Sprint(modelLPos(cur, e, q), nil)
				}
				model[k] = cur
				if len(cur) == 0 {
					delete(model, k)
				}
				if got != want {
					t.Fatalf("step %d on %s: got %v, want %v", step, k, got, want)
				}
				for _, mk := range keys {
					all, _ := lrange(s, []byte(mk), 0, -1)
					if fmt.Sprint(all) != fmt.Sprint(model[mk]) {
						t.Fatalf("step %d: %s is %q, want %q", step, mk, all, model[mk])
					}
				}
			}
		})
	}
}

// modelLPos is LPOS on a slice.
func modelLPos(list [][]byte, e []byte, q LPosQuery) []int64 {
	var out []int64
	matches := int64(0)
	rank := max(q.Rank, -q.Rank)
	for scanned := range len(list) {
		if q.MaxLen > 0 && int64(scanned) >= q.MaxLen {
			break
		}
		i := scanned
		if q.Rank < 0 {
			i = len(list) - 1 - scanned
		}
		if !bytes.Equal(list[i], e) {
			continue
		}
		if matches++; matches < rank {
			continue
		}
		out = append(out, int64(i))
		if q.Count < 0 || q.Count > 0 && int64(len(out)) >= q.Count {
			break
		}
	}
	return out
}

// TestListGrowsOntoHeap checks that a small list in its record moves to
// the heap in one push of a long element and comes back once popped
// small: the old record's value is no heap handle.
func TestListGrowsOntoHeap(t *testing.T) {
	s := newStore(t, Options{})
	if _, err := s.LPush([]byte("l"), [][]byte{[]byte("a")}, true, false); err != nil {
		t.Fatal(err)
	}
	long := bytes.Repeat([]byte("x"), 2000)
	if n, err := s.LPush([]byte("l"), [][]byte{long}, false, false); err != nil || n != 2 {
		t.Fatalf("RPUSH: %d %v", n, err)
	}
	if !onHeap(s, "l") {
		t.Fatal("a list of 2 KB is in its record")
	}
	if popped, _, err := s.LPop([]byte("l"), 1, false); err != nil || !bytes.Equal(popped[0], long) {
		t.Fatalf("RPOP: %v", err)
	}
	if onHeap(s, "l") {
		t.Fatal("a list of one short element stayed on the heap")
	}
}

// listObjectOf is the heap list at key, read under its shard's lock.
func listObjectOf(t *testing.T, s *Store, key string) (o *listObject) {
	t.Helper()
	s.read([]byte(key), 0, func(r record) {
		sh := s.shardOf(s.hash([]byte(key)))
		if c := sh.collectionOf(&r); c.obj != nil {
			o = c.obj.(*listObject)
		}
	})
	if o == nil {
		t.Fatalf("%s is no heap list", key)
	}
	return o
}

// TestListGrowsByWholeChunks: a long list pushed at either end allocates
// its chunks about once (a chunk beside a full one starts at its size,
// rather than doubling up to it, which allocated each about twice), and
// is charged the buffers it holds.
func TestListGrowsByWholeChunks(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates for itself")
	}
	s := newStore(t, Options{})
	elems := make([][]byte, 1000)
	for i := range elems {
		elems[i] = fmt.Appendf(nil, "member:%07d", i)
	}
	for _, left := range []bool{false, true} {
		key := fmt.Sprintf("l%v", left)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for range 100 {
			if _, err := s.LPush([]byte(key), elems, left, false); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		o := listObjectOf(t, s, key)
		var bufs int64
		for _, ch := range o.chunks {
			bufs += int64(len(ch.buf))
		}
		if o.bytes != bufs {
			t.Errorf("left %v: the list counts %d bytes of buffers, holds %d", left, o.bytes, bufs)
		}
		if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > bufs*13/10 {
			t.Errorf("left %v: 100,000 pushes allocated %d bytes for %d bytes of chunks", left, alloc, bufs)
		}
	}
}

// elemCollector is an ElemWriter that keeps copies of what it is given.
type elemCollector struct {
	arrays []int // each Array's n
	elems  [][]byte
}

func (c *elemCollector) Array(n int) { c.arrays = append(c.arrays, n) }

func (c *elemCollector) Bulk(e []byte) {
	if len(c.arrays) == 0 {
		panic("Bulk before Array")
	}
	c.elems = append(c.elems, slices.Clone(e))
}

// TestLRangeToMissingAndWrongType: a missing key writes one empty array,
// a key of another type writes nothing and returns ErrWrongType.
func TestLRangeToMissingAndWrongType(t *testing.T) {
	s := newStore(t, Options{})
	var w elemCollector
	if err := s.LRangeTo([]byte("none"), 0, -1, &w); err != nil || fmt.Sprint(w.arrays, w.elems) != "[0] []" {
		t.Fatalf("missing key: %v %v %q", err, w.arrays, w.elems)
	}
	if _, err := s.Set([]byte("str"), []byte("v"), SetOptions{}); err != nil {
		t.Fatal(err)
	}
	w = elemCollector{}
	if err := s.LRangeTo([]byte("str"), 0, -1, &w); err != ErrWrongType || w.arrays != nil || w.elems != nil {
		t.Fatalf("string key: %v %v %q", err, w.arrays, w.elems)
	}
}

// LPopOne pops what LPop of one pops, from a compact list and from one
// held on the heap, and deletes the list it empties.
func TestLPopOne(t *testing.T) {
	s := newStore(t, Options{})
	for _, n := range []int{3, 5000} { // in its record, and on the heap
		elems := make([][]byte, n)
		for i := range elems {
			elems[i] = []byte(fmt.Sprintf("e%d", i))
		}
		if _, err := s.LPush([]byte("l"), elems, false, false); err != nil {
			t.Fatal(err)
		}
		if e, found, err := s.LPopOne([]byte("l"), true); err != nil || !found || string(e) != "e0" {
			t.Fatalf("n=%d: LPopOne left = %q, %v, %v; want e0", n, e, found, err)
		}
		if e, found, err := s.LPopOne([]byte("l"), false); err != nil || !found || string(e) != fmt.Sprintf("e%d", n-1) {
			t.Fatalf("n=%d: LPopOne right = %q, %v, %v; want e%d", n, e, found, err, n-1)
		}
		for range n - 2 {
			if _, found, err := s.LPopOne([]byte("l"), true); err != nil || !found {
				t.Fatalf("n=%d: LPopOne = %v, %v", n, found, err)
			}
		}
		if _, found, _ := s.LPopOne([]byte("l"), true); found {
			t.Fatalf("n=%d: the emptied list is still there", n)
		}
	}
	mustSet(t, s, "str", "v", SetOptions{})
	if _, _, err := s.LPopOne([]byte("str"), true); !errors.Is(err, ErrWrongType) {
		t.Fatalf("LPopOne of a string: %v, want ErrWrongType", err)
	}
}

// lrange is the elements of the list at key from start to stop,
// inclusive, none if it is missing: LRANGE's answer, copied.
func lrange(s *Store, key []byte, start, stop int64) (elems [][]byte, err error) {
	_, err = s.readColl(key, TypeList, func(c collection) {
		v := viewList(c)
		if from, to, ok := listRange(start, stop, v.len()); ok {
			elems = v.elems(from, to)
		}
	})
	return elems, err
}
