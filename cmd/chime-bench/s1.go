package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"

	"github.com/spf13/cobra"

	"github.com/chime-scheduler/chime/internal/testkit/bench"
)

// runS1 runs sharded-job benchmark S1 (bench.RunS1) and prints its line.
// It takes D1's flags; --scale multiplies the firings.
func runS1(cmd *cobra.Command, f d1Flags) error {
	if f.scale <= 0 || math.IsInf(f.scale, 0) || math.IsNaN(f.scale) {
		return fmt.Errorf("bench: scale %v: want a number above 0", f.scale)
	}
	if f.cpuProfile && f.dir == "" {
		return errors.New("bench: --cpu-profile needs --dir, where the profiles go")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench: finding this program to start nodes: %w", err)
	}
	logOut := io.Discard
	if f.verbose {
		logOut = cmd.ErrOrStderr()
	}
	res, err := bench.RunS1(cmd.Context(), bench.S1Options{
		Firings:     max(1, int(math.Round(20*f.scale))),
		Nodes:       f.nodes,
		DatabaseURL: f.databaseURL,
		Executable:  exe,
		Workers:     f.workers,
		Dir:         f.dir,
		CPUProfile:  f.cpuProfile,
		Logger:      slog.New(slog.NewTextHandler(logOut, nil)),
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
