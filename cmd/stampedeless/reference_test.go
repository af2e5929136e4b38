package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

var updateREADME = flag.Bool("update", false, "rewrite README.md's flag references from the flags (also: UPDATE_README=1)")

const readmePath = "../../README.md"

// references are the README sections generated from flags, by marker name.
var references = []struct {
	marker string
	flags  func() []cli.Flag
}{
	{"config-reference", serveFlags},
	{"origin-reference", func() []cli.Flag { return originCommand().Flags }},
}

// TestFlagReferencesInREADME fails when README.md's configuration tables
// differ from what the flags say. After adding or changing a flag, run
//
//	go test ./cmd/stampedeless -run TestFlagReferencesInREADME -update
func TestFlagReferencesInREADME(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	update := *updateREADME || os.Getenv("UPDATE_README") == "1"
	for _, ref := range references {
		start, end := "<!-- "+ref.marker+":start -->\n", "<!-- "+ref.marker+":end -->"
		i, j := strings.Index(readme, start), strings.Index(readme, end)
		if i < 0 || j < i {
			t.Fatalf("README.md lacks the markers %q ... %q", strings.TrimSpace(start), end)
		}
		got, want := readme[i+len(start):j], flagReference(ref.flags())
		if got == want {
			continue
		}
		if update {
			readme = readme[:i+len(start)] + want + readme[j:]
			continue
		}
		t.Errorf("README.md's %s is out of date with the flags; regenerate it with\n"+
			"\tgo test ./cmd/stampedeless -run TestFlagReferencesInREADME -update\n%s",
			ref.marker, lineDiff(got, want))
	}
	if update && readme != string(data) {
		if err := os.WriteFile(readmePath, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote README.md")
	}
}

// lineDiff lists the lines only in the README (-) and only in the flags (+).
func lineDiff(readme, flags string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	inReadme, inFlags := in(readme), in(flags)
	var b strings.Builder
	for _, l := range strings.Split(readme, "\n") {
		if !inFlags[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(flags, "\n") {
		if !inReadme[l] {
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
