package keyspace

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/commands"
)

var update = flag.Bool("update", false, "rewrite testdata/commands.golden from the table")

// TestCommandTable holds the family's table to testdata/commands.golden:
// every field of every Spec and subcommand, its functions by name, in
// name order. The server's comparisons with redis-server check what
// COMMAND INFO shows; this checks the rest (summaries, usage, access,
// handlers), so that reshaping the table cannot change it unseen. A
// change to the table updates the file: go test ./commands/keyspace -run
// TestCommandTable -update.
func TestCommandTable(t *testing.T) {
	specs := Commands()
	slices.SortFunc(specs, func(a, b *commands.Spec) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	for _, s := range specs {
		writeSpec(&b, s, "")
	}
	const golden = "testdata/commands.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		gotLines, wantLines := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gotLines), len(wantLines)) {
			if gotLines[i] != wantLines[i] {
				t.Fatalf("the table differs from %s at line %d:\n got %s\nwant %s", golden, i+1, gotLines[i], wantLines[i])
			}
		}
		t.Fatalf("the table has %d lines, %s %d", len(gotLines), golden, len(wantLines))
	}
}

// writeSpec writes the fields of s that are set, one a line.
func writeSpec(b *strings.Builder, s *commands.Spec, indent string) {
	fmt.Fprintf(b, "%s%s\n", indent, s.Name)
	v := reflect.ValueOf(*s)
	for i := range v.NumField() {
		name, field := v.Type().Field(i).Name, v.Field(i)
		switch {
		case field.IsZero() || name == "Name":
		case name == "Subcommands":
			for _, sub := range s.Subcommands {
				writeSpec(b, sub, indent+"    ")
			}
		case field.Kind() == reflect.Func:
			fn := runtime.FuncForPC(field.Pointer()).Name()
			fmt.Fprintf(b, "%s  %s: %s\n", indent, name, fn[strings.LastIndex(fn, "/")+1:])
		default:
			fmt.Fprintf(b, "%s  %s: %+v\n", indent, name, field.Interface())
		}
	}
}
