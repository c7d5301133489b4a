package bench

import (
	"context"
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
)

// TestRunC1CreatesEveryJob runs a small C1 on every database: each path
// creates its jobs through the API, and RunC1 finds them all listed.
func TestRunC1CreatesEveryJob(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			res, err := RunC1(context.Background(), C1Options{
				Jobs:        30,
				Clients:     4,
				DatabaseURL: db.URL(t),
				Executable:  executable(t),
				Logger:      testLogger(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", db.Name, res)
			for _, p := range []C1Path{res.Single, res.Batch} {
				if p.Jobs != 30 || p.Took <= 0 || p.P99 < p.P50 || p.P50 <= 0 {
					t.Errorf("result %s: want 30 jobs a path, a duration and ordered request times", res)
				}
			}
		})
	}
}
