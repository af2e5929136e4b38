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
// holds no callable value and whose live locals are the frame's, and it is
// named only when every such call is worded alike.

// failedCallText is Lua 5.1's text for the failed call in the Lua function
// at level of L's stack, when L is in the error handler of that failure
// and the calls it may have been all read the same.
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
		if op != lua.OP_TFORLOOP {
			// Lua 5.1 names no generator: the call's register is a copy
			// its symbolic execution does not follow.
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
// local it holds where the frame stopped ("" for none).
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
	const isK = 1 << 8
	if rk&isK == 0 {
		return "?"
	}
	if s, ok := constant(p, rk&^isK); ok {
		return s
	}
	return "?"
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
