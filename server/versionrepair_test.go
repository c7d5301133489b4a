package server

import (
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/jobversion"
	"github.com/google/go-cmp/cmp"
)

// writeWithoutVersion writes j as PutJob does and records no version, as
// a server that died between the job's write and its version's leaves it.
func writeWithoutVersion(t *testing.T, s *Server, j api.Job) {
	t.Helper()
	w, err := s.jobFromAPI(t.Context(), j)
	if err != nil {
		t.Fatalf("job %s/%s: %v", j.Group, j.Name, err)
	}
	if err := s.sched.ScheduleJob(t.Context(), w.detail, w.triggers, &chime.ScheduleJobOptions{Replace: true, Pause: w.pauseChange(false)}); err != nil {
		t.Fatalf("ScheduleJob(%s): %v", w.detail.Key, err)
	}
}

// versionRow is what these tests compare of a version.
type versionRow struct {
	Number     int64
	Kind       string
	Actor      string
	JobVersion int64
}

// versionRows lists the job's versions as the API does, newest first.
func versionRows(t *testing.T, s *Server, group, name string) []versionRow {
	t.Helper()
	l, err := s.ListJobVersions(t.Context(), group, name, api.JobVersionQuery{})
	if err != nil {
		t.Fatalf("ListJobVersions(%s/%s): %v", group, name, err)
	}
	var out []versionRow
	for _, v := range l.Versions {
		out = append(out, versionRow{v.Number, v.Kind, v.Actor, v.JobVersion})
	}
	return out
}

// TestJobVersionGapsHeal: a create, an update and a delete whose writer
// died before recording the version get their version on the next read
// of the job's versions, once, with the job's spec and the repair's
// actor; a job whose versions are complete gets none.
func TestJobVersionGapsHeal(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		const repair = jobversion.RepairActor

		job := httpJob(t, "g", "lost", "https://example.com/v1")
		writeWithoutVersion(t, s, job) // a create whose version was lost
		want := []versionRow{{1, api.VersionCreated, repair, 1}}
		if diff := cmp.Diff(want, versionRows(t, s, "g", "lost")); diff != "" {
			t.Fatalf("versions after a lost create (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, versionRows(t, s, "g", "lost")); diff != "" {
			t.Fatalf("versions read again (-want +got):\n%s", diff)
		}

		job.Description = "changed by a server that died"
		writeWithoutVersion(t, s, job)
		want = append([]versionRow{{2, api.VersionUpdated, repair, 2}}, want...)
		if diff := cmp.Diff(want, versionRows(t, s, "g", "lost")); diff != "" {
			t.Fatalf("versions after a lost update (-want +got):\n%s", diff)
		}
		v, err := s.GetJobVersion(ctx, "g", "lost", 2)
		if err != nil || v.Spec == nil || v.Spec.Description != job.Description {
			t.Fatalf("repaired version 2 = %+v, %v; want the job's spec", v, err)
		}

		if _, err := s.sched.DeleteJob(ctx, chime.NewJobKey("g", "lost")); err != nil {
			t.Fatal(err)
		}
		want = append([]versionRow{{3, api.VersionDeleted, repair, 0}}, want...)
		if diff := cmp.Diff(want, versionRows(t, s, "g", "lost")); diff != "" {
			t.Fatalf("versions after a lost delete (-want +got):\n%s", diff)
		}

		// A job written through the server has nothing to repair.
		if _, _, err := s.PutJob(ctx, "alice", httpJob(t, "g", "kept", "https://example.com/k"), 0, nil); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]versionRow{{1, api.VersionCreated, "alice", 1}}, versionRows(t, s, "g", "kept")); diff != "" {
			t.Errorf("versions of a job written through the server (-want +got):\n%s", diff)
		}
	})
}

// TestJobVersionRepairRacingTheRecord: a read that repairs a change whose
// version is still on its way is replaced by that version when it
// arrives, which knows the actor: one version, not two.
func TestJobVersionRepairRacingTheRecord(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		s := newServer(t, url)
		job := httpJob(t, "g", "race", "https://example.com/v1")
		if _, _, err := s.PutJob(t.Context(), "alice", job, 0, nil); err != nil {
			t.Fatal(err)
		}
		job.Description = "bob's change"
		writeWithoutVersion(t, s, job)
		versionRows(t, s, "g", "race") // the read repairs before bob's version arrives
		s.recordJobVersion(t.Context(), "bob", jobversion.Updated, chime.NewJobKey("g", "race"), 0)
		want := []versionRow{{2, api.VersionUpdated, "bob", 2}, {1, api.VersionCreated, "alice", 1}}
		if diff := cmp.Diff(want, versionRows(t, s, "g", "race")); diff != "" {
			t.Errorf("versions (-want +got):\n%s", diff)
		}
	})
}
