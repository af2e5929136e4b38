package engine

// Cost returns what key's live entry is charged against the memory bound
// (its key, its value and EntryOverhead), for MEMORY USAGE.
func (s *Store) Cost(key []byte) (int64, bool) {
	var cost int64
	found, _ := s.read(key, 0, func(r record) { cost = r.cost() })
	return cost, found
}

// LookupNoTouch is Lookup that does not report the read to the eviction
// policy, for clients in CLIENT NO-TOUCH mode: a hit or a miss is
// counted, but the key is not made more likely to stay. A key past its
// deadline is left for the sweeper.
func (s *Store) LookupNoTouch(key []byte) (Envelope, bool) {
	env, ok := s.Inspect(key)
	if !ok {
		s.notifyQuiet(Missed, key)
	}
	return env, ok
}

// Inspect is LookupNoTouch for OBJECT, whose miss is counted but is no
// keymiss, as in Redis's objectCommandLookup.
func (s *Store) Inspect(key []byte) (Envelope, bool) {
	env, ok := s.Peek(key)
	sh := s.shardFor(key)
	if ok {
		sh.hits.Add(1)
	} else {
		sh.misses.Add(1)
	}
	return env, ok
}

// CountMiss counts a read of key that found no live key, for a command
// whose own lookup does not count (DUMP, GETDEL, LINDEX's check), as
// Redis's lookupKeyRead counts it: a miss, and a keymiss.
func (s *Store) CountMiss(key []byte) { s.missed(s.shardFor(key), key) }
