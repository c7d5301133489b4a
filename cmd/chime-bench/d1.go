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

// d1Flags are the flags of chime-bench that D1 takes.
type d1Flags struct {
	databaseURL          string
	nodes, workers, rate int
	scale                float64
	dir                  string
	cpuProfile, verbose  bool
}

// runD1 runs workflow benchmark D1 (bench.RunD1) and prints its line.
func runD1(cmd *cobra.Command, f d1Flags) error {
	exe, logger, err := f.serverRun(cmd)
	if err != nil {
		return err
	}
	res, err := bench.RunD1(cmd.Context(), bench.D1Options{
		Instances:   max(1, int(math.Round(1000*f.scale))),
		Nodes:       f.nodes,
		DatabaseURL: f.databaseURL,
		Executable:  exe,
		Workers:     f.workers,
		Rate:        f.rate,
		Dir:         f.dir,
		CPUProfile:  f.cpuProfile,
		Logger:      logger,
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), res.String())
	if !res.OK() {
		return fmt.Errorf("bench D1: %d tasks ran more than once and %d did not run or did not succeed", res.Duplicates, res.Misses)
	}
	return nil
}

// serverRun checks the flags of a workload run on server nodes (D1, S1)
// and returns this program, which the nodes run, and the run's logger.
func (f d1Flags) serverRun(cmd *cobra.Command) (exe string, logger *slog.Logger, err error) {
	if f.scale <= 0 || math.IsInf(f.scale, 0) || math.IsNaN(f.scale) {
		return "", nil, fmt.Errorf("bench: scale %v: want a number above 0", f.scale)
	}
	if f.cpuProfile && f.dir == "" {
		return "", nil, errors.New("bench: --cpu-profile needs --dir, where the profiles go")
	}
	if exe, err = os.Executable(); err != nil {
		return "", nil, fmt.Errorf("bench: finding this program to start nodes: %w", err)
	}
	logOut := io.Discard
	if f.verbose {
		logOut = cmd.ErrOrStderr()
	}
	return exe, slog.New(slog.NewTextHandler(logOut, nil)), nil
}
