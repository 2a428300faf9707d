package catalogue

import (
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/test/docgen"
)

// TestArchitectureDiagram: docs/architecture.svg is Architecture drawn,
// its text clear of the boxes, the arrows and each other; it fails while
// the file is stale.
func TestArchitectureDiagram(t *testing.T) {
	d := Architecture()
	if problems := layoutProblems(d); len(problems) > 0 {
		t.Fatalf("the diagram's layout has %d problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	docgen.Settle(t, "docs/architecture.svg", d.SVG())
}
