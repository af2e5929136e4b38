package scripting

import (
	"strings"

	"github.com/stampedeless/stampedeless/resp"
	lua "github.com/yuin/gopher-lua"
)

// Conversions between command replies and Lua values, as Redis 7's
// scripting makes them.

// errorTable builds the {err=...} table redis.call raises and
// redis.pcall returns, from an error text with or without its leading
// '-'.
func errorTable(L *lua.LState, text []byte) *lua.LTable {
	t := L.CreateTable(0, 2)
	t.RawSetString("err", lua.LString(normalizeError(text)))
	return t
}

// replyToLua converts a command's reply as redisProtocolToLuaType does:
// integers become numbers, bulk strings strings, a RESP2 null false,
// RESP3's null nil, status {ok=}, errors {err=}, arrays tables, and
// RESP3's map, set, double, big number and verbatim string tables named
// after their kind.
func replyToLua(L *lua.LState, r *Reply) lua.LValue {
	switch r.Kind {
	case KindStatus:
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(r.Str))
		return t
	case KindError, KindBlobError:
		t := errorTable(L, append([]byte{'-'}, r.Str...))
		// Redis marks errors the command already counted in its stats.
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t
	case KindInt:
		return lua.LNumber(r.Int)
	case KindBulk:
		if r.Null {
			return lua.LFalse
		}
		return lua.LString(r.Str)
	case KindArray, KindPush:
		if r.Null {
			return lua.LFalse
		}
		t := L.CreateTable(len(r.Elems), 0)
		for i := range r.Elems {
			if v := replyToLua(L, &r.Elems[i]); v != lua.LNil {
				t.RawSetInt(i+1, v)
			}
		}
		return t
	case KindMap:
		m := L.CreateTable(0, len(r.Elems)/2)
		for i := 0; i+1 < len(r.Elems); i += 2 {
			k := replyToLua(L, &r.Elems[i])
			if k == lua.LNil {
				continue
			}
			m.RawSet(k, replyToLua(L, &r.Elems[i+1]))
		}
		return named(L, "map", m)
	case KindSet:
		m := L.CreateTable(0, len(r.Elems))
		for i := range r.Elems {
			if k := replyToLua(L, &r.Elems[i]); k != lua.LNil {
				m.RawSet(k, lua.LTrue)
			}
		}
		return named(L, "set", m)
	case KindNull:
		return lua.LNil
	case KindBool:
		return lua.LBool(r.Bool)
	case KindDouble:
		return named(L, "double", lua.LNumber(r.Double))
	case KindBigNumber:
		return named(L, "big_number", lua.LString(r.Str))
	case KindVerbatim:
		v := L.CreateTable(0, 2)
		v.RawSetString("string", lua.LString(r.Str))
		v.RawSetString("format", lua.LString(r.Format))
		return named(L, "verbatim_string", v)
	}
	return lua.LNil
}

func named(L *lua.LState, name string, v lua.LValue) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString(name, v)
	return t
}

// maxLuaDepth bounds how deep a returned table nests before the reply
// says so, as Redis runs out of Lua stack on a table that contains
// itself.
const maxLuaDepth = 1000

// AppendLua appends v as the reply to a script's client, as
// luaReplyToRedisReply writes it. proto is the client's protocol, scriptProto
// the script's (redis.setresp): booleans depend on both. Strings are
// bulk strings, numbers integers (truncated), true 1 and false null
// under RESP2 (RESP3 booleans once the script chose RESP3), tables with
// a string err an error, with a string ok a status, with double,
// big_number, verbatim_string, map or set those RESP3 types (their RESP2
// forms for a RESP2 client), and any other table an array up to its
// first nil. Anything else is null.
func AppendLua(b []byte, v lua.LValue, proto, scriptProto int) []byte {
	w := resp.Buffer(b, proto)
	writeLua(w, v, scriptProto, 0)
	return w.Buffered()
}

func writeLua(w *resp.Writer, v lua.LValue, scriptProto, depth int) {
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LBool:
		switch {
		case scriptProto != 2:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(toInt64(float64(v)))
	case *lua.LTable:
		if depth >= maxLuaDepth {
			w.Error("ERR reached lua stack limit")
			return
		}
		writeTable(w, v, scriptProto, depth+1)
	default:
		w.Null()
	}
}

func writeTable(w *resp.Writer, t *lua.LTable, scriptProto, depth int) {
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		w.Error(oneLine(strings.Trim("-"+string(s), "\r\n"))[1:])
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Status(oneLine(string(s)))
		return
	}
	if n, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.DoubleText([]byte(formatDouble(float64(n))))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		w.BigNumber(oneLine(string(s)))
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		f, fok := vt.RawGetString("format").(lua.LString)
		s, sok := vt.RawGetString("string").(lua.LString)
		if fok && sok {
			w.Verbatim(string(f), string(s))
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		var n int
		m.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Map(n)
		for k, v := m.Next(lua.LNil); k != lua.LNil; k, v = m.Next(k) {
			writeLua(w, k, scriptProto, depth)
			writeLua(w, v, scriptProto, depth)
		}
		return
	}
	if m, ok := t.RawGetString("set").(*lua.LTable); ok {
		var n int
		m.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Set(n)
		for k, _ := m.Next(lua.LNil); k != lua.LNil; k, _ = m.Next(k) {
			writeLua(w, k, scriptProto, depth)
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		writeLua(w, t.RawGetInt(i), scriptProto, depth)
	}
}

// oneLine replaces CR and LF with spaces, as Redis does to texts it
// writes on one protocol line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}
