package resp

import (
	"strconv"
	"strings"
	"testing"
)

// batchSource serves the same batch of commands on every Read, as a
// pipelining client sends them.
type batchSource struct{ batch []byte }

func (s batchSource) Read(p []byte) (int, error) { return copy(p, s.batch), nil }

// benchmarkReadCommand parses pipelined batches of 16 commands of args.
func benchmarkReadCommand(b *testing.B, args ...string) {
	var cmd strings.Builder
	cmd.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		cmd.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	rd := NewReader(batchSource{[]byte(strings.Repeat(cmd.String(), 16))})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rd.ReadCommand(Limits{}, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadCommandGet(b *testing.B) { benchmarkReadCommand(b, "GET", "key:__rand_int__") }
func BenchmarkReadCommandGetFill(b *testing.B) {
	benchmarkReadCommand(b, "GETFILL", "fill:key:__rand_int__", "86400", "60")
}
