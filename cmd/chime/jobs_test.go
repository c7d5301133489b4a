package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

func TestJobsExplainAndBackfill(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	target := newEndpoint(t, http.StatusOK, "pong").URL
	flags := []string{"--server", srv.URL, "--token", srv.AdminToken}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, _, err := execChime(t, "", append(args, flags...)...)
		return out, err
	}
	file := writeFile(t, "jobs.yaml", `jobs:
  - group: reports
    name: hourly
    type: http
    http: {url: `+target+`}
    triggers:
      - name: top
        schedule: {kind: cron, expression: "0 0 * * * ?"}
`)
	if _, err := run("apply", "-f", file, "--yes"); err != nil {
		t.Fatal(err)
	}

	out, err := run("jobs", "backfill", "reports/hourly", "--from", "2025-01-01T00:00:00Z", "--to", "2025-01-01T03:00:00Z", "--trigger", "top")
	if err != nil || !strings.HasPrefix(out, "Job reports/hourly backfilled: 3 runs scheduled.") {
		t.Errorf("chime jobs backfill = %q, %v", out, err)
	}
	var acc api.Accepted
	out, err = run("jobs", "backfill", "reports/hourly", "--from", "2025-01-01T00:00:00Z", "--to", "2025-01-01T01:30:00Z", "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &acc) != nil || acc.Count != 2 {
		t.Errorf("chime jobs backfill -o json = %q, %v", out, err)
	}

	at := time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)
	out, err = run("jobs", "explain", "reports/hourly", "--at", at.Format(time.RFC3339))
	if err != nil {
		t.Fatalf("chime jobs explain: %v", err)
	}
	for _, want := range []string{
		`(?m)^Job: +reports/hourly$`,
		`(?m)^At: +2025-01-01 01:00:00Z$`,
		`(?m)^Summary: +\S.*$`,
		`(?m)^Fire times around it:\nFIRE TIME\n\d{4}-\d\d-\d\d \d\d:00:00Z\n`,
		`(?m)^Decisions:\n`,
		`(?m)^Executions:\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("chime jobs explain does not match %s:\n%s", want, out)
		}
	}
	var ex api.Explanation
	out, err = run("jobs", "explain", "reports/hourly", "--at", at.Format(time.RFC3339), "-o", "json")
	if err != nil || json.Unmarshal([]byte(out), &ex) != nil || !ex.At.Equal(at) || ex.Summary == "" {
		t.Errorf("chime jobs explain -o json = %q, %v", out, err)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"jobs", "backfill", "reports/hourly", "--to", "1h"}, "--from is required"},
		{[]string{"jobs", "backfill", "reports/hourly", "--from", "1h", "--to", "2h"}, "is not after --from"},
		{[]string{"jobs", "backfill", "reports/hourly", "--from", "yesterday", "--to", "1h"}, `--from "yesterday": want an RFC 3339 instant`},
		{[]string{"jobs", "backfill", "reports/hourly", "--from", "2h", "--to", "1h", "--trigger", "nope"}, "invalid_argument"},
		{[]string{"jobs", "explain", "reports/nope"}, "not_found"}, // at now: --at is optional
		{[]string{"jobs", "explain", "reports/hourly", "--at", "noon"}, `--at "noon": want an RFC 3339 instant`},
	} {
		if _, err := run(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("chime %s: %v, want an error with %q", strings.Join(tt.args, " "), err, tt.want)
		}
	}
}
