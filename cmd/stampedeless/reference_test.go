package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/configuration.md's flag references from the flags (also: UPDATE_DOCS=1)")

// configDocPath is the configuration reference, which holds the tables
// generated from the flags.
const configDocPath = "../../docs/configuration.md"

// references are the sections of docs/configuration.md generated from
// flags, by marker name.
var references = []struct {
	marker string
	flags  func() []cli.Flag
}{
	{"config-reference", serveFlags},
	{"origin-reference", func() []cli.Flag { return originCommand().Flags }},
}

// TestFlagReferencesInDocs fails when docs/configuration.md's flag tables
// differ from what the flags say. After adding or changing a flag, run
//
//	go test ./cmd/stampedeless -run TestFlagReferencesInDocs -update
func TestFlagReferencesInDocs(t *testing.T) {
	data, err := os.ReadFile(configDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	update := *updateDocs || os.Getenv("UPDATE_DOCS") == "1"
	for _, ref := range references {
		start, end := "<!-- "+ref.marker+":start -->\n", "<!-- "+ref.marker+":end -->"
		i, j := strings.Index(doc, start), strings.Index(doc, end)
		if i < 0 || j < i {
			t.Fatalf("docs/configuration.md lacks the markers %q ... %q", strings.TrimSpace(start), end)
		}
		got, want := doc[i+len(start):j], flagReference(ref.flags())
		if got == want {
			continue
		}
		if update {
			doc = doc[:i+len(start)] + want + doc[j:]
			continue
		}
		t.Errorf("docs/configuration.md's %s is out of date with the flags; regenerate it with\n"+
			"\tgo test ./cmd/stampedeless -run TestFlagReferencesInDocs -update\n%s",
			ref.marker, lineDiff(got, want))
	}
	if update && doc != string(data) {
		if err := os.WriteFile(configDocPath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote docs/configuration.md")
	}
}

// lineDiff lists the lines only in the document (-) and only in the flags (+).
func lineDiff(doc, flags string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	inDoc, inFlags := in(doc), in(flags)
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !inFlags[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(flags, "\n") {
		if !inDoc[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// TestFlagReferenceCells: every serve flag has an environment variable and
// a usage, and a "|" in a usage cannot break the table.
func TestFlagReferenceCells(t *testing.T) {
	for _, f := range serveFlags() {
		doc := f.(cli.DocGenerationFlag)
		if len(doc.GetEnvVars()) == 0 || doc.GetUsage() == "" {
			t.Errorf("--%s has no environment variable or no usage", f.Names()[0])
		}
	}
	got := flagReference([]cli.Flag{
		&cli.StringFlag{Name: "x", Value: "a|b", EnvVars: []string{"X"}, Usage: "one | two"},
		&cli.BoolFlag{Name: "y", Usage: "on or off"},
	})
	want := "| flag | environment | default | meaning |\n|---|---|---|---|\n" +
		"| `--x` | `X` | `a\\|b` | one \\| two |\n" +
		"| `--y` |  | off | on or off |\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
