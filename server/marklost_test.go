package server

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/history"
)

// TestMarkNodeLostSparesALaterIncarnation records two running executions
// of one node ID: one of the incarnation that died, one of the next,
// started after the death was seen. Marking the lost node ends only the
// first.
func TestMarkNodeLostSparesALaterIncarnation(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newServer(t, dbtest.SQLiteURL(t))
	seen := time.Now().UTC().Truncate(time.Millisecond)
	for id, started := range map[string]time.Time{"old-run": seen.Add(-time.Minute), "new-run": seen.Add(time.Second)} {
		if err := s.history.Start(ctx, &history.Execution{
			ID: id, JobGroup: "g", JobName: "j", NodeID: "n1", ScheduledTime: started, StartedTime: started,
		}); err != nil {
			t.Fatal(err)
		}
	}
	s.markNodeLost(ctx, "n1", seen)
	for id, want := range map[string]history.Outcome{"old-run": history.OutcomeNodeLost, "new-run": history.OutcomeRunning} {
		if e, err := s.history.Get(ctx, id); err != nil || e.Outcome != want {
			t.Errorf("%s = %+v, %v; want %s", id, e, err, want)
		}
	}
}
