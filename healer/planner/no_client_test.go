package planner

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPlanningMakesNoClientCall: planning makes no client call because
// this package cannot name a client: none of its files imports
// controller-runtime or client-go. A client call creeping into planning
// fails here, not in review.
func TestPlanningMakesNoClientCall(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		files++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "sigs.k8s.io/controller-runtime") || strings.HasPrefix(path, "k8s.io/client-go") {
				t.Errorf("%s imports %s: planning reads what the pass read, it does not call the API server", name, path)
			}
		}
	}
	if files < 10 {
		t.Fatalf("read %d of the package's files, want all of them", files)
	}
}
