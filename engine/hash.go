package engine

// hashEncoding names how Redis would hold the hash c: "listpack" while it
// is small, "hashtable" past hash-max-listpack-entries (128) or
// hash-max-listpack-value (64 bytes).
func hashEncoding(c collection) string {
	if c.obj != nil {
		return "hashtable"
	}
	return "listpack"
}

// exportHash is the portable form of the hash c (see Store.Export).
func exportHash(c collection) []byte {
	panic("TODO: hashes")
}

// importHash is the hash whose portable form is b.
func importHash(b []byte) (collection, bool) {
	return collection{}, false
}
