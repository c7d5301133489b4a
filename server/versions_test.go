package server_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/google/go-cmp/cmp"
)

// wantCode fails the test unless err is an *api.Error with code whose
// message contains text.
func wantCode(t *testing.T, what string, err error, code api.ErrorCode, text string) {
	t.Helper()
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != code || !strings.Contains(ae.Message, text) {
		t.Fatalf("%s: error %v, want %s containing %q", what, err, code, text)
	}
}

// specJSON is a job's JSON as GET shows it, without what the server
// computes anew (status, version, the triggers' firing state).
func specJSON(t *testing.T, j *api.Job) map[string]any {
	t.Helper()
	c := *j
	c.Status, c.Version, c.Warnings = nil, 0, nil
	c.Triggers = slices.Clone(c.Triggers)
	for i := range c.Triggers {
		c.Triggers[i].State, c.Triggers[i].NextFireTime, c.Triggers[i].PreviousFireTime = "", nil, nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestJobVersions goes through every kind of change of a job on every
// database: each records a version with its actor and kind; a rollback
// restores the triggers and settings exactly as GET showed them; a
// version never holds a credential in clear; diffs, unknown versions,
// If-Match and the roles behave as docs/api.md says.
func TestJobVersions(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, &servertest.Options{Config: server.Config{DatabaseURL: db.URL(t)}})
			ctx, c := t.Context(), srv.Client
			const token = "s3cr3t-t0ken"
			first := api.Job{
				Group: "billing", Name: "invoices", Type: "http", Description: "first",
				HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/run","method":"POST","headers":{"Authorization":"Bearer ` + token + `","X-Team":"billing"}}`),
				Data: map[string]any{"region": "eu"},
				Triggers: []api.Trigger{
					{Name: "nightly", Schedule: json.RawMessage(`{"kind":"cron","expression":"0 0 3 * * ?","time_zone":"Europe/Berlin"}`), Priority: 7},
					{Name: "hourly", Schedule: json.RawMessage(`{"kind":"simple","interval":"1h"}`)},
				},
				Timeout: "30s", Overlap: api.OverlapSkip, RequestsRecovery: true,
				Retry: &api.RetryPolicy{MaxAttempts: 3, Backoff: "fixed", Delay: "5s"},
			}
			if _, err := c.CreateJob(ctx, first); err != nil {
				t.Fatalf("CreateJob: %v", err)
			}
			v1, err := c.GetJob(ctx, "billing", "invoices")
			if err != nil {
				t.Fatal(err)
			}

			second := first
			second.Description = "second"
			second.Triggers = []api.Trigger{{Name: "nightly", Schedule: json.RawMessage(`{"kind":"cron","expression":"0 30 4 * * ?","time_zone":"UTC"}`)}}
			second.Timeout, second.Overlap, second.Retry = "1m", api.OverlapQueue, nil
			if _, _, err := c.PutJob(ctx, second, 0); err != nil {
				t.Fatalf("PutJob: %v", err)
			}
			if err := c.PauseJob(ctx, "billing", "invoices"); err != nil {
				t.Fatalf("PauseJob: %v", err)
			}

			// Roll back to the first version, with If-Match: a stale one is
			// refused and changes nothing.
			cur, err := c.GetJob(ctx, "billing", "invoices")
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.RollbackJob(ctx, "billing", "invoices", 1, cur.Version-1)
			wantCode(t, "rollback with a stale If-Match", err, api.CodeVersionMismatch, "")
			if _, err := c.RollbackJob(ctx, "billing", "invoices", 1, cur.Version); err != nil {
				t.Fatalf("RollbackJob: %v", err)
			}
			after, err := c.GetJob(ctx, "billing", "invoices")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(specJSON(t, v1), specJSON(t, after)); diff != "" {
				t.Errorf("the job after a rollback to version 1 (-version 1 +after):\n%s", diff)
			}

			if err := c.DeleteJob(ctx, "billing", "invoices"); err != nil {
				t.Fatalf("DeleteJob: %v", err)
			}

			var kinds []string
			for v, err := range c.JobVersions(ctx, "billing", "invoices") {
				if err != nil {
					t.Fatalf("JobVersions: %v", err)
				}
				if v.Actor != servertest.AdminName || v.Time.IsZero() {
					t.Errorf("version %d: actor %q, time %v; want %s and a time", v.Number, v.Actor, v.Time, servertest.AdminName)
				}
				kinds = append(kinds, v.Kind)
			}
			want := []string{api.VersionDeleted, api.VersionRolledBack, api.VersionUpdated, api.VersionUpdated, api.VersionCreated}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("kinds of the versions, newest first (-want +got):\n%s", diff)
			}
			page, err := c.ListJobVersions(ctx, "billing", "invoices", api.JobVersionQuery{Limit: 2})
			if err != nil || len(page.Versions) != 2 || page.Next == "" {
				t.Fatalf("first page of 2: %+v, %v; want 2 versions and a next cursor", page, err)
			}

			// The versions' specs: masked, and what GET showed.
			for n := int64(1); n <= 5; n++ {
				v, err := c.GetJobVersion(ctx, "billing", "invoices", n)
				if err != nil {
					t.Fatalf("GetJobVersion(%d): %v", n, err)
				}
				b, _ := json.Marshal(v)
				if strings.Contains(string(b), token) {
					t.Errorf("version %d holds the token in clear: %s", n, b)
				}
				if !slices.Equal(v.Masked, []string{"/http/headers/Authorization"}) {
					t.Errorf("version %d: masked %v, want the Authorization header", n, v.Masked)
				}
				if n == 4 && v.RolledBackFrom != 1 {
					t.Errorf("version 4: rolled back from %d, want 1", v.RolledBackFrom)
				}
			}
			v3, err := c.GetJobVersion(ctx, "billing", "invoices", 3)
			if err != nil {
				t.Fatal(err)
			}
			if !v3.Spec.Paused || v3.Spec.Description != "second" {
				t.Errorf("version 3 (the pause): paused %v, description %q; want paused, second", v3.Spec.Paused, v3.Spec.Description)
			}

			d, err := c.DiffJobVersions(ctx, "billing", "invoices", 0, 2)
			if err != nil {
				t.Fatalf("DiffJobVersions: %v", err)
			}
			for _, line := range []string{`-  "description": "first",`, `+  "description": "second",`, `-        "expression": "0 0 3 * * ?",`, `+        "expression": "0 30 4 * * ?",`, "--- version 1", "+++ version 2"} {
				if !strings.Contains(d.Diff, line+"\n") {
					t.Errorf("diff of versions 1 and 2 lacks the line %q:\n%s", line, d.Diff)
				}
			}
			if d, err := c.DiffJobVersions(ctx, "billing", "invoices", 1, 4); err != nil || d.Diff != "" || d.From != 1 {
				t.Errorf("diff of version 1 and its rollback = %+v, %v; want an empty diff", d, err)
			}

			// Bad input.
			_, err = c.GetJobVersion(ctx, "billing", "invoices", 42)
			wantCode(t, "unknown version", err, api.CodeNotFound, "version 42")
			_, err = c.RollbackJob(ctx, "billing", "invoices", 42, 0)
			wantCode(t, "rollback to an unknown version", err, api.CodeNotFound, "version 42")
			_, err = c.ListJobVersions(ctx, "billing", "nothing", api.JobVersionQuery{})
			wantCode(t, "versions of an unknown job", err, api.CodeNotFound, "billing/nothing")
			// The job is deleted: the masked token has nowhere to come from.
			_, err = c.RollbackJob(ctx, "billing", "invoices", 1, 0)
			wantCode(t, "restore of a masked value the job no longer has", err, api.CodeInvalidArgument, "/http/headers/Authorization")
			if _, err := c.GetJob(ctx, "billing", "invoices"); err == nil {
				t.Errorf("a refused rollback recreated the job")
			}

			// A viewer reads versions and cannot roll back.
			tok, err := c.CreateToken(ctx, api.Token{Name: "viewer", Role: api.RoleViewer})
			if err != nil {
				t.Fatal(err)
			}
			viewer := c.WithToken(tok.Secret)
			if _, err := viewer.GetJobVersion(ctx, "billing", "invoices", 1); err != nil {
				t.Errorf("a viewer reading a version: %v", err)
			}
			_, err = viewer.RollbackJob(ctx, "billing", "invoices", 1, 0)
			wantCode(t, "a viewer's rollback", err, api.CodePermissionDenied, "operator")
		})
	}
}

