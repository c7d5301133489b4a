package console_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/chromedp/chromedp"
)

// The job form offers the fixed-delay kind: a delay after each run ends.
// It saves {"kind":"fixed_delay"}, shows it in words, and opens it again
// as a fixed delay.
func TestJobFormFixedDelay(t *testing.T) {
	srv := servertest.Start(t, nil)
	target := targetServer(t, http.StatusOK)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs", servertest.AdminName, srv.AdminPassword)
	p.ClickText("a", "New job")
	p.WaitText("main h1", "New job")
	typeIn(p, `input[name="group"]`, "demo")
	typeIn(p, `input[name="name"]`, "mirror")
	typeIn(p, `input[name="http.url"]`, target.URL+"/sync")
	setValue(p, `select[name="triggers[0].kind"]`, "fixed_delay")
	typeIn(p, `input[name="triggers[0].schedule.delay"]`, "90")
	setValue(p, `select[name="triggers[0].delay_unit"]`, "1000")
	p.ClickText("button", "Create job")

	p.WaitText("main h1", "demo/mirror")
	p.WaitText(`[data-testid="schedule-words"]`, "90 s after each run ends")
	job, err := srv.Client.GetJob(context.Background(), "demo", "mirror")
	if err != nil || len(job.Triggers) != 1 {
		t.Fatalf("the form created %+v, %v", job, err)
	}
	if got := string(job.Triggers[0].Schedule); got != `{"kind":"fixed_delay","delay":"1m30s"}` {
		t.Errorf("saved schedule %s, want a fixed delay of 1m30s", got)
	}

	p.ClickText(".page-head a", "Edit")
	p.WaitText("main h1", "Edit demo/mirror")
	got := browsertest.Get(p, "reading the trigger", chromedp.Evaluate[string](
		`document.querySelector('select[name="triggers[0].kind"]').value + '|' + document.querySelector('input[name="triggers[0].schedule.delay"]').value`))
	if got != "fixed_delay|90" {
		t.Errorf("the edit form shows the trigger as %q, want fixed_delay|90", got)
	}
}
