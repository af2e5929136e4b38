package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// flagReference renders flags as the Markdown table of
// docs/configuration.md's reference: flag, environment variable, default,
// meaning. That table is generated from here (reference_test.go fails when
// the two differ), so a new flag cannot go undocumented.
func flagReference(flags []cli.Flag) string {
	var b strings.Builder
	b.WriteString("| flag | environment | default | meaning |\n|---|---|---|---|\n")
	for _, f := range flags {
		names := f.Names()
		doc, ok := f.(cli.DocGenerationFlag)
		if !ok {
			fmt.Fprintf(&b, "| `--%s` | | | |\n", names[0])
			continue
		}
		env := make([]string, len(doc.GetEnvVars()))
		for i, e := range doc.GetEnvVars() {
			env[i] = "`" + e + "`"
		}
		usage := doc.GetUsage()
		if s, ok := f.(cli.DocGenerationSliceFlag); ok && s.IsSliceFlag() {
			usage += "; in the environment, comma-separated"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n",
			names[0], strings.Join(env, ", "), flagDefault(doc), cell(usage))
	}
	return b.String()
}

// flagDefault is a flag's default as a table cell: code, or "off" for a
// boolean that is false, or "(none)".
func flagDefault(f cli.DocGenerationFlag) string {
	d := f.GetDefaultText()
	if u, err := strconv.Unquote(d); err == nil {
		d = u // StringFlag quotes its default
	}
	switch {
	case !f.TakesValue() && d == "false":
		return "off"
	case d == "" || d == "[]":
		return "(none)"
	}
	return "`" + cell(d) + "`"
}

// cell escapes what would end a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
