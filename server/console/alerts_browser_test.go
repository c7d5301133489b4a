package console_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
	"github.com/chromedp/chromedp"
)

// The job form sets the Slack, Teams and PagerDuty recipients and the
// alert conditions (after N failures, running longer than, recovered):
// a bad severity and a bad count are refused as they are typed, the
// saved job holds the fields, and the edit form shows them again.
func TestJobFormAlertChannels(t *testing.T) {
	srv := servertest.Start(t, nil)
	target := targetServer(t, http.StatusOK)
	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs", servertest.AdminName, srv.AdminPassword)
	p.ClickText("a", "New job")
	p.WaitText("main h1", "New job")
	typeIn(p, `input[name="group"]`, "billing")
	typeIn(p, `input[name="name"]`, "invoice")
	typeIn(p, `input[name="http.url"]`, target.URL+"/run")
	typeIn(p, `input[name="alerts.slack"]`, "https://hooks.slack.com/services/T0/B0/X")
	typeIn(p, `input[name="alerts.teams"]`, "https://prod.logic.azure.com/workflows/1")
	typeIn(p, `textarea[name="alerts.pagerduty"]`, "R0UT1NG loud")
	p.WaitText(`.field[data-field="alerts.pagerduty"] .error`, "per line")
	typeIn(p, `textarea[name="alerts.pagerduty"]`, "R0UT1NG critical\n{{secret \"pd\"}}")
	waitJS(p, "the PagerDuty error cleared", `document.querySelector('.field[data-field="alerts.pagerduty"] .error').hidden`)
	typeIn(p, `input[name="alerts.running_longer_than"]`, "soon")
	p.WaitText(`.field[data-field="alerts.running_longer_than"] .error`, "not a duration")
	typeIn(p, `input[name="alerts.running_longer_than"]`, "10m")
	typeIn(p, `input[name="alerts.after_failures"]`, "3")
	setValue(p, `input[name="alerts.recovered"]`, "true")
	p.ClickText("button", "Create job")

	// The secret the routing key refers to does not exist: the API
	// refuses the job and the form names the field.
	p.WaitText(`.field[data-field="alerts.pagerduty"] .error`, `secret "pd" is not defined`)
	typeIn(p, `textarea[name="alerts.pagerduty"]`, "R0UT1NG critical\nOTHERKEY")
	p.ClickText("button", "Create job")

	p.WaitText("main h1", "billing/invoice")
	job, err := srv.Client.GetJob(context.Background(), "billing", "invoice")
	if err != nil {
		t.Fatal(err)
	}
	want := &api.JobAlerts{
		Slack: []string{"https://hooks.slack.com/services/T0/B0/X"}, Teams: []string{"https://prod.logic.azure.com/workflows/1"},
		PagerDuty:     []api.PagerDutyTarget{{RoutingKey: "R0UT1NG", Severity: "critical"}, {RoutingKey: "OTHERKEY"}},
		AfterFailures: 3, RunningLongerThan: "10m", Recovered: true,
	}
	if !reflect.DeepEqual(job.Alerts, want) {
		t.Errorf("the form saved alerts %+v, want %+v", job.Alerts, want)
	}

	p.ClickText(".page-head a", "Edit")
	p.WaitText("main h1", "Edit billing/invoice")
	got := browsertest.Get(p, "reading the alert fields", chromedp.Evaluate[string](`['alerts.slack', 'alerts.teams', 'alerts.pagerduty',
		'alerts.after_failures', 'alerts.running_longer_than'].map(n => document.querySelector('[name="' + n + '"]').value).join('|') +
		'|' + document.querySelector('[name="alerts.recovered"]').checked`))
	if wantForm := "https://hooks.slack.com/services/T0/B0/X|https://prod.logic.azure.com/workflows/1|R0UT1NG critical\nOTHERKEY|3|10m|true"; got != wantForm {
		t.Errorf("the edit form shows %q, want %q", got, wantForm)
	}
}
