package engine

import (
	"cmp"
	"slices"
	"sort"
)

// zent is one member of a sorted set and its score.
type zent struct {
	member string
	score  float64
}

// zcmp orders sorted-set members as Redis does: by score, then by member,
// bytewise. -0 and 0 are the same score.
func zcmp(a, b zent) int {
	if a.score < b.score {
		return -1
	}
	if a.score > b.score {
		return 1
	}
	return cmp.Compare(a.member, b.member)
}

// ztree is the order of a big sorted set: a B+tree whose nodes count the
// members under them, so that a member's rank, the member at a rank and the
// bounds of a score or lex range are each found in O(log n). Members sit in
// leaves of up to zLeafMax entries, 24 bytes each, in one array per leaf:
// no allocation per member beyond its string, which the member index shares
// (zsetObject). The zero ztree is empty.
type ztree struct {
	root *znode
}

const (
	zLeafMax  = 64
	zInnerMax = 64
	// A node with fewer than a quarter of its room is merged with or
	// refilled from a neighbour.
	zLeafMin  = zLeafMax / 4
	zInnerMin = zInnerMax / 4
)

// znode is a leaf (ents) or an inner node (kids). In an inner node,
// every member under kids[i] is less than seps[i], and every member under
// kids[i+1] at least seps[i]. A separator is left in place when the member
// it was copied from goes: it still divides the two children.
type znode struct {
	ents []zent
	kids []*znode
	seps []zent
	size int // members under the node
}

func (t *ztree) len() int {
	if t.root == nil {
		return 0
	}
	return t.root.size
}

// before is the number of members for which p is false; p must be false
// for a prefix of the order and true for the rest (a lower bound).
func (t *ztree) before(p func(zent) bool) int {
	n, r := t.root, 0
	if n == nil {
		return 0
	}
	for n.kids != nil {
		i := sort.Search(len(n.seps), func(i int) bool { return p(n.seps[i]) })
		for _, k := range n.kids[:i] {
			r += k.size
		}
		n = n.kids[i]
	}
	return r + sort.Search(len(n.ents), func(i int) bool { return p(n.ents[i]) })
}

// at is the member of rank i, 0 <= i < len.
func (t *ztree) at(i int) zent {
	n := t.root
	for n.kids != nil {
		for _, k := range n.kids {
			if i < k.size {
				n = k
				break
			}
			i -= k.size
		}
	}
	return n.ents[i]
}

// walk calls fn with the members of ranks from to to-1 (to-1 down to from
// if rev), until fn returns false.
func (t *ztree) walk(from, to int, rev bool, fn func(zent) bool) {
	if t.root != nil && from < to {
		t.root.walk(from, to, rev, fn)
	}
}

func (n *znode) walk(from, to int, rev bool, fn func(zent) bool) bool {
	if n.kids == nil {
		if rev {
			for i := to - 1; i >= from; i-- {
				if !fn(n.ents[i]) {
					return false
				}
			}
			return true
		}
		for _, e := range n.ents[from:to] {
			if !fn(e) {
				return false
			}
		}
		return true
	}
	// Each child's first rank is lo, counted from the end going backwards.
	lo := 0
	if rev {
		lo = n.size
	}
	for j := range n.kids {
		k := n.kids[j]
		if rev {
			k = n.kids[len(n.kids)-1-j]
			lo -= k.size
		}
		a, b := max(from-lo, 0), min(to-lo, k.size)
		if a < b && !k.walk(a, b, rev, fn) {
			return false
		}
		// Stop at the range's end rather than look at every child:
		// ZPOPMIN's walk of one member looked at all of them, level by
		// level, a tenth of its time.
		if !rev {
			lo += k.size
			if lo >= to {
				break
			}
		} else if lo <= from {
			break
		}
	}
	return true
}

// insert adds e, which the tree does not hold.
func (t *ztree) insert(e zent) {
	if t.root == nil {
		t.root = &znode{ents: make([]zent, 0, 4)}
	}
	if right, sep, split := t.root.insert(e); split {
		t.root = &znode{kids: []*znode{t.root, right}, seps: []zent{sep}, size: t.root.size + right.size}
	}
}

// insert adds e under n; if n had to split, it returns its new right
// sibling and the separator between them.
func (n *znode) insert(e zent) (*znode, zent, bool) {
	if n.kids == nil {
		return n.insertLeaf(e)
	}
	n.size++
	i := sort.Search(len(n.seps), func(i int) bool { return zcmp(n.seps[i], e) > 0 })
	right, sep, split := n.kids[i].insert(e)
	if !split {
		return nil, zent{}, false
	}
	n.kids = slices.Insert(n.kids, i+1, right)
	n.seps = slices.Insert(n.seps, i, sep)
	if len(n.kids) <= zInnerMax {
		return nil, zent{}, false
	}
	h := len(n.kids) / 2
	r := &znode{kids: slices.Clone(n.kids[h:]), seps: slices.Clone(n.seps[h:])}
	up := n.seps[h-1]
	clear(n.kids[h:])
	clear(n.seps[h-1:])
	n.kids, n.seps = n.kids[:h], n.seps[:h-1]
	for _, k := range r.kids {
		r.size += k.size
	}
	n.size -= r.size
	return r, up, true
}

