package scripting

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// userFunction is the chunk name libraries compile under, as Redis loads
// them ("@user_function").
const userFunction = "user_function"

// loadTimeout is Redis's LOAD_TIMEOUT_MS: how long a library's top level
// may run at FUNCTION LOAD before it is stopped.
const loadTimeout = 500

// library is one loaded library (FUNCTION LOAD): its code as the client
// sent it, shebang included, and the functions its top level registered.
type library struct {
	name  string
	code  string
	funcs map[string]*function
	// vm is what its Lua objects hold, as the last walk measured them
	// (walker); meta what its entry holds outside the interpreter (its
	// code, names and descriptions). Both count against the registry's
	// byte bound; the registry's lock guards them once it is linked.
	vm, meta int64
}

// size is what l counts against the registry's byte bound.
func (l *library) size() int64 { return l.vm + l.meta }

// function is one function a library registered with
// redis.register_function; fn is a closure of the function interpreter.
type function struct {
	name  string
	desc  *string // nil: none given
	flags Flags
	fn    *lua.LFunction
	lib   *library
	// grows marks a closure with upvalues: the only way a call leaves
	// something behind in the interpreter, as the globals are read-only
	// (see FCall).
	grows bool
}

// registry holds the loaded libraries and indexes their functions by
// name, which are unique across libraries as in Redis and, as there,
// found in any case (a library's own are case-sensitive). Unlike the script
// cache nothing is evicted: a library stays until FUNCTION DELETE or
// FLUSH, and FUNCTION LOAD is refused once the libraries' measured
// bytes would pass maxBytes.
type registry struct {
	mu    sync.Mutex // guards the fields below
	libs  map[string]*library
	funcs map[string]*function
	// bytes is the libraries' sizes added up, vm their Lua objects' part.
	bytes, vm int64
	maxBytes  int64
	// unmeasured is what the calls of growing functions allocated since
	// the last walk, at most what they added; dirty are the libraries
	// they belong to (Engine.grown).
	unmeasured int64
	dirty      map[*library]struct{}
	// onBytes is told each change of bytes (Options.OnLibraryBytes),
	// after the lock is released.
	onBytes func(delta int64)
}

func newRegistry(maxBytes int64, onBytes func(int64)) *registry {
	if onBytes == nil {
		onBytes = func(int64) {}
	}
	return &registry{libs: map[string]*library{}, funcs: map[string]*function{}, maxBytes: maxBytes,
		dirty: map[*library]struct{}{}, onBytes: onBytes}
}

// grown adds what a call of one of l's growing functions allocated and,
// once what all such calls allocated since the last walk is due for one
// (Engine.grown), returns the libraries to walk again.
func (r *registry) grown(l *library, allocated int64) []*library {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.libs[l.name] != l {
		return nil // deleted or replaced while it ran
	}
	r.dirty[l] = struct{}{}
	r.unmeasured += allocated
	if r.unmeasured < max(r.bytes/remeasureShare, remeasureMin) {
		return nil
	}
	r.unmeasured = 0
	libs := make([]*library, 0, len(r.dirty))
	for l := range r.dirty {
		libs = append(libs, l)
	}
	clear(r.dirty)
	return libs
}

// full reports whether the libraries hold more than maxBytes, which only
// their functions' calls can bring about (see FCall).
func (r *registry) full() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes > r.maxBytes
}

// remeasured sets what l's Lua objects hold to vm, as a walk measured
// it, and reports the registry's total after; a library no longer linked
// (FUNCTION DELETE, FLUSH or a REPLACE while it ran) changes nothing.
func (r *registry) remeasured(l *library, vm int64) (total int64) {
	r.mu.Lock()
	var delta int64
	if r.libs[l.name] == l {
		delta = vm - l.vm
		r.bytes += delta
		r.vm += delta
	}
	l.vm = vm
	total = r.bytes
	r.mu.Unlock()
	if delta != 0 {
		r.onBytes(delta)
	}
	return total
}

func (r *registry) function(name string) (*function, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f, ok := r.funcs[strings.ToLower(name)]
	return f, ok
}

func (r *registry) has(library string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.libs[library]
	return ok
}

// sorted returns the libraries in name order; Redis lists them in its
// hash table's order, which no client can rely on.
func (r *registry) sorted() []*library {
	r.mu.Lock()
	defer r.mu.Unlock()
	libs := make([]*library, 0, len(r.libs))
	for _, l := range r.libs {
		libs = append(libs, l)
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].name < libs[j].name })
	return libs
}

func (r *registry) stats() (libs, funcs int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.libs), len(r.funcs), r.bytes
}

func (r *registry) memory() (vm, meta int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.vm, r.bytes - r.vm
}

