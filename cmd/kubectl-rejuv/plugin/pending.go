package plugin

import (
	"errors"

	"github.com/spf13/cobra"
)

func notYet(use, short string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short + " (not built yet)", RunE: func(*cobra.Command, []string) error {
		return errors.New(use + ": not built yet")
	}}
}

func newStatusCommand(*Options) *cobra.Command {
	return notYet("status", "Show what is being recreated and why")
}
func newExplainCommand(*Options) *cobra.Command {
	return notYet("explain", "Which policies select a pod and what they decided")
}
func newPolicyCommand(*Options) *cobra.Command { return notYet("policy", "Test policies") }
