package resp

import (
	"math"
	"testing"
)

// TestWriterProtocols checks the bytes of each RESP3 type and of its RESP2
// equivalent, as Redis 7.0's networking.c writes them.
func TestWriterProtocols(t *testing.T) {
	cases := []struct {
		name         string
		write        func(w *Writer)
		resp2, resp3 string
	}{
		{"null", func(w *Writer) { w.Null() }, "$-1\r\n", "_\r\n"},
		{"null array", func(w *Writer) { w.NullArray() }, "*-1\r\n", "_\r\n"},
		{"map", func(w *Writer) { w.Map(1); w.BulkString("k"); w.Int(1) }, "*2\r\n$1\r\nk\r\n:1\r\n", "%1\r\n$1\r\nk\r\n:1\r\n"},
		{"empty map", func(w *Writer) { w.Map(0) }, "*0\r\n", "%0\r\n"},
		{"set", func(w *Writer) { w.Set(2); w.Status("a"); w.Status("b") }, "*2\r\n+a\r\n+b\r\n", "~2\r\n+a\r\n+b\r\n"},
		{"push", func(w *Writer) { w.Push(1); w.BulkString("m") }, "*1\r\n$1\r\nm\r\n", ">1\r\n$1\r\nm\r\n"},
		{"true", func(w *Writer) { w.Bool(true) }, ":1\r\n", "#t\r\n"},
		{"false", func(w *Writer) { w.Bool(false) }, ":0\r\n", "#f\r\n"},
		{"verbatim", func(w *Writer) { w.Verbatim("txt", "a\r\nb") }, "$4\r\na\r\nb\r\n", "=8\r\ntxt:a\r\nb\r\n"},
		{"empty verbatim", func(w *Writer) { w.Verbatim("txt", "") }, "$0\r\n\r\n", "=4\r\ntxt:\r\n"},
		// Doubles as Redis 7.0 prints them, %.17g (7.2 would print 1.1).
		{"double", func(w *Writer) { w.Double(1.1) }, "$18\r\n1.1000000000000001\r\n", ",1.1000000000000001\r\n"},
		{"integral double", func(w *Writer) { w.Double(3) }, "$1\r\n3\r\n", ",3\r\n"},
		{"large double", func(w *Writer) { w.Double(1e20) }, "$5\r\n1e+20\r\n", ",1e+20\r\n"},
		{"small double", func(w *Writer) { w.Double(1e-5) }, "$22\r\n1.0000000000000001e-05\r\n", ",1.0000000000000001e-05\r\n"},
		{"inf", func(w *Writer) { w.Double(math.Inf(1)) }, "$3\r\ninf\r\n", ",inf\r\n"},
		{"-inf", func(w *Writer) { w.Double(math.Inf(-1)) }, "$4\r\n-inf\r\n", ",-inf\r\n"},
		{"nan", func(w *Writer) { w.Double(math.NaN()) }, "$3\r\nnan\r\n", ",nan\r\n"},
		// Types both protocols share are written alike.
		{"bulk", func(w *Writer) { w.BulkString("v") }, "$1\r\nv\r\n", "$1\r\nv\r\n"},
		{"array", func(w *Writer) { w.Array(1); w.Int(-2) }, "*1\r\n:-2\r\n", "*1\r\n:-2\r\n"},
	}
	for _, tc := range cases {
		for _, proto := range []int{2, 3} {
			var w Writer
			w.SetProtocol(proto)
			if w.Protocol() != proto {
				t.Fatalf("Protocol() = %d after SetProtocol(%d)", w.Protocol(), proto)
			}
			tc.write(&w)
			want := tc.resp2
			if proto == 3 {
				want = tc.resp3
			}
			if got := string(w.b); got != want {
				t.Errorf("%s in RESP%d: %q, want %q", tc.name, proto, got, want)
			}
		}
	}
}
