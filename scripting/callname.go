package scripting

import (
	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1 names the value a failed call tried to call ("attempt to call
// field 'foo' (a nil value)") by running the calling function's bytecode
// symbolically up to the call (ldebug.c's getobjname). gopher-lua raises
// only "attempt to call a non-function object" and keeps no program
// counter where it can be read, but it keeps Lua 5.1's opcodes, the line
// of each instruction, the names of locals and upvalues, and the raising
// frame's registers until its error handler returns. So the call is found
// among the calls on the raising line: those whose function register
// holds no callable value, whose live locals are the frame's, and whose
// register holds what the code that named it would read now (a call that
// already returned holds its result there), and it is named only when
// every such call is worded alike.

// failedCallText is Lua 5.1's text for the failed call in the Lua function
// at level of L's stack, when L is in the error handler of that failure
// and the calls that may have failed all read the same.
func failedCallText(L *lua.LState, level int) (string, bool) {
	dbg, ok := L.GetStack(level)
	if !ok {
		return "", false
	}
	fv, err := L.GetInfo("fl", dbg, lua.LNil)
	fn, isFn := fv.(*lua.LFunction)
	if err != nil || !isFn || fn.IsG || dbg.CurrentLine <= 0 {
		return "", false
	}
	p := fn.Proto
	live := liveLocals(L, dbg, int(p.NumUsedRegisters))
	rd := reader{L, dbg, fn, live}
	text := ""
	for pc, ins := range p.Code {
		if pc >= len(p.DbgSourcePositions) || p.DbgSourcePositions[pc] != dbg.CurrentLine {
			continue
		}
		op := opcode(ins)
		if op != lua.OP_CALL && op != lua.OP_TAILCALL && op != lua.OP_TFORLOOP {
			continue
		}
		// TFORLOOP calls its generator, kept in register A.
		reg := argA(ins)
		name, v := L.GetLocal(dbg, reg+1)
		if name == "" || v == nil || callable(L, v) || !sameLocals(fn, pc, live) {
			continue
		}
		kind, what := "", ""
		// Lua 5.1 names no generator: TFORLOOP calls a copy of it, which
		// its symbolic execution does not follow.
		if op != lua.OP_TFORLOOP {
			// A call that returned holds its result, not what it called.
			if now, ok := rd.value(pc, reg, 0); ok && now != v {
				continue
			}
			kind, what = objectName(fn, pc, reg)
		}
		t := callErrorText(kind, what, v.Type().String())
		if text != "" && t != text {
			return "", false
		}
		text = t
	}
	return text, text != ""
}

// liveLocals is, for each register of the frame dbg, the name of the
// local it holds where the frame stopped ("" for none; gopher-lua calls
// a register past the locals "(*temporary)").
func liveLocals(L *lua.LState, dbg *lua.Debug, n int) []string {
	names := make([]string, n)
	for i := range names {
		name, _ := L.GetLocal(dbg, i+1)
		if name != "(*temporary)" {
			names[i] = name
		}
	}
	return names
}

// sameLocals reports whether the locals live at pc are live, as named.
func sameLocals(fn *lua.LFunction, pc int, live []string) bool {
	for i, want := range live {
		if name, _ := fn.LocalName(i+1, pc); name != want {
			return false
		}
	}
	return true
}

func callable(L *lua.LState, v lua.LValue) bool {
	if _, ok := v.(*lua.LFunction); ok {
		return true
	}
	_, ok := L.GetMetaField(v, "__call").(*lua.LFunction)
	return ok
}

// objectName is getobjname: what register reg holds at pc of fn, as the
// kind ("local", "global", "field", "upvalue", "method") and name Lua 5.1
// gives it, or "" when the code does not say.
func objectName(fn *lua.LFunction, pc, reg int) (kind, name string) {
	if name, ok := fn.LocalName(reg+1, pc); ok {
		return "local", name
	}
	p := fn.Proto
	setAt := lastSetter(p, pc, reg)
	if setAt < 0 {
		return "", ""
	}
	ins := p.Code[setAt]
	switch opcode(ins) {
	case lua.OP_GETGLOBAL:
		if s, ok := constant(p, argBx(ins)); ok {
			return "global", s
		}
	case lua.OP_MOVE, lua.OP_MOVEN:
		if b := argB(ins); b < argA(ins) {
			return objectName(fn, pc, b)
		}
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS:
		return "field", keyName(p, argC(ins))
	case lua.OP_GETUPVAL:
		if b := argB(ins); b < len(p.DbgUpvalues) {
			return "upvalue", p.DbgUpvalues[b]
		}
		return "upvalue", "?"
	case lua.OP_SELF:
		return "method", keyName(p, argC(ins))
	}
	return "", ""
}

// reader reads, from the state the frame dbg of fn stopped in, what the
// instructions objectName follows would load, where that is known
// without running Lua code: live locals, upvalues, and tables read
// raw, through __index tables. It reads them as they are now, after the
// failed call's arguments: a function among them that assigned the
// field called would have the failed call passed over, and its text
// nameless, or another call's on its line if one read alike.
type reader struct {
	L    *lua.LState
	dbg  *lua.Debug
	fn   *lua.LFunction
	live []string
}

// value is what register reg would hold at pc.
func (r reader) value(pc, reg, depth int) (lua.LValue, bool) {
	const maxDepth = 8
	if depth > maxDepth {
		return nil, false
	}
	p := r.fn.Proto
	if name, ok := r.fn.LocalName(reg+1, pc); ok {
		// Still the same local where the frame stopped: its value then.
		if reg >= len(r.live) || r.live[reg] != name {
			return nil, false
		}
		_, v := r.L.GetLocal(r.dbg, reg+1)
		return v, v != nil
	}
	setAt := lastSetter(p, pc, reg)
	if setAt < 0 {
		return nil, false
	}
	ins := p.Code[setAt]
	switch opcode(ins) {
	case lua.OP_GETGLOBAL:
		if s, ok := constant(p, argBx(ins)); ok {
			return r.index(r.fn.Env, lua.LString(s))
		}
	case lua.OP_MOVE, lua.OP_MOVEN:
		if b := argB(ins); b < argA(ins) {
			return r.value(setAt, b, depth+1)
		}
	case lua.OP_GETTABLE, lua.OP_GETTABLEKS, lua.OP_SELF:
		key, ok := constantKey(p, argC(ins))
		if !ok {
			return nil, false
		}
		if t, ok := r.value(setAt, argB(ins), depth+1); ok {
			return r.index(t, key)
		}
	case lua.OP_GETUPVAL:
		if b := argB(ins); b < len(r.fn.Upvalues) {
			_, v := r.L.GetUpvalue(r.fn, b+1)
			return v, true
		}
	}
	return nil, false
}

// index is t[key] when no function decides it: a raw read, then the
// __index tables' while it finds nil.
func (r reader) index(t lua.LValue, key lua.LValue) (lua.LValue, bool) {
	const maxChain = 8
	for range maxChain {
		tt, ok := t.(*lua.LTable)
		if !ok {
			return nil, false
		}
		if v := tt.RawGet(key); v != lua.LNil {
			return v, true
		}
		mt, ok := r.L.GetMetatable(tt).(*lua.LTable)
		if !ok {
			return lua.LNil, true
		}
		t = mt.RawGetString("__index")
		if t == lua.LNil {
			return lua.LNil, true
		}
	}
	return nil, false
}

// lastSetter is symbexec: the pc of the last instruction before lastpc
// that set register reg, taking every forward jump that does not pass
// lastpc, or -1 when none did.
func lastSetter(p *lua.FunctionProto, lastpc, reg int) int {
	last := -1
	for pc := 0; pc < lastpc && pc < len(p.Code); pc++ {
		ins := p.Code[pc]
		op, a := opcode(ins), argA(ins)
		if setsA(op) && a == reg {
			last = pc
		}
		switch op {
		case lua.OP_LOADNIL:
			if a <= reg && reg <= argB(ins) {
				last = pc
			}
		case lua.OP_SELF:
			if reg == a+1 {
				last = pc
			}
		case lua.OP_TFORLOOP:
			if reg >= a+2 {
				last = pc
			}
		case lua.OP_CALL, lua.OP_TAILCALL:
			if reg >= a {
				last = pc
			}
		case lua.OP_JMP, lua.OP_FORLOOP, lua.OP_FORPREP:
			if sbx := argSbx(ins); sbx > 0 && pc+1+sbx <= lastpc {
				pc += sbx
			}
		case lua.OP_CLOSURE:
			// The upvalues' pseudo-instructions follow it.
			if bx := argBx(ins); bx < len(p.FunctionPrototypes) {
				pc += int(p.FunctionPrototypes[bx].NumUpvalues)
			}
		case lua.OP_SETLIST:
			if argC(ins) == 0 {
				pc++ // the count is the next word
			}
		}
	}
	return last
}

// setsA reports whether op writes its register A (Lua 5.1's testAMode).
func setsA(op int) bool {
	switch op {
	case lua.OP_SETGLOBAL, lua.OP_SETUPVAL, lua.OP_SETTABLE, lua.OP_SETTABLEKS,
		lua.OP_JMP, lua.OP_EQ, lua.OP_LT, lua.OP_LE, lua.OP_RETURN,
		lua.OP_TFORLOOP, lua.OP_SETLIST, lua.OP_CLOSE, lua.OP_NOP:
		return false
	}
	return true
}

// keyName is kname: a constant string key's text, else "?".
func keyName(p *lua.FunctionProto, rk int) string {
	if k, ok := constantKey(p, rk); ok {
		if s, ok := k.(lua.LString); ok {
			return string(s)
		}
	}
	return "?"
}

// constantKey is the constant an RK operand names, if it names one.
func constantKey(p *lua.FunctionProto, rk int) (lua.LValue, bool) {
	const isK = 1 << 8
	if i := rk &^ isK; rk&isK != 0 && i < len(p.Constants) {
		return p.Constants[i], true
	}
	return nil, false
}

func constant(p *lua.FunctionProto, i int) (string, bool) {
	if i < 0 || i >= len(p.Constants) {
		return "", false
	}
	s, ok := p.Constants[i].(lua.LString)
	return string(s), ok
}

// gopher-lua's instructions are Lua 5.1's: opcode in the top 6 bits, then
// A (8), C (9) and B (9), or A and Bx (18), sBx excess-131071.
func opcode(ins uint32) int { return int(ins >> 26) }
func argA(ins uint32) int   { return int(ins>>18) & 0xff }
func argB(ins uint32) int   { return int(ins & 0x1ff) }
func argC(ins uint32) int   { return int(ins>>9) & 0x1ff }
func argBx(ins uint32) int  { return int(ins & 0x3ffff) }
func argSbx(ins uint32) int { return argBx(ins) - 0x3ffff>>1 }
