package scripting

import (
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// What a library holds is measured from the interpreter's objects, not
// from its source: after its top level runs, everything reachable from
// the functions it registered is walked (closures, their upvalues,
// prototypes and constants, tables with their array and hash parts and
// metatables, strings, userdata), each object once, and sized as Go's
// allocator holds it: the struct gopher-lua allocates, rounded up to Go's
// size class, and each slice's capacity and each map's slots behind it. A
// source of a few hundred bytes may build a hundred megabytes at load, or
// keep a prototype of several kilobytes per one-line function (gopher-lua
// gives each prototype's slices room for 128 instructions): only the walk
// knows.
//
// Objects the libraries share (the read-only globals, the redis table and
// every other object reachable from the interpreter's own roots before
// any library ran) are not charged to any library: they are the
// interpreter's, and no library can change them.

// The sizes of gopher-lua's structs on a 64-bit platform, as value.go and
// function.go declare them: an interface is two words, a slice three, a
// string two, a map or pointer one.
const (
	ifaceSize       = 16
	ptrSize         = 8
	sliceSize       = 24
	tableSize       = ifaceSize + sliceSize + 2*ptrSize + sliceSize + ptrSize // LTable
	functionSize    = 8 + 2*ptrSize + ptrSize + sliceSize                     // LFunction: IsG, Env, Proto, GFunction, Upvalues
	upvalueSize     = 2*ptrSize + 8 + ifaceSize + 8                           // Upvalue: next, reg, index, value, closed
	protoStructSize = 16 + 3*8 + 8 + 4*sliceSize + 4*sliceSize + sliceSize    // FunctionProto
	localSize       = 16 + 2*8                                                // DbgLocalInfo
	callSize        = 16 + 8                                                  // DbgCall
	userDataSize    = ifaceSize + ptrSize + ifaceSize                         // LUserData
	threadSize      = 1024*ifaceSize + 4096                                   // a coroutine: its registry and frames, at least
	stringBox       = 16                                                      // a string stored in an interface: its header, on the heap
)

// sizeClass rounds n up to what Go's allocator gives a request of n bytes:
// its size classes up to 32 KiB, whole 8 KiB pages past that.
func sizeClass(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n > 32768 {
		return (n + 8191) &^ 8191
	}
	i, j := 0, len(sizeClasses)
	for i < j {
		h := (i + j) / 2
		if int64(sizeClasses[h]) < n {
			i = h + 1
		} else {
			j = h
		}
	}
	return int64(sizeClasses[i])
}

// sizeClasses are Go's small object size classes (runtime/sizeclasses.go).
var sizeClasses = [...]uint16{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
	240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408,
	1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192,
	9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264,
	28672, 32768}

// mapSize is what a Go map of n entries of entry bytes each holds: Go's
// swiss tables keep slots in groups of 8 with a control byte each, at
// most 7/8 full, their slots a power of two, split into tables of at most
// 1024 slots (each then an allocation past 32 KiB, rounded to pages).
func mapSize(n int, entry int64) int64 {
	const header, table, tableSlots = 48, 64, 1024
	group := 8 + 8*entry
	if n <= 8 {
		return header + sizeClass(group)
	}
	slots := int64(16)
	for slots*7/8 < int64(n) {
		slots *= 2
	}
	if slots <= tableSlots {
		return header + table + sizeClass(slots/8*group)
	}
	tables := slots / tableSlots
	return header + sizeClass(tables*ptrSize) + tables*(table+sizeClass(tableSlots/8*group))
}

// defaultHashCap is the entries gopher-lua makes a table's string-keyed
// map for when a string key is first assigned (its defaultHashCap); a
// table constructor's ({a = 1}) is its own size, which the walk cannot
// tell apart: it charges the larger.
const defaultHashCap = 32

// tableFields are the indexes of LTable's unexported fields, read with
// reflect for their lengths and capacities only (what the table holds,
// never its contents, which ForEach gives); -1 where gopher-lua has no
// such field, when the size is estimated from the entries.
var tableFields = func() (f struct{ array, dict, strdict, keys, k2i int }) {
	t := reflect.TypeOf(lua.LTable{})
	idx := func(name string) int {
		if sf, ok := t.FieldByName(name); ok {
			return sf.Index[0]
		}
		return -1
	}
	f.array, f.dict, f.strdict, f.keys, f.k2i = idx("array"), idx("dict"), idx("strdict"), idx("keys"), idx("k2i")
	return f
}()

// protoStrings is the index of FunctionProto's stringConstants, -1 if none.
var protoStrings = func() int {
	if sf, ok := reflect.TypeOf(lua.FunctionProto{}).FieldByName("stringConstants"); ok {
		return sf.Index[0]
	}
	return -1
}()

// bigString is the length from which a string's bytes are counted once
// however many values hold them (a table holding one large string a
// thousand times holds it once); shorter ones are counted at each value,
// which spares the walk a set entry per small string.
const bigString = 64

// walker sizes what is reachable from a library's functions.
type walker struct {
	// shared are the interpreter's own objects, never charged.
	shared map[any]struct{}
	seen   map[any]struct{}
	// strings are the big strings counted, by their bytes' address.
	strings map[unsafe.Pointer]struct{}
	stack   []any
	bytes   int64
}

func newWalker(shared map[any]struct{}) *walker {
	return &walker{shared: shared, seen: map[any]struct{}{}, strings: map[unsafe.Pointer]struct{}{}}
}

// sharedObjects collects every object reachable from the interpreter's
// roots: its globals, registry, the views and the library API.
func sharedObjects(st *state, roots ...lua.LValue) map[any]struct{} {
	w := newWalker(nil)
	for _, r := range roots {
		w.value(r)
	}
	w.value(st.L.G.Registry)
	w.value(st.L.G.Global)
	w.value(st.L.GetMetatable(lua.LString("")))
	for v, t := range st.views {
		w.value(v)
		w.value(t)
	}
	w.run()
	return w.seen
}

// size is the bytes reachable from roots that no earlier call of the
// walker counted and the interpreter does not share.
func (w *walker) size(roots ...lua.LValue) int64 {
	for _, r := range roots {
		w.value(r)
	}
	w.run()
	return w.bytes
}

// visit marks o seen and queues it, unless it was seen or is shared.
func (w *walker) visit(o any) {
	if _, ok := w.shared[o]; ok {
		return
	}
	if _, ok := w.seen[o]; ok {
		return
	}
	w.seen[o] = struct{}{}
	w.stack = append(w.stack, o)
}

// value counts what a value held in an interface holds itself (a number's
// or string's box) and queues the object it points to.
func (w *walker) value(v lua.LValue) {
	switch v := v.(type) {
	case nil:
	case lua.LString:
		w.bytes += stringBox
		w.str(string(v))
	case lua.LNumber:
		// Integers 0 to 127 are preallocated (gopher-lua's preloads);
		// others take 8 bytes in blocks of 32, which the temporaries
		// computed beside them share (a loop's counter, an expression's
		// parts) and keep live as long as one of them is: twice that.
		if !(v >= 0 && v < 128 && v == lua.LNumber(int64(v))) {
			w.bytes += 16
		}
	case *lua.LTable:
		if v != nil {
			w.visit(v)
		}
	case *lua.LFunction:
		if v != nil {
			w.visit(v)
		}
	case *lua.LUserData:
		if v != nil {
			w.visit(v)
		}
	case *lua.LState:
		if v != nil {
			w.visit(v)
		}
	}
}

// str counts a string's bytes; a big one only once.
func (w *walker) str(s string) {
	if len(s) == 0 {
		return
	}
	if len(s) >= bigString {
		p := unsafe.Pointer(unsafe.StringData(s))
		if _, ok := w.strings[p]; ok {
			return
		}
		w.strings[p] = struct{}{}
	}
	w.bytes += sizeClass(int64(len(s)))
}

// run walks the queued objects until none is left.
func (w *walker) run() {
	for len(w.stack) > 0 {
		o := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		switch o := o.(type) {
		case *lua.LTable:
			w.table(o)
		case *lua.LFunction:
			w.bytes += sizeClass(functionSize) + sizeClass(int64(cap(o.Upvalues))*ptrSize)
			if o.Env != nil {
				w.visit(o.Env)
			}
			for _, uv := range o.Upvalues {
				if uv != nil {
					w.visit(uv)
				}
			}
			if o.Proto != nil {
				w.visit(o.Proto)
			}
		case *lua.Upvalue:
			w.bytes += sizeClass(upvalueSize)
			w.value(o.Value())
		case *lua.FunctionProto:
			w.proto(o)
		case *lua.LUserData:
			w.bytes += sizeClass(userDataSize)
			w.value(o.Metatable)
			if o.Env != nil {
				w.visit(o.Env)
			}
		case *lua.LState:
			// A coroutine: its stacks, and the values its current frame
			// holds (what its suspended frames below hold is not seen).
			w.bytes += threadSize
			for i := 1; i <= o.GetTop(); i++ {
				w.value(o.Get(i))
			}
		}
	}
}

func (w *walker) table(t *lua.LTable) {
	w.bytes += sizeClass(tableSize)
	w.value(t.Metatable)
	n := 0
	t.ForEach(func(k, v lua.LValue) {
		n++
		w.value(k)
		w.value(v)
	})
	rv := reflect.ValueOf(t).Elem()
	field := func(i int) (reflect.Value, bool) {
		if i < 0 {
			return reflect.Value{}, false
		}
		f := rv.Field(i)
		return f, !f.IsNil()
	}
	f := tableFields
	if f.array < 0 || f.strdict < 0 || f.dict < 0 {
		// Another gopher-lua: each entry as an array slot and a map entry.
		w.bytes += int64(n) * (ifaceSize + 2*ifaceSize)
		return
	}
	if a, ok := field(f.array); ok {
		w.bytes += sizeClass(int64(a.Cap()) * ifaceSize)
	}
	var hashed int
	if m, ok := field(f.strdict); ok {
		hashed += m.Len()
	}
	if m, ok := field(f.dict); ok {
		hashed += m.Len()
	}
	// keys holds every key the hash parts ever held (gopher-lua never
	// shrinks it, nor the maps): the maps' slots were sized for that many.
	ever := hashed
	if k, ok := field(f.keys); ok {
		w.bytes += sizeClass(int64(k.Cap()) * ifaceSize)
		ever = max(ever, k.Len())
	}
	if m, ok := field(f.k2i); ok {
		w.bytes += mapSize(m.Len(), ifaceSize+8)
	}
	if m, ok := field(f.strdict); ok {
		w.bytes += mapSize(max(m.Len()+ever-hashed, defaultHashCap), 16+ifaceSize)
	}
	if m, ok := field(f.dict); ok {
		w.bytes += mapSize(m.Len(), 2*ifaceSize)
	}
}

func (w *walker) proto(p *lua.FunctionProto) {
	w.bytes += sizeClass(protoStructSize) +
		sizeClass(int64(cap(p.Code))*4) +
		sizeClass(int64(cap(p.Constants))*ifaceSize) +
		sizeClass(int64(cap(p.FunctionPrototypes))*ptrSize) +
		sizeClass(int64(cap(p.DbgSourcePositions))*8) +
		sizeClass(int64(cap(p.DbgLocals))*ptrSize) +
		sizeClass(int64(cap(p.DbgCalls))*callSize) +
		sizeClass(int64(cap(p.DbgUpvalues))*16)
	w.str(p.SourceName)
	for _, c := range p.Constants {
		w.value(c)
	}
	if protoStrings >= 0 {
		// The string constants again, as strings sharing the constants'
		// bytes.
		w.bytes += sizeClass(int64(reflect.ValueOf(p).Elem().Field(protoStrings).Cap()) * 16)
	}
	for _, l := range p.DbgLocals {
		if l != nil {
			w.bytes += sizeClass(localSize)
			w.str(l.Name)
		}
	}
	for _, c := range p.DbgCalls {
		w.str(c.Name)
	}
	for _, u := range p.DbgUpvalues {
		w.str(u)
	}
	for _, child := range p.FunctionPrototypes {
		if child != nil {
			w.visit(child)
		}
	}
}
