package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestMaintenanceBanner checks the dashboard's maintenance banner: a
// window started through the API shows its scope, reason and who started
// it, to a viewer too, who has no control; an admin ends it from the
// banner, and starts another from the dashboard's form, which shows the
// API's refusal of an unknown group next to the field.
func TestMaintenanceBanner(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	ok := targetServer(t, http.StatusOK)
	createJobs(t, srv, cronJob(t, "billing", "invoice", ok.URL, "0 0 6 * * ?"))
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "vera's long password"}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.StartMaintenance(ctx, api.MaintenanceRequest{Group: "billing", Reason: "ledger migration"}); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	viewer := b.NewPage(t)
	viewer.Login(srv.URL, "/", "vera", "vera's long password")
	viewer.WaitText(`[data-testid="maintenance-banner"]`, "ledger migration")
	viewer.WaitText(`[data-testid="maintenance-banner"]`, "the jobs of group billing paused")
	viewer.WaitText(`[data-testid="maintenance-by"]`, servertest.AdminName)
	if n := viewer.Count(`[data-testid="maintenance-end"]`); n != 0 {
		t.Errorf("a viewer sees %d End maintenance buttons, want none", n)
	}

	p := b.NewPage(t)
	p.Login(srv.URL, "/", servertest.AdminName, srv.AdminPassword)
	p.WaitText(`[data-testid="maintenance-reason"]`, "ledger migration")
	p.Screenshot("dashboard-maintenance")
	p.Click(`[data-testid="maintenance-end"]`)
	p.WaitText("dialog", "End maintenance?")
	p.Click(`dialog button.btn-primary`)
	waitJS(p, "the banner to go", `!document.querySelector('[data-testid="maintenance-banner"]') && !!document.querySelector('[data-testid="maintenance-start"]')`)
	if m, err := srv.Client.Maintenance(ctx); err != nil || m.Active {
		t.Fatalf("Maintenance after ending it in the console = %+v, %v; want none", m, err)
	}

	p.Click(`[data-testid="maintenance-start"]`)
	typeIn(p, `dialog input[name="group"]`, "nosuch")
	typeIn(p, `dialog input[name="reason"]`, "database upgrade")
	p.Click(`dialog button[type="submit"]`)
	p.WaitText(`dialog .field[data-field="group"] .error`, `no job is in group "nosuch"`)
	typeIn(p, `dialog input[name="group"]`, "")
	p.Click(`dialog button[type="submit"]`)
	p.WaitText(`[data-testid="maintenance-banner"]`, "every job paused")
	p.WaitText(`[data-testid="maintenance-reason"]`, "database upgrade")
	if m, err := srv.Client.Maintenance(ctx); err != nil || !m.Active || m.Group != "" || m.Reason != "database upgrade" || m.By != servertest.AdminName {
		t.Errorf("Maintenance after starting it in the console = %+v, %v", m, err)
	}
}
