package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newServerCmd is the `chime server` command. It is being built.
func newServerCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "server",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("chime server: not built yet")
		},
	}
}
