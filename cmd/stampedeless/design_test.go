package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const (
	designPath = "../../docs/design.md"
	modulePath = "github.com/stampedeless/stampedeless/"
)

// TestDesignPackageTable fails when docs/design.md's package table and
// the module disagree: a package without a row, a row for no package, or
// a row whose imports are not what `go list` says the package imports of
// the module.
func TestDesignPackageTable(t *testing.T) {
	doc, err := os.ReadFile(designPath)
	if err != nil {
		t.Fatal(err)
	}
	rows := designPackageRows(t, string(doc))
	actual := moduleImports(t)

	covered := map[string]bool{}
	for _, row := range rows {
		var imports []string
		for _, pkg := range row.packages {
			if prefix, ok := strings.CutSuffix(pkg, "/..."); ok {
				for p := range actual {
					if p == prefix || strings.HasPrefix(p, prefix+"/") {
						covered[p] = true
					}
				}
				continue
			}
			got, ok := actual[pkg]
			if !ok {
				t.Errorf("design.md has a row for %s, which is no package of the module", pkg)
				continue
			}
			covered[pkg] = true
			imports = append(imports, got...)
		}
		if row.imports == nil { // "their own"
			continue
		}
		want := map[string]bool{}
		for _, pkg := range row.packages {
			want[pkg] = true // a row's packages may import each other
		}
		for _, imp := range row.imports {
			want[imp] = true
		}
		for _, imp := range imports {
			if !want[imp] {
				t.Errorf("design.md: %s imports %s, which its row does not list", strings.Join(row.packages, ", "), imp)
			}
		}
		for _, imp := range row.imports {
			if !slices.Contains(imports, imp) {
				t.Errorf("design.md: the row of %s lists %s, which it does not import", strings.Join(row.packages, ", "), imp)
			}
		}
	}
	for pkg := range actual {
		if !covered[pkg] {
			t.Errorf("design.md's package table has no row for %s", pkg)
		}
	}
}

type designRow struct {
	packages []string
	// imports are the module's packages the row says they import; nil
	// when it says "their own" (benchmarks and examples).
	imports []string
}

var (
	backticked    = regexp.MustCompile("`([^`]+)`")
	parenthesized = regexp.MustCompile(`\([^)]*\)`)
)

// designPackageRows reads the rows of the table under "Packages and who
// may call whom": the first cell names packages, the last what they import.
func designPackageRows(t *testing.T, doc string) []designRow {
	_, section, ok := strings.Cut(doc, "## Packages and who may call whom")
	if !ok {
		t.Fatal("design.md has no section \"Packages and who may call whom\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []designRow
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		row := designRow{imports: []string{}}
		for _, m := range backticked.FindAllStringSubmatch(cells[1], -1) {
			row.packages = append(row.packages, m[1])
		}
		last := strings.TrimSpace(cells[len(cells)-2])
		switch last {
		case "none":
		case "their own":
			row.imports = nil
		default:
			// What parentheses say is about an import, not one.
			last = parenthesized.ReplaceAllString(last, "")
			for _, m := range backticked.FindAllStringSubmatch(last, -1) {
				row.imports = append(row.imports, m[1])
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		t.Fatal("design.md's package table has no rows")
	}
	return rows
}

// moduleImports is each package of the module, by its path in the module,
// with the module's packages it imports (tests aside).
func moduleImports(t *testing.T) map[string][]string {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, ok := strings.CutPrefix(fields[0], modulePath)
		if !ok {
			continue // the module's root has no package
		}
		imports := []string{}
		for _, imp := range fields[1:] {
			if p, ok := strings.CutPrefix(imp, modulePath); ok {
				imports = append(imports, p)
			}
		}
		pkgs[pkg] = imports
	}
	return pkgs
}
