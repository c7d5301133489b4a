package main

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/internal/testkit/bench"
)

// runS1 runs sharded-job benchmark S1 (bench.RunS1) and prints its line.
// It takes D1's flags; --scale multiplies the firings.
func runS1(cmd *cobra.Command, f d1Flags) error {
	exe, logger, err := f.serverRun(cmd)
	if err != nil {
		return err
	}
	res, err := bench.RunS1(cmd.Context(), bench.S1Options{
		Firings:     max(1, int(math.Round(20*f.scale))),
		Nodes:       f.nodes,
		DatabaseURL: f.databaseURL,
		Executable:  exe,
		Workers:     f.workers,
		Dir:         f.dir,
		CPUProfile:  f.cpuProfile,
		Logger:      logger,
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), res.String())
	if !res.OK() {
		return fmt.Errorf("bench S1: %d items ran more than once and %d did not run", res.Duplicates, res.Misses)
	}
	return nil
}
