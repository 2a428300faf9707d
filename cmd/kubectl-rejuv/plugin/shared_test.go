package plugin

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sharedMark is how a manager package says, in its package comment, that
// the plugin imports it on purpose.
const sharedMark = "Shared with the kubectl plugin on purpose"

// TestSharedManagerPackagesSayTheyAre: every package of the manager
// (healer/...) that the plugin imports says so in its package comment, so
// that whoever changes it knows that it runs on users' machines too; and
// no package says so that the plugin does not import.
func TestSharedManagerPackagesSayTheyAre(t *testing.T) {
	const module = "github.com/rejuv-dev/rejuv/"
	imported := map[string]bool{}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(path, module); ok && strings.HasPrefix(rel, "healer/") {
				imported[rel] = true
			}
		}
	}
	root := filepath.Join("..", "..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "healer", "*", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	var marked []string
	for _, d := range docs {
		data, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		rel := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(d, root+string(filepath.Separator))))
		if strings.Contains(string(data), sharedMark) {
			marked = append(marked, rel)
		}
	}
	if len(imported) == 0 || len(docs) == 0 {
		t.Fatalf("premise: the plugin imports %d manager packages of %d", len(imported), len(docs))
	}
	for pkg := range imported {
		if !slices.Contains(marked, pkg) {
			t.Errorf("the plugin imports %s, whose doc.go does not say %q", pkg, sharedMark)
		}
	}
	for _, pkg := range marked {
		if !imported[pkg] {
			t.Errorf("%s says %q, but the plugin does not import it", pkg, sharedMark)
		}
	}
}
