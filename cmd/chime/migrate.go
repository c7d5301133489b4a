package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newMigrateCmd is the `chime migrate` command. It is being built.
func newMigrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "migrate",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("chime migrate: not built yet")
		},
	}
}
