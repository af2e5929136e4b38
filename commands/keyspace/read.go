package keyspace

import (
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
)

// read returns key's value for a command that reads it, if it is a
// string (a key of another type reads as missing, as MGET reads it): with
// CLIENT NO-TOUCH on, the read does not make the key more likely to stay.
func read(c *commands.Ctx, key []byte) ([]byte, bool) {
	if c.Client.NoTouch() {
		env, ok := c.Store.LookupNoTouch(key)
		return env.Value, ok && env.Type == engine.TypeString
	}
	return c.Store.Get(key)
}

// readMulti reads keys at one instant (Store.ReadMulti) for a command
// that reads them, counting hits and misses and, unless the client is in
// NO-TOUCH mode, expiring and reporting them as read does. fn runs under
// the store's locks: it must be quick and must not keep value, which is nil
// for a key that holds another type than a string.
func readMulti(c *commands.Ctx, keys [][]byte, fn func(i int, t engine.Type, value []byte, found bool)) {
	c.Store.ReadMulti(keys, readMode(c), fn)
}

// readMode is how c's commands read: as GET does, or without touching
// the keys in CLIENT NO-TOUCH mode.
func readMode(c *commands.Ctx) engine.ReadMode {
	if c.Client.NoTouch() {
		return engine.ReadCounts
	}
	return engine.ReadAll
}

// readString is read for a command of strings, which answers -WRONGTYPE
// for a key of another type: then it writes that error and ok is false.
func readString(c *commands.Ctx, key []byte) (v []byte, exists, ok bool) {
	exists, ok = readOrMiss(c, key, func() bool {
		v, exists = read(c, key)
		return exists
	})
	return v, exists, ok
}

// readTries bounds the reads of a command whose key a writer keeps
// making a string between its read and its second look; past them the
// miss stands.
const readTries = 8

// readOrMiss runs read, a read of key's string that reports whether it
// found one, until it does or a miss stands. After a miss it looks at the
// key again (so that a hit costs one lookup): missing, the miss stands;
// of another type, it writes -WRONGTYPE and ok is false; a string, written
// since the read, and read runs again, or the command would answer a miss
// where the key was never missing. The answer is of one instant: the
// read's, or the second look's.
func readOrMiss(c *commands.Ctx, key []byte, read func() bool) (hit, ok bool) {
	for range readTries {
		if read() {
			return true, true
		}
		switch t, found := c.Store.TypeOf(key); {
		case !found:
			return false, true
		case t != engine.TypeString:
			c.W.Error(commands.ErrWrongType)
			return false, false
		}
	}
	return false, true
}

// view calls fn with key's value for a command that reads it, as read
// does; without NO-TOUCH it hands fn the store's own bytes (Store.View), so
// fn must not keep them.
func view(c *commands.Ctx, key []byte, fn func([]byte)) bool {
	if c.Client.NoTouch() {
		v, ok := read(c, key)
		if ok {
			fn(v)
		}
		return ok
	}
	return c.Store.View(key, fn)
}
