package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// lockName is a lock as LOCKS.md names it: `package.Type` or
// `package.Type.field`.
var lockName = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Za-z_][A-Za-z0-9_]*)(?:\\.([A-Za-z_][A-Za-z0-9_]*))?`")

// TestLocksFileNamesLocks: every lock LOCKS.md names is a type of the
// repository, and a named field is one of that struct's fields, so the
// file cannot go on naming a lock the code renamed or removed.
func TestLocksFileNamesLocks(t *testing.T) {
	const root = ".."
	data, err := os.ReadFile(filepath.Join(root, "LOCKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	// structs maps package.Type to its fields (nil for a type that is not
	// a struct); an embedded field counts under its type's name.
	structs := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.TYPE {
				continue
			}
			for _, spec := range gen.Specs {
				ts := spec.(*ast.TypeSpec)
				key := f.Name.Name + "." + ts.Name.Name
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					structs[key] = nil
					continue
				}
				fields := map[string]bool{}
				for _, field := range st.Fields.List {
					for _, n := range field.Names {
						fields[n.Name] = true
					}
					if len(field.Names) == 0 {
						fields[embeddedName(field.Type)] = true
					}
				}
				structs[key] = fields
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, m := range lockName.FindAllStringSubmatch(string(data), -1) {
		typ, field := m[1]+"."+m[2], m[3]
		fields, ok := structs[typ]
		switch {
		case !ok:
			t.Errorf("LOCKS.md names %s: no type %s in the repository", m[0], typ)
		case field != "" && !fields[field]:
			t.Errorf("LOCKS.md names %s: %s has no field %s", m[0], typ, field)
		}
		named++
	}
	if named < 10 {
		t.Fatalf("LOCKS.md names %d locks: the pattern no longer reads it", named)
	}
}

// embeddedName is the name an embedded field is known by.
func embeddedName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return embeddedName(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return embeddedName(x.X)
	}
	return ""
}