func (n *znode) insertLeaf(e zent) (*znode, zent, bool) {
	i := sort.Search(len(n.ents), func(i int) bool { return zcmp(n.ents[i], e) > 0 })
	if len(n.ents) < zLeafMax {
		n.ents = slices.Insert(n.ents, i, e)
		n.size++
		return nil, zent{}, false
	}
	// Full: split before inserting, so that no leaf outgrows its array.
	// Members added in order (timestamps, counters) go past the end:
	// the full leaf stays full and the new one starts with e alone.
	var r *znode
	switch i {
	case len(n.ents):
		r = &znode{ents: append(make([]zent, 0, zLeafMax), e)}
	case 0:
		r = &znode{ents: n.ents}
		n.ents = append(make([]zent, 0, zLeafMax), e)
	default:
		h := len(n.ents) / 2
		r = &znode{ents: append(make([]zent, 0, zLeafMax), n.ents[h:]...)}
		clear(n.ents[h:])
		n.ents = n.ents[:h]
		if i <= h {
			n.ents = slices.Insert(n.ents, i, e)
		} else {
			r.ents = slices.Insert(r.ents, i-h, e)
		}
	}
	n.size, r.size = len(n.ents), len(r.ents)
	return r, r.ents[0], true
}

// remove takes e out of the tree and returns the entry it held, whose
// member is the tree's own string.
func (t *ztree) remove(e zent) (zent, bool) {
	if t.root == nil {
		return zent{}, false
	}
	had, ok := t.root.remove(e)
	if !ok {
		return zent{}, false
	}
	t.shrinkRoot()
	return had, true
}

// shrinkRoot drops an emptied root, or a root left with one child, after
// a removal.
func (t *ztree) shrinkRoot() {
	switch {
	case t.root.size == 0:
		t.root = nil
	case t.root.kids != nil && len(t.root.kids) == 1:
		t.root = t.root.kids[0]
	}
}

func (n *znode) remove(e zent) (zent, bool) {
	if n.kids == nil {
		i := sort.Search(len(n.ents), func(i int) bool { return zcmp(n.ents[i], e) >= 0 })
		if i == len(n.ents) || zcmp(n.ents[i], e) != 0 {
			return zent{}, false
		}
		had := n.ents[i]
		n.ents = slices.Delete(n.ents, i, i+1)
		n.size--
		return had, true
	}
	i := sort.Search(len(n.seps), func(i int) bool { return zcmp(n.seps[i], e) > 0 })
	had, ok := n.kids[i].remove(e)
	if !ok {
		return zent{}, false
	}
	n.size--
	n.rebalance(i)
	return had, true
}

// removeAt takes out the member of rank i, 0 <= i < len, and returns it:
// ZPOPMIN and ZPOPMAX descend by the nodes' counts, with no comparison.
func (t *ztree) removeAt(i int) zent {
	had := t.root.removeAt(i)
	t.shrinkRoot()
	return had
}

func (n *znode) removeAt(i int) zent {
	n.size--
	if n.kids == nil {
		had := n.ents[i]
		n.ents = slices.Delete(n.ents, i, i+1)
		return had
	}
	k := 0
	for i >= n.kids[k].size {
		i -= n.kids[k].size
		k++
	}
	had := n.kids[k].removeAt(i)
	n.rebalance(k)
	return had
}

// rebalance merges kids[i] with a neighbour, or moves members between
// them, if it has fallen below a quarter full.
func (n *znode) rebalance(i int) {
	k := n.kids[i]
	if k.kids == nil && len(k.ents) >= zLeafMin || k.kids != nil && len(k.kids) >= zInnerMin {
		return
	}
	if len(n.kids) < 2 {
		return
	}
	l := i
	if i+1 == len(n.kids) {
		l = i - 1
	}
	left, right := n.kids[l], n.kids[l+1]
	if left.kids == nil {
		all := append(left.ents, right.ents...)
		if len(all) <= zLeafMax {
			left.ents, left.size = all, len(all)
			n.kids = slices.Delete(n.kids, l+1, l+2)
			n.seps = slices.Delete(n.seps, l, l+1)
			return
		}
		h := len(all) / 2
		right.ents = append(make([]zent, 0, zLeafMax), all[h:]...)
		clear(all[h:])
		left.ents = all[:h]
		left.size, right.size = len(left.ents), len(right.ents)
		n.seps[l] = right.ents[0]
		return
	}
	kids := append(slices.Clip(left.kids), right.kids...)
	seps := append(append(slices.Clip(left.seps), n.seps[l]), right.seps...)
	if len(kids) <= zInnerMax {
		left.kids, left.seps = kids, seps
		left.size += right.size
		n.kids = slices.Delete(n.kids, l+1, l+2)
		n.seps = slices.Delete(n.seps, l, l+1)
		return
	}
	h := len(kids) / 2
	left.kids, left.seps = kids[:h:h], seps[:h-1:h-1]
	right.kids, right.seps = slices.Clone(kids[h:]), slices.Clone(seps[h:])
	n.seps[l] = seps[h-1]
	left.size, right.size = 0, 0
	for _, c := range left.kids {
		left.size += c.size
	}
	for _, c := range right.kids {
		right.size += c.size
	}
}

// clone is a deep copy of the tree.
func (t *ztree) clone() ztree {
	if t.root == nil {
		return ztree{}
	}
	return ztree{root: t.root.clone()}
}

func (n *znode) clone() *znode {
	c := &znode{size: n.size}
	if n.kids == nil {
		c.ents = append(make([]zent, 0, cap(n.ents)), n.ents...)
		return c
	}
	c.kids = make([]*znode, len(n.kids))
	for i, k := range n.kids {
		c.kids[i] = k.clone()
	}
	c.seps = slices.Clone(n.seps)
	return c
}
