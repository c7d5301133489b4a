package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// newCronCmd is the `chime cron` command. It is being built.
func newCronCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "cron",
		Short:  "not built yet",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("chime cron: not built yet")
		},
	}
}
