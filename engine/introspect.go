package engine

// Cost returns what key's live entry is charged against the memory bound
// (its key, its value and EntryOverhead), for MEMORY USAGE.
func (s *Store) Cost(key []byte) (int64, bool) {
	var cost int64
	found, _ := s.read(key, 0, func(r record) { cost = r.cost() })
	return cost, found
}

// LookupNoTouch is Lookup that does not report the read to the eviction
// policy, for clients in CLIENT NO-TOUCH mode and for OBJECT: a hit or a
// miss is counted, but the key is not made more likely to stay. A key past
// its deadline is left for the sweeper.
func (s *Store) LookupNoTouch(key []byte) (Envelope, bool) {
	env, ok := s.Peek(key)
	sh := s.shardFor(key)
	if ok {
		sh.hits.Add(1)
	} else {
		sh.misses.Add(1)
	}
	return env, ok
}
