package chaos

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// Flags of the suite, given after -args:
//
//	go test -timeout 0 ./internal/testkit/chaos -run Soak -args -duration 30m -seed 7 -nodes 3 -logs /tmp
var (
	durationFlag = flag.Duration("duration", 45*time.Second, "how long the jobs fire and the faults run, per database")
	seedFlag     = flag.Int64("seed", 0, "seed of the fault schedule (0: a new one, printed)")
	nodesFlag    = flag.Int("nodes", 3, "chime server processes in the cluster (at least 2)")
	logsFlag     = flag.String("logs", "", "keep the nodes' logs in a new directory under this one (default: removed with the test)")
)

// chimePackage is the program the nodes run, which nodeproc.Binary builds
// once per test run, without -race.
const chimePackage = "github.com/chime-scheduler/chime/cmd/chime"

// chimeBinary is the chime binary, built on first use into a directory
// TestMain removes.
var chimeBinary *nodeproc.Binary

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "chime-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	chimeBinary = nodeproc.NewBinary(chimePackage, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary returns the chime binary, building it on first use.
func binary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	path, err := chimeBinary.Path(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return path
}
