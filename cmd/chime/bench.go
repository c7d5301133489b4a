package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newBenchCmd is the `chime bench` command. It is being built.
func newBenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "bench",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("chime bench: not built yet")
		},
	}
}