// join adds libs, as Redis's libraryJoin does: a library whose name is
// taken is an error unless replace, when the old one goes; a function
// name another library holds is an error. Nothing changes on an error.
// With flush, the registry's libraries all go first.
func (r *registry) join(libs []*library, replace, flush bool) error {
	r.mu.Lock()
	old := r.bytes
	err := r.joinLocked(libs, replace, flush)
	delta := r.bytes - old
	r.mu.Unlock()
	if delta != 0 {
		r.onBytes(delta)
	}
	return err
}

func (r *registry) joinLocked(libs []*library, replace, flush bool) error {
	gone := map[string]bool{}
	if !flush {
		for _, l := range libs {
			if _, ok := r.libs[l.name]; ok {
				if !replace {
					return errLibraryExists{l.name}
				}
				gone[l.name] = true
			}
		}
		for _, l := range libs {
			for _, f := range sortedFuncs(l) {
				if old, ok := r.funcs[strings.ToLower(f.name)]; ok && !gone[old.lib.name] {
					return Error(fmt.Sprintf("ERR Function %s already exists", f.name))
				}
			}
		}
	}
	var bytes, vm int64
	if !flush {
		bytes, vm = r.bytes, r.vm
		for name := range gone {
			bytes -= r.libs[name].size()
			vm -= r.libs[name].vm
		}
	}
	for _, l := range libs {
		bytes += l.size()
		vm += l.vm
	}
	if bytes > r.maxBytes {
		return ErrLibrariesFull
	}
	if flush {
		clear(r.libs)
		clear(r.funcs)
		clear(r.dirty)
	}
	for name := range gone {
		r.unlink(r.libs[name])
	}
	for _, l := range libs {
		r.libs[l.name] = l
		for name, f := range l.funcs {
			r.funcs[strings.ToLower(name)] = f
		}
	}
	r.bytes, r.vm = bytes, vm
	return nil
}

// errLibraryExists is join's error for a library name taken; FUNCTION
// LOAD and RESTORE word it differently.
type errLibraryExists struct{ name string }

func (e errLibraryExists) Error() string { return "ERR Library " + e.name + " already exists" }

// unlink removes l; r.mu is held.
func (r *registry) unlink(l *library) {
	for name := range l.funcs {
		delete(r.funcs, strings.ToLower(name))
	}
	delete(r.libs, l.name)
	delete(r.dirty, l)
}

func (r *registry) delete(name string) bool {
	r.mu.Lock()
	l, ok := r.libs[name]
	if !ok {
		r.mu.Unlock()
		return false
	}
	r.unlink(l)
	r.bytes -= l.size()
	r.vm -= l.vm
	r.mu.Unlock()
	r.onBytes(-l.size())
	return true
}

func (r *registry) flush() {
	r.mu.Lock()
	clear(r.libs)
	clear(r.funcs)
	clear(r.dirty)
	gone := r.bytes
	r.bytes, r.vm = 0, 0
	r.mu.Unlock()
	if gone != 0 {
		r.onBytes(-gone)
	}
}

func sortedFuncs(l *library) []*function {
	fs := make([]*function, 0, len(l.funcs))
	for _, f := range l.funcs {
		fs = append(fs, f)
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].name < fs[j].name })
	return fs
}

// libraryMeta is a library's shebang line, read as Redis's
// functionExtractLibMetaData does: "#!<engine> name=<name>".
type libraryMeta struct {
	engine, name string
	// body is the code after the shebang, from its newline on, so that
	// line numbers hold.
	body string
}

func parseLibraryMeta(code string) (libraryMeta, error) {
	if !strings.HasPrefix(code, "#!") {
		return libraryMeta{}, Error("ERR Missing library metadata")
	}
	n := strings.IndexByte(code, '\n')
	if n < 0 {
		return libraryMeta{}, Error("ERR Invalid library metadata")
	}
	parts, ok := splitArgs(code[:n])
	if !ok || len(parts) == 0 {
		return libraryMeta{}, Error("ERR Invalid library metadata")
	}
	md := libraryMeta{engine: parts[0][2:], body: code[n:]}
	named := false
	for _, p := range parts[1:] {
		if len(p) >= 5 && strings.EqualFold(p[:5], "name=") {
			if named {
				return libraryMeta{}, Error("ERR Invalid metadata value, name argument was given multiple times")
			}
			md.name, named = p[5:], true
			continue
		}
		return libraryMeta{}, Error(oneLine("ERR Invalid metadata value given: " + p))
	}
	if !named {
		return libraryMeta{}, Error("ERR Library name was not given")
	}
	return md, nil
}

// validName is Redis's functionsVerifyName: letters, digits and '_', at
// least one.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

const errBadName Error = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long"

// loading is the library whose top level runs now (FUNCTION LOAD), which
// redis.register_function adds to.
type loading struct {
	lib *library
}

