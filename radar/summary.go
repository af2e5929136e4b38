package radar

// summary is a Space-Saving summary (Metwally, Agrawal and El Abbadi,
// "Efficient Computation of Frequent and Top-k Elements in Data Streams",
// ICDT 2005), weighted: at most cap counters, each a key, its count and
// the most that count may overstate it. A new key when every counter is
// taken replaces the smallest, inheriting its count as its error. So with
// N the weight added, every count is at least the key's true weight and at
// most N/cap above it, and every key whose weight is above N/cap holds a
// counter.
//
// The counters are a min-heap by count, with a map from key to heap slot:
// adding to a tracked key is a map lookup and a sift down, with no
// allocation; a key that takes a counter keeps the caller's string.
type summary struct {
	heap  []counter
	index map[string]int32
	total uint64 // the weight added
}

// counter is a summary's count of one key.
type counter struct {
	key   string
	count uint64
	err   uint64 // the most count may be above the key's true weight
}

func newSummary(capacity int) summary {
	return summary{heap: make([]counter, 0, capacity), index: make(map[string]int32, capacity)}
}

// reset empties the summary, keeping its memory.
func (s *summary) reset() {
	clear(s.index)
	clear(s.heap) // drop the keys' strings
	s.heap = s.heap[:0]
	s.total = 0
}

// add adds w to key's count.
func (s *summary) add(key string, w uint64) {
	s.total += w
	if i, ok := s.index[key]; ok {
		s.heap[i].count += w
		s.down(int(i))
		return
	}
	if len(s.heap) < cap(s.heap) {
		k := key
		s.heap = append(s.heap, counter{key: k, count: w})
		i := len(s.heap) - 1
		s.index[k] = int32(i)
		s.up(i)
		return
	}
	// Replace the smallest: the new key may have had up to its count.
	least := &s.heap[0]
	delete(s.index, least.key)
	k := key
	*least = counter{key: k, count: least.count + w, err: least.count}
	s.index[k] = 0
	s.down(0)
}

// floor is the least count a key holding no counter may have: 0 while a
// counter is free, else the smallest count.
func (s *summary) floor() uint64 {
	if len(s.heap) < cap(s.heap) || len(s.heap) == 0 {
		return 0
	}
	return s.heap[0].count
}

func (s *summary) swap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.index[s.heap[i].key] = int32(i)
	s.index[s.heap[j].key] = int32(j)
}

func (s *summary) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if s.heap[p].count <= s.heap[i].count {
			return
		}
		s.swap(i, p)
		i = p
	}
}

func (s *summary) down(i int) {
	n := len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && s.heap[r].count < s.heap[l].count {
			m = r
		}
		if s.heap[i].count <= s.heap[m].count {
			return
		}
		s.swap(i, m)
		i = m
	}
}
