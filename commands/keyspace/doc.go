// Package keyspace is the family of Redis's keyspace commands: strings
// and bits, keys and expiry, RENAME and COPY, hashes, sets, lists and
// their blocking pops, sorted sets and theirs, GEO indexes (sorted sets of
// geohashes), streams and their consumer groups (XREAD and XREADGROUP
// block too), HyperLogLog, DUMP and
// RESTORE, OBJECT, DBSIZE, FLUSHALL/FLUSHDB and TIME, with Redis 7.0's
// semantics, error texts and RESP2/RESP3 reply types.
//
// A handler parses its arguments, asks the store (whose methods hold each
// type's semantics, under the type's own names) and writes its reply to
// the Ctx's writer. It never sees a connection: what it needs of the
// client (CLIENT NO-TOUCH, proto-max-bulk-len, whether it runs inside
// EXEC or a script, blocking) it asks commands.Client. Where a handler
// runs (the atomic section, MULTI's queue, a script, the shared tier) is
// the server's decision, from the Spec's flags and key positions in the
// family's table (Commands): each type's table is in its file, beside
// its handlers.
package keyspace
