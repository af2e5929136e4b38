package scripting

import (
	"container/list"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// script is one compiled script in the cache.
type script struct {
	sha   string // lowercase hex SHA1 of the body
	proto *lua.FunctionProto
	flags Flags
	size  int64 // what it counts against the byte bound
}

// cache maps SHA1 digests to compiled scripts, bounded by count and by
// bytes; past either bound the least recently run or loaded script goes.
// Redis 7.2 keeps every script until SCRIPT FLUSH; a server that runs
// scripts built from request data would grow without end, so here the
// cache is bounded and a client whose EVALSHA meets NOSCRIPT sends EVAL,
// as clients do.
type cache struct {
	mu       sync.Mutex
	bySHA    map[string]*list.Element // of *script
	lru      list.List                // front: most recently used
	bytes    int64
	evicted  uint64
	maxCount int
	maxBytes int64
}

func newCache(maxCount int, maxBytes int64) *cache {
	return &cache{bySHA: map[string]*list.Element{}, maxCount: maxCount, maxBytes: maxBytes}
}

// get returns the script with digest sha and marks it used.
func (c *cache) get(sha string) (*script, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.bySHA[sha]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	return el.Value.(*script), true
}

// peek returns the script with digest sha, leaving its place in the LRU
// order: a look at its flags is no use of it.
func (c *cache) peek(sha string) (*script, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.bySHA[sha]
	if !ok {
		return nil, false
	}
	return el.Value.(*script), true
}

func (c *cache) has(sha string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.bySHA[sha]
	return ok
}

// add stores s, or returns the script already stored under its digest,
// and evicts what no longer fits. The script just added stays even when
// it alone is over the byte bound: it is about to run.
func (c *cache) add(s *script) *script {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.bySHA[s.sha]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*script)
	}
	c.bySHA[s.sha] = c.lru.PushFront(s)
	c.bytes += s.size
	for c.lru.Len() > 1 && (c.lru.Len() > c.maxCount || c.bytes > c.maxBytes) {
		old := c.lru.Remove(c.lru.Back()).(*script)
		delete(c.bySHA, old.sha)
		c.bytes -= old.size
		c.evicted++
	}
	return s
}

func (c *cache) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.bySHA)
	c.lru.Init()
	c.bytes = 0
}

func (c *cache) stats() (n int, bytes int64, evicted uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes, c.evicted
}

// protoSize estimates the memory of a compiled prototype and the ones it
// nests: its instructions, constants, line table and debug names.
func protoSize(p *lua.FunctionProto) int64 {
	const word = 8
	n := int64(200 + 4*len(p.Code) + 16*len(p.Constants) + word*len(p.DbgSourcePositions) +
		48*len(p.DbgLocals) + 32*len(p.DbgCalls) + 16*len(p.DbgUpvalues))
	for _, c := range p.Constants {
		if s, ok := c.(lua.LString); ok {
			n += int64(len(s))
		}
	}
	for _, l := range p.DbgLocals {
		n += int64(len(l.Name))
	}
	for _, child := range p.FunctionPrototypes {
		n += protoSize(child)
	}
	return n
}
