package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestJobHistory checks the job page's History tab: it lists the job's
// versions with who made them, shows the diff of the selected one against
// the one before, and lets an operator roll back to a version after a
// confirmation, which the API then shows; a viewer sees the history and no
// rollback button.
func TestJobHistory(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	ok := targetServer(t, http.StatusOK)
	job := cronJob(t, "billing", "invoice", ok.URL, "0 0 6 * * ?")
	job.Description = "first description"
	createJobs(t, srv, job)
	job.Description = "second description"
	job.Triggers[0].Schedule = json.RawMessage(`{"kind":"cron","expression":"0 30 7 * * ?","time_zone":"UTC"}`)
	if _, _, err := srv.Client.PutJob(ctx, job, 0); err != nil {
		t.Fatal(err)
	}
	before, err := srv.Client.GetJob(ctx, "billing", "invoice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "vera's long password"}); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	viewer := b.NewPage(t)
	viewer.Login(srv.URL, "/jobs/billing/invoice", "vera", "vera's long password")
	viewer.Click(`[data-testid="history-tab"]`)
	viewer.WaitText(`tr[data-version="1"]`, "created")
	viewer.WaitText(`[data-testid="version-diff"]`, `+  "description": "second description",`)
	if n := viewer.Count(`[data-testid="version-row"]`); n != 2 {
		t.Errorf("a viewer sees %d versions, want 2", n)
	}
	if n := viewer.Count(`[data-testid="rollback"]`); n != 0 {
		t.Errorf("a viewer sees %d rollback buttons, want none", n)
	}

	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs/billing/invoice", servertest.AdminName, srv.AdminPassword)
	p.Click(`[data-testid="history-tab"]`)
	p.WaitText(`[data-testid="history"]`, servertest.AdminName)
	p.WaitText(`[data-testid="version-diff"]`, `-        "expression": "0 0 6 * * ?",`)
	p.Click(`tr[data-version="1"] [data-testid="show-version"]`)
	p.WaitText(`[data-testid="version-diff-box"]`, "Version 1 (the oldest kept)")
	p.Screenshot("job-history")
	p.Click(`[data-testid="rollback"]`)
	p.WaitText("dialog", "Roll back billing/invoice to version 1?")
	p.Click(`dialog button.btn-primary`)
	p.WaitText(`[data-testid="job-notice"]`, "Rolled back to version 1.")
	p.WaitText(`tr[data-version="3"]`, "rolled back")
	p.WaitText(`tr[data-version="3"]`, "to version 1")

	after, err := srv.Client.GetJob(ctx, "billing", "invoice")
	if err != nil {
		t.Fatal(err)
	}
	var expr struct{ Expression string }
	_ = json.Unmarshal(after.Triggers[0].Schedule, &expr)
	if after.Description != "first description" || expr.Expression != "0 0 6 * * ?" || after.Version <= before.Version {
		t.Errorf("after the console's rollback: description %q, expression %q, version %d (was %d); want version 1's spec as a new version",
			after.Description, expr.Expression, after.Version, before.Version)
	}
}