// TestJobVersionsRestoreDeletedJob rolls a deleted job without masked
// values back: it comes back as it was.
func TestJobVersionsRestoreDeletedJob(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	ctx, c := t.Context(), srv.Client
	job := api.Job{
		Group: "ops", Name: "ping", Type: "http", HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/ping"}`),
		Triggers: []api.Trigger{{Schedule: json.RawMessage(`{"kind":"cron","expression":"0 */5 * * * ?","time_zone":"UTC"}`)}},
	}
	if _, err := c.CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	before, err := c.GetJob(ctx, "ops", "ping")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteJob(ctx, "ops", "ping"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RollbackJob(ctx, "ops", "ping", 2, 0); err != nil {
		t.Fatalf("rolling back to the deleted version: %v", err)
	}
	after, err := c.GetJob(ctx, "ops", "ping")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(specJSON(t, before), specJSON(t, after)); diff != "" {
		t.Errorf("the restored job (-before +after):\n%s", diff)
	}
	list, err := c.ListJobVersions(ctx, "ops", "ping", api.JobVersionQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if got := list.Versions[0]; got.Number != 3 || got.Kind != api.VersionRolledBack || got.RolledBackFrom != 2 {
		t.Errorf("newest version %+v, want number 3, rolled_back from 2", got)
	}
}

// TestJobVersionsOfBatch checks that a batch create records a created
// version of each job.
func TestJobVersionsOfBatch(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	ctx, c := t.Context(), srv.Client
	var jobs []api.Job
	for _, name := range []string{"a", "b", "c"} {
		jobs = append(jobs, api.Job{Group: "batch", Name: name, Type: "http", HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/` + name + `"}`)})
	}
	if _, err := c.CreateJobs(ctx, jobs); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		v, err := c.GetJobVersion(ctx, "batch", j.Name, 1)
		if err != nil {
			t.Fatalf("version 1 of batch/%s: %v", j.Name, err)
		}
		if v.Kind != api.VersionCreated || v.JobVersion == 0 || v.Spec == nil || string(v.Spec.HTTP) != string(j.HTTP) {
			t.Errorf("version 1 of batch/%s = %+v, want created with the job's spec", j.Name, v)
		}
	}
}

// TestJobVersionsRetention keeps the newest Config.JobVersions versions of
// a job, and refuses a malformed version number naming it.
func TestJobVersionsRetention(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, &servertest.Options{Config: server.Config{JobVersions: 2}})
	ctx, c := t.Context(), srv.Client
	job := api.Job{Group: "keep", Name: "two", Type: "http", HTTP: json.RawMessage(`{"url":"http://127.0.0.1:9/x"}`)}
	for _, d := range []string{"one", "two", "three", "four"} {
		job.Description = d
		if _, _, err := c.PutJob(ctx, job, 0); err != nil {
			t.Fatal(err)
		}
	}
	list, err := c.ListJobVersions(ctx, "keep", "two", api.JobVersionQuery{Limit: 500}) // the largest page
	if err != nil {
		t.Fatal(err)
	}
	var numbers []int64
	for _, v := range list.Versions {
		numbers = append(numbers, v.Number)
	}
	if diff := cmp.Diff([]int64{4, 3}, numbers); diff != "" {
		t.Errorf("versions kept (-want +got):\n%s", diff)
	}
	_, err = c.GetJobVersion(ctx, "keep", "two", 2)
	wantCode(t, "a pruned version", err, api.CodeNotFound, "version 2")
	d, err := c.DiffJobVersions(ctx, "keep", "two", 0, 3)
	if err != nil || d.From != 0 || !strings.Contains(d.Diff, "--- nothing") {
		t.Errorf("diff of the oldest kept version = %+v, %v; want it against nothing", d, err)
	}

	status, body, _ := rawCall(t, srv, http.MethodGet, api.Version+"/jobs/keep/two/versions/latest", nil)
	if status != http.StatusBadRequest || body["field"] != "number" {
		t.Errorf("GET …/versions/latest: %d %v, want 400 naming number", status, body)
	}
}
