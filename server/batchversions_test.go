package server

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/google/go-cmp/cmp"
)

// batchFixture returns n jobs for a batch create, named from prefix: with
// triggers listed out of their store order, with and without start
// times, with data, some paused.
func batchFixture(prefix string, n int) []api.Job {
	start := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	jobs := make([]api.Job, n)
	for i := range jobs {
		name := fmt.Sprintf("%s-%d", prefix, i)
		jobs[i] = api.Job{
			Group: "batch", Name: name, Type: "http", Description: "nightly",
			HTTP: json.RawMessage(`{"url":"https://example.com/run","method":"POST"}`),
			Data: map[string]any{"n": i, "region": "eu"},
			Triggers: []api.Trigger{
				{Name: "z-nightly-" + name, Schedule: cronSchedule("0 0 2 * * ?"), Priority: 7},
				{Name: "a-weekly-" + name, Schedule: cronSchedule("0 0 3 ? * MON"), StartTime: &start, Data: map[string]any{"k": "v"}},
			},
			Paused: i%3 == 0,
		}
	}
	return jobs
}

// TestCreateJobsVersionsAreBuiltFromTheWrite: a batch create records each
// job's created version without reading the jobs or their triggers back
// (the store reads are the same for 3 jobs and 30, and none of them reads
// a job or its triggers), and each version is the spec a read-back gives.
func TestCreateJobsVersionsAreBuiltFromTheWrite(t *testing.T) {
	t.Parallel()
	s, reads := newCountingServer(t)
	ctx := t.Context()
	create := func(jobs []api.Job) map[string]int {
		reads.take()
		if _, err := s.CreateJobs(ctx, "alice", jobs); err != nil {
			t.Fatalf("CreateJobs: %v", err)
		}
		<-s.writes.whenIdle() // the versions are written through the write queue
		return reads.take()
	}
	few, many := create(batchFixture("few", 3)), create(batchFixture("many", 30))
	if !maps.Equal(few, many) || few["JobGet"] != 0 || few["TriggerList"] != 0 || few["TriggerGet"] != 0 {
		t.Errorf("store reads of a batch create: %v for 3 jobs, %v for 30; want the same, and no job or trigger read", few, many)
	}
	for _, j := range append(batchFixture("few", 3), batchFixture("many", 30)...) {
		key := chime.NewJobKey(j.Group, j.Name)
		vers, err := s.versions.List(ctx, j.Group, j.Name, 0, 10)
		if err != nil || len(vers) != 1 {
			t.Fatalf("versions of %s: %d, %v; want 1", key, len(vers), err)
		}
		stored, v, err := s.versionSpec(ctx, key)
		if err != nil {
			t.Fatalf("versionSpec(%s): %v", key, err)
		}
		want, _, err := maskedSpec(stored)
		if err != nil {
			t.Fatal(err)
		}
		var got, wantTree any
		if err := json.Unmarshal(vers[0].Spec, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &wantTree); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantTree, got); diff != "" || vers[0].JobVersion != v {
			t.Errorf("created version of %s (job version %d, stored %d) differs from the job read back (-read +version):\n%s",
				key, vers[0].JobVersion, v, diff)
		}
	}
}
