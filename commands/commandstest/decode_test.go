package commandstest

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

// TestDecode: each reply type of RESP2 and RESP3 as Decode gives it, and
// what follows a reply left for the next.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
	}{
		{"+OK\r\n", "OK"},
		{"-ERR syntax error\r\n", Err("ERR syntax error")},
		{":-3\r\n", int64(-3)},
		{"$3\r\na\r\n\r\n", "a\r\n"},
		{"$0\r\n\r\n", ""},
		{"$-1\r\n", nil},
		{"*-1\r\n", nil},
		{"_\r\n", nil},
		{"#t\r\n", true},
		{"#f\r\n", false},
		{",1.5\r\n", 1.5},
		{",inf\r\n", math.Inf(1)},
		{",-inf\r\n", math.Inf(-1)},
		{"(12345678901234567890\r\n", "12345678901234567890"},
		{"=7\r\ntxt:a b\r\n", "a b"},
		{"*2\r\n:1\r\n*1\r\n$1\r\nx\r\n", []any{int64(1), []any{"x"}}},
		{"%1\r\n+k\r\n:1\r\n", Map{"k", int64(1)}},
		{"~2\r\n+a\r\n+b\r\n", Set{"a", "b"}},
		{">2\r\n+message\r\n+x\r\n", []any{"message", "x"}},
	} {
		got, rest, err := Decode([]byte(tc.in + ":9\r\n"))
		if err != nil || !reflect.DeepEqual(got, tc.want) || string(rest) != ":9\r\n" {
			t.Errorf("Decode(%q) = %#v, rest %q, %v; want %#v", tc.in, got, rest, err, tc.want)
		}
	}
	for _, in := range []string{"", "+OK", "$5\r\nab\r\n", "*2\r\n:1\r\n", "!x\r\n", ":x\r\n"} {
		if _, _, err := Decode([]byte(in)); err == nil {
			t.Errorf("Decode(%q) read a reply", in)
		}
	}
}

// TestSplit: command lines as redis-cli reads them.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"SET k v", []string{"SET", "k", "v"}},
		{`  SET  k   "a b"  `, []string{"SET", "k", "a b"}},
		{`SET k "" x`, []string{"SET", "k", "", "x"}},
		{`SET k "\x00\n"`, []string{"SET", "k", "\x00\n"}},
		{`SET k "unclosed`, []string{"SET", "k", `"unclosed`}},
	} {
		if got := Split(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestNormalize: untyped integers of a want become int64, in arrays,
// maps and sets too.
func TestNormalize(t *testing.T) {
	got := Normalize([]any{1, Map{"a", 2}, Set{3}, "x"})
	want := []any{int64(1), Map{"a", int64(2)}, Set{int64(3)}, "x"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Normalize = %#v, want %#v", got, want)
	}
}
