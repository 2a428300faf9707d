package plugin

import (
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dryRun is --dry-run as kubectl takes it: none, client (print what would
// be sent) or server (send it to be checked, admission webhooks
// included, and persist nothing).
type dryRun string

const (
	dryRunNone   dryRun = "none"
	dryRunClient dryRun = "client"
	dryRunServer dryRun = "server"
)

func addDryRunFlag(cmd *cobra.Command, d *string) {
	cmd.Flags().StringVar(d, "dry-run", string(dryRunNone), `Must be "none", "server", or "client". If client, only print the object that would be sent, without sending it. If server, submit the request to be checked by the API server and admission webhooks without persisting anything.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = string(dryRunClient)
}

func parseDryRun(s string) (dryRun, error) {
	switch d := dryRun(s); d {
	case dryRunNone, dryRunClient, dryRunServer:
		return d, nil
	case "":
		return dryRunNone, nil
	}
	return "", usageError(`--dry-run %q: must be "none", "server" or "client"`, s)
}

// createOptions are the options of a create with this dry run.
func (d dryRun) createOptions(fieldManager, validation string) []client.CreateOption {
	opts := []client.CreateOption{client.FieldOwner(fieldManager)}
	if validation != "" {
		opts = append(opts, client.FieldValidation(validation))
	}
	if d == dryRunServer {
		opts = append(opts, client.DryRunAll)
	}
	return opts
}

// suffix is what kubectl adds to the message of an object not persisted.
func (d dryRun) suffix() string {
	switch d {
	case dryRunClient:
		return " (dry run)"
	case dryRunServer:
		return " (server dry run)"
	}
	return ""
}
