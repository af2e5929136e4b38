// Package rdb reads and writes Redis's RDB format as redis-server 7.0
// writes it: version 10, with the CRC64 footer. It is the format only: a
// Writer encodes Entries into a file (or any io.Writer), a Reader decodes
// them back, and neither knows the store or the network.
//
// The writer writes what redis-server 7.0 would write for the same data
// under its default configuration: strings integer-encoded, LZF-compressed
// past 20 bytes when that saves more than 4, or plain; small hashes and sorted sets as listpacks, small integer
// sets as intsets, small lists as quicklist nodes of listpacks, the rest in
// their plain forms. The reader reads every encoding 7.0 may write and the
// older ones it still loads (ziplists, zipmaps, intsets, quicklists of
// ziplists, the version-1 sorted set), including Redis's integer and LZF
// string encodings.
//
// Input is hostile: every length is checked against the input that remains
// and against Options.MaxValue before anything is allocated, every blob
// (listpack, ziplist, intset, zipmap) is checked whole before its members
// are handed out, and a bad file is an error, never a panic.
package rdb