// openLibraryAPI builds what a library's top level sees as its globals,
// as Redis's LIBRARY_API: only redis, with register_function, log, the
// log levels and the version. Everything else is a nonexistent global.
func (s *state) openLibraryAPI() *lua.LTable {
	L := s.L
	red := L.NewTable()
	s.setFuncs(red, map[string]lua.LGFunction{
		"register_function": s.registerFunction,
		"log":               s.redisLog,
	})
	for name, v := range map[string]int{
		"LOG_DEBUG": int(LogDebug), "LOG_VERBOSE": int(LogVerbose), "LOG_NOTICE": int(LogNotice),
		"LOG_WARNING": int(LogWarning),
	} {
		red.RawSetString(name, lua.LNumber(v))
	}
	red.RawSetString("REDIS_VERSION", lua.LString(s.version))
	red.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(s.version)))
	// Redis gives the library's redis table the globals' metatable too:
	// redis.call at load time reads a nonexistent global.
	meta := L.NewTable()
	meta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		name, _ := luaString(L.Get(2))
		luaError(L, nonexistentFm, name)
		return 0
	}))
	L.SetMetatable(red, meta)
	g := L.NewTable()
	g.RawSetString("redis", s.view(red))
	L.SetMetatable(g, meta)
	return s.view(g)
}

// registerFunction is redis.register_function, positional (name,
// callback) or named ({function_name=, callback=, flags=, description=}),
// with Redis's texts.
func (s *state) registerFunction(L *lua.LState) int {
	ld := s.loading
	if ld == nil {
		return raise(L, "redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &function{lib: ld.lib}
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			return raise(L, "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		if msg := readNamedArgs(s.shown(t).(*lua.LTable), f); msg != "" {
			return raise(L, msg)
		}
	case 2:
		name, ok := luaString(L.Get(1))
		if !ok {
			return raise(L, "first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return raise(L, "second argument to redis.register_function must be a function")
		}
		f.name, f.fn = name, fn
	default:
		return raise(L, "wrong number of arguments to redis.register_function")
	}
	if !validName(f.name) {
		return raise(L, string(errBadName[4:]))
	}
	if _, dup := ld.lib.funcs[f.name]; dup {
		return raise(L, "Function already exists in the library")
	}
	ld.lib.funcs[f.name] = f
	return 0
}

func readNamedArgs(t *lua.LTable, f *function) string {
	var msg string
	named := false
	t.ForEach(func(k, v lua.LValue) {
		if msg != "" {
			return
		}
		key, ok := luaString(k)
		if !ok {
			msg = "named argument key given to redis.register_function is not a string"
			return
		}
		switch strings.ToLower(key) {
		case "function_name":
			if f.name, ok = luaString(v); !ok {
				msg = "function_name argument given to redis.register_function must be a string"
			}
			named = true
		case "description":
			d, ok := luaString(v)
			if !ok {
				msg = "description argument given to redis.register_function must be a string"
			}
			f.desc = &d
		case "callback":
			if f.fn, ok = v.(*lua.LFunction); !ok {
				msg = "callback argument given to redis.register_function must be a function"
			}
		case "flags":
			ft, ok := v.(*lua.LTable)
			if !ok {
				msg = "flags argument to redis.register_function must be a table representing function flags"
				return
			}
			if f.flags, ok = readFlags(ft); !ok {
				msg = "unknown flag given"
			}
		default:
			msg = "unknown argument given to redis.register_function"
		}
	})
	switch {
	case msg != "":
		return msg
	case !named:
		return "redis.register_function must get a function name argument"
	case f.fn == nil:
		return "redis.register_function must get a callback argument"
	}
	return ""
}

// readFlags reads a flags array as luaRegisterFunctionReadFlags does,
// the names in any case.
func readFlags(t *lua.LTable) (Flags, bool) {
	var flags Flags
	for i := 1; ; i++ {
		v := t.RawGetInt(i)
		if v == lua.LNil {
			return flags, true
		}
		name, ok := luaString(v)
		if !ok {
			return 0, false
		}
		found := false
		for _, fn := range flagNames {
			if strings.EqualFold(name, fn.name) {
				flags |= fn.flag
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
}

// libraryOverhead is what a library's entry holds outside the interpreter,
// as Redis counts its functions' overhead (functionMallocSize,
// libraryMallocSize): its struct and code, kept for FUNCTION DUMP and
// LIST, and each function's struct, name and description, with their
// entries in the library's and the registry's maps.
func libraryOverhead(l *library) int64 {
	const libraryStruct, functionStruct, entry = 96, 64, 2 * (16 + 8)
	n := libraryStruct + sizeClass(int64(len(l.code))) + sizeClass(int64(len(l.name))) + mapSize(len(l.funcs), 16+8)
	for _, f := range l.funcs {
		n += functionStruct + entry + 2*sizeClass(int64(len(f.name)))
		if f.desc != nil {
			n += sizeClass(int64(len(*f.desc)))
		}
	}
	return n
}
