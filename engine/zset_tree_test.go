package engine

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestZTreeAgainstSortedSlice runs random inserts and removals (by member
// and by rank), with many ties and runs in order (the leaf-split
// shortcut), against a sorted slice, checking ranks, lookups by rank,
// walks and the nodes' counts.
func TestZTreeAgainstSortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tr ztree
	var model []zent
	check := func() {
		t.Helper()
		if tr.len() != len(model) {
			t.Fatalf("len %d, want %d", tr.len(), len(model))
		}
		if tr.root != nil {
			checkZNode(t, tr.root)
		}
		var got []zent
		tr.walk(0, tr.len(), false, func(e zent) bool { got = append(got, e); return true })
		if !slices.Equal(got, model) {
			t.Fatalf("walk differs from the model")
		}
	}
	for step := range 40000 {
		var e zent
		switch rng.IntN(3) {
		case 0: // ascending run
			e = zent{member: "m" + strconv.Itoa(step), score: float64(step)}
		default:
			e = zent{member: "m" + strconv.Itoa(rng.IntN(3000)), score: float64(rng.IntN(50))}
		}
		i, found := slices.BinarySearchFunc(model, e, zcmp)
		if rng.IntN(5) < 2 || found {
			if found && step%2 == 0 {
				if got := tr.removeAt(i); got != e {
					t.Fatalf("removeAt(%d) = %v, want %v", i, got, e)
				}
				model = slices.Delete(model, i, i+1)
			} else if found {
				if _, ok := tr.remove(e); !ok {
					t.Fatalf("remove %v: not found", e)
				}
				model = slices.Delete(model, i, i+1)
			} else if _, ok := tr.remove(e); ok {
				t.Fatalf("removed %v, which it lacked", e)
			}
		} else {
			tr.insert(e)
			model = slices.Insert(model, i, e)
		}
		if step%997 == 0 {
			check()
		}
		if len(model) > 0 && step%13 == 0 {
			r := rng.IntN(len(model))
			if got := tr.at(r); got != model[r] {
				t.Fatalf("at(%d) = %v, want %v", r, got, model[r])
			}
			if got := tr.before(func(x zent) bool { return zcmp(x, model[r]) >= 0 }); got != r {
				t.Fatalf("rank of %v = %d, want %d", model[r], got, r)
			}
			lo, hi := rng.IntN(len(model)), rng.IntN(len(model)+1)
			var back []zent
			tr.walk(lo, hi, true, func(e zent) bool { back = append(back, e); return true })
			var fwd []zent
			tr.walk(lo, hi, false, func(e zent) bool { fwd = append(fwd, e); return true })
			if lo < hi {
				if !slices.Equal(fwd, model[lo:hi]) {
					t.Fatalf("walk %d..%d differs", lo, hi)
				}
				want := slices.Clone(model[lo:hi])
				slices.Reverse(want)
				if !slices.Equal(back, want) {
					t.Fatalf("reverse walk %d..%d differs", lo, hi)
				}
			}
		}
	}
	check()
	for len(model) > 0 {
		i := rng.IntN(len(model))
		if len(model)%2 == 0 {
			if _, ok := tr.remove(model[i]); !ok {
				t.Fatalf("remove %v failed", model[i])
			}
		} else {
			switch len(model) % 3 { // ZPOPMIN's end, ZPOPMAX's, any rank
			case 0:
				i = 0
			case 1:
				i = len(model) - 1
			}
			if got := tr.removeAt(i); got != model[i] {
				t.Fatalf("removeAt(%d) = %v, want %v", i, got, model[i])
			}
		}
		model = slices.Delete(model, i, i+1)
		if len(model)%499 == 0 {
			check()
		}
	}
	check()
	if tr.root != nil {
		t.Fatalf("an emptied tree keeps a root")
	}
}

// checkZNode checks n's counts, its separators and its order.
func checkZNode(t *testing.T, n *znode) {
	t.Helper()
	if n.kids == nil {
		if n.size != len(n.ents) || len(n.ents) > zLeafMax {
			t.Fatalf("leaf size %d of %d entries", n.size, len(n.ents))
		}
		return
	}
	if len(n.seps) != len(n.kids)-1 || len(n.kids) > zInnerMax {
		t.Fatalf("%d kids, %d separators", len(n.kids), len(n.seps))
	}
	sum := 0
	for i, k := range n.kids {
		checkZNode(t, k)
		sum += k.size
		var first, last zent
		var any bool
		k.walk(0, k.size, false, func(e zent) bool {
			if !any {
				first = e
			}
			last, any = e, true
			return true
		})
		if !any {
			continue
		}
		if i > 0 && zcmp(first, n.seps[i-1]) < 0 {
			t.Fatalf("kid %d starts below its separator", i)
		}
		if i < len(n.seps) && zcmp(last, n.seps[i]) >= 0 {
			t.Fatalf("kid %d ends at or past its separator", i)
		}
	}
	if sum != n.size {
		t.Fatalf("inner size %d, kids hold %d", n.size, sum)
	}
}
