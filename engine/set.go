package engine

// setEncoding names how Redis 7.0 would hold the set c: "intset" while
// every member is an integer and there are at most set-max-intset-entries
// (512), else "hashtable".
func setEncoding(c collection) string {
	if c.obj != nil {
		return "hashtable"
	}
	return "intset"
}

// exportSet is the portable form of the set c (see Store.Export).
func exportSet(c collection) []byte {
	panic("TODO: sets")
}

// importSet is the set whose portable form is b.
func importSet(b []byte) (collection, bool) {
	return collection{}, false
}
