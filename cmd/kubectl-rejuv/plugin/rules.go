package plugin

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/rules"
)

func newRulesCommand(o *Options) *cobra.Command {
	var output string
	var source bool
	cmd := &cobra.Command{
		Use:   "rules [NAME]",
		Short: "List the built-in rules with their parameters and defaults",
		Long: `List the built-in rules a RecreatePolicy can name in spec.rules[].builtin,
with each parameter's type, default and meaning. Name a rule to see only that
one; --source prints its Rego.`,
		Example: `  kubectl rejuv rules
  kubectl rejuv rules memory-leak --source
  kubectl rejuv rules -o yaml`,
		Args:              maxArgs(1),
		ValidArgsFunction: completeRuleNames,
		RunE: func(_ *cobra.Command, args []string) error {
			list := rules.Builtins()
			if len(args) == 1 {
				r, ok := rules.Lookup(args[0])
				if !ok {
					return fmt.Errorf("no built-in rule %q; the rules are %s", args[0], strings.Join(ruleNames(), ", "))
				}
				list = []rules.Rule{r}
			}
			if source {
				if len(args) == 0 {
					return usageError("--source prints one rule's Rego: name the rule (kubectl rejuv rules NAME --source)")
				}
				_, err := io.WriteString(o.Streams.Out, list[0].Source)
				return err
			}
			return printRules(o.Streams.Out, list, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json or yaml; a table when empty.")
	cmd.Flags().BoolVar(&source, "source", false, "Print the named rule's Rego module.")
	return cmd
}

func ruleNames() []string {
	var names []string
	for _, r := range rules.Builtins() {
		names = append(names, r.Name)
	}
	return names
}

// ruleDoc is a rule as -o json and -o yaml print it.
type ruleDoc struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	ReadsMemory bool           `json:"readsMemory,omitempty"`
	Parameters  []parameterDoc `json:"parameters,omitempty"`
}

type parameterDoc struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Default     any    `json:"default"`
	AllowZero   bool   `json:"allowZero,omitempty"`
	Description string `json:"description"`
}

func printRules(w io.Writer, list []rules.Rule, output string) error {
	switch output {
	case "":
		return rulesTable(w, list)
	case "json", "yaml":
		docs := make([]ruleDoc, 0, len(list))
		for _, r := range list {
			d := ruleDoc{Name: r.Name, Description: r.Description, ReadsMemory: r.ReadsMemory}
			for _, p := range r.Parameters {
				d.Parameters = append(d.Parameters, parameterDoc{Name: p.Name, Type: string(p.Type), Default: p.Default, AllowZero: p.AllowZero, Description: p.Description})
			}
			docs = append(docs, d)
		}
		return printData(w, docs, output)
	default:
		return usageError("--output %q: the rules print as json or yaml, or as a table when -o is not given", output)
	}
}

// rulesTable prints each rule's name and description, then its
// parameters as a table.
func rulesTable(w io.Writer, list []rules.Rule) error {
	for i, r := range list {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", r.Name)
		for _, line := range wrap(r.Description, 76) {
			fmt.Fprintf(w, "  %s\n", line)
		}
		if len(r.Parameters) == 0 {
			continue
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "  PARAMETER\tTYPE\tDEFAULT\tDESCRIPTION")
		for _, p := range r.Parameters {
			fmt.Fprintf(tw, "  %s\t%s\t%v\t%s\n", p.Name, p.Type, p.Default, p.Description)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for word := range strings.FieldsSeq(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// printData prints plain data as JSON or YAML.
func printData(w io.Writer, v any, output string) error {
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "    ")
		return enc.Encode(v)
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
