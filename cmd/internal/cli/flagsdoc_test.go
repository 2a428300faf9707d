package cli_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/cmd/internal/cli"
	"github.com/rejuv-dev/rejuv/daemon"
	"github.com/rejuv-dev/rejuv/healer"
	"github.com/rejuv-dev/rejuv/healer/uninstall"
	"github.com/rejuv-dev/rejuv/test/docgen"
)

// TestFlagsDoc writes (make docs) or checks (make verify) docs/flags.md:
// the manager's, its prepare-uninstall command's and the daemon's flags,
// as their --help lists them.
func TestFlagsDoc(t *testing.T) {
	var h healer.Options
	var d daemon.Options
	var u uninstall.Options
	manager, _, _ := cli.Flags("rejuv-healer", h.BindFlags)
	prepare, _, _ := cli.Flags("rejuv-healer prepare-uninstall", u.BindFlags)
	node, _, _ := cli.Flags("rejuv-daemon", d.BindFlags)
	doc := strings.NewReplacer("{{manager}}", flagTable(manager), "{{prepare-uninstall}}", flagTable(prepare), "{{daemon}}", flagTable(node)).
		Replace(docgen.Template(t, "cmd/internal/cli/testdata/flags.md.tmpl"))
	docgen.Settle(t, "docs/flags.md", doc)
}

// flagTable is a Markdown table of fs's flags, in name order.
func flagTable(fs *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		def := "`" + f.DefValue + "`"
		if f.DefValue == "" {
			def = "none"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s |\n", f.Name, def, cell(f.Usage))
	})
	return strings.TrimSuffix(b.String(), "\n")
}

// cell is text fit for a table cell: on one line, its pipes escaped.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}
