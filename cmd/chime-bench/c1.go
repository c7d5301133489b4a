package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/internal/testkit/bench"
)

// runC1 runs job-creation benchmark C1 (bench.RunC1) and prints its line.
// It takes D1's flags; --scale multiplies the jobs.
func runC1(cmd *cobra.Command, f d1Flags) error {
	exe, logger, err := f.serverRun(cmd)
	if err != nil {
		return err
	}
	res, err := bench.RunC1(cmd.Context(), bench.C1Options{
		Jobs:        max(1, int(math.Round(5000*f.scale))),
		Nodes:       f.nodes,
		DatabaseURL: f.databaseURL,
		Executable:  exe,
		Dir:         f.dir,
		CPUProfile:  f.cpuProfile,
		Logger:      logger,
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), res.String())
	return nil
}
