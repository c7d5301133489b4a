package main

import (
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

const alertsYAML = `jobs:
  - group: billing
    name: invoice
    type: http
    http: {url: https://billing.example.com/run}
    alerts:
      slack: [https://hooks.slack.com/services/T0/B0/XYZ]
      teams: [https://prod.logic.azure.com/workflows/abc]
      pagerduty:
        - {routing_key: R0UT1NGKEY0123456789, severity: critical}
      after_failures: 3
      running_longer_than: 600s
      recovered: true
`

// TestJobFileAlertChannels applies a job file with Slack, Teams and
// PagerDuty recipients and alert conditions, and shows the job.
func TestJobFileAlertChannels(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	file := writeFile(t, "jobs.yaml", alertsYAML)
	if out, _, err := execChime(t, "", append([]string{"apply", "-f", file, "--yes"}, flags...)...); err != nil {
		t.Fatalf("chime apply: %v\n%s", err, out)
	}
	j, err := srv.Client.GetJob(t.Context(), "billing", "invoice")
	if err != nil {
		t.Fatal(err)
	}
	a := j.Alerts
	if a == nil || len(a.Slack) != 1 || len(a.Teams) != 1 || a.AfterFailures != 3 || a.RunningLongerThan != "10m" || !a.Recovered ||
		len(a.PagerDuty) != 1 || a.PagerDuty[0] != (api.PagerDutyTarget{RoutingKey: "R0UT1NGKEY0123456789", Severity: "critical"}) {
		t.Fatalf("the server's alerts after apply = %+v", a)
	}
	out, _, err := execChime(t, "", append([]string{"jobs", "get", "billing/invoice"}, flags...)...)
	if err != nil {
		t.Fatalf("chime jobs get: %v", err)
	}
	for _, want := range []string{"Slack https://hooks.slack.com/services/T0/B0/XYZ", "Teams https://prod.logic.azure.com/workflows/abc",
		"PagerDuty key **** (critical)", "failures after 3 in a row", "when running longer than 10m", "on recovery"} {
		if !strings.Contains(out, want) {
			t.Errorf("chime jobs get lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "R0UT1NGKEY") {
		t.Errorf("chime jobs get prints the routing key:\n%s", out)
	}
}
