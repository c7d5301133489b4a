package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/servertest"
)

// cliLogin runs chime login against the server at url as the admin, with
// password, in a configuration directory of its own, and returns the token
// it saved there.
func cliLogin(t *testing.T, url, password string) string {
	t.Helper()
	configHome := t.TempDir()
	env := testEnv(map[string]string{"XDG_CONFIG_HOME": configHome})
	out, stderr, err := execChimeEnv(t, env, strings.NewReader(password+"\n"),
		"login", "--server", url, "--username", "admin", "--password-stdin")
	if err != nil {
		t.Fatalf("chime login: %v", err)
	}
	if out != "" {
		t.Errorf("chime login printed %q on standard output, want nothing", out)
	}
	path := filepath.Join(configHome, "chime", "credentials.yaml")
	if want := "Logged in to " + url + " as admin (admin) until "; !strings.HasPrefix(stderr, want) ||
		!strings.HasSuffix(stderr, "The session token is saved in "+path+".\n") {
		t.Errorf("chime login said %q", stderr)
	}
	creds, err := loadCredentials(path)
	if err != nil {
		t.Fatal(err)
	}
	saved := creds.Servers[url]
	if saved.Token == "" || saved.User != "admin" {
		t.Fatalf("chime login saved %+v for %s in %s", saved, url, path)
	}
	return saved.Token
}

// writeFile writes content to a file in the test's directory and returns
// its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const jobsYAML = `# two jobs of the reports team
jobs:
  - group: reports
    name: nightly
    description: Nightly report
    type: http
    http:
      method: POST
      url: TARGET/run
    triggers:
      - schedule: {kind: cron, expression: "0 30 2 ? * MON-FRI", time_zone: Europe/Berlin}
    retry: {max_attempts: 3, delay: 90s}
    timeout: 5m
  - group: reports
    name: ping
    type: http
    http: {url: TARGET/ping}
`

// onFirstRead is standard input that calls fn when the command first
// reads it (at apply's question), then answers answer.
type onFirstRead struct {
	once   sync.Once
	fn     func()
	answer io.Reader
}

func (r *onFirstRead) Read(p []byte) (int, error) {
	r.once.Do(r.fn)
	return r.answer.Read(p)
}

func TestApplyAndExport(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	c := srv.Client
	ctx := t.Context()
	target := newEndpoint(t, http.StatusOK, "pong").URL
	file := writeFile(t, "jobs.yaml", strings.ReplaceAll(jobsYAML, "TARGET", target))
	flags := []string{"--server", srv.URL, "--token", token}

	// First apply: both jobs are new; the diff shows them whole, the
	// question is asked, the answer applies them.
	out, stderr, err := execChime(t, "y\n", append([]string{"apply", "-f", file}, flags...)...)
	if err != nil {
		t.Fatalf("chime apply: %v\n%s", err, out)
	}
	for _, want := range []string{
		"job reports/nightly: create\n--- /dev/null\n+++ file: job reports/nightly\n",
		"+group: reports\n+name: nightly\n+description: Nightly report\n+type: http\n",
		"+  url: " + target + "/run\n",
		"+      expression: 0 30 2 ? * MON-FRI\n",
		"+  delay: 1m30s\n",
		"job reports/ping: create\n",
		"\n2 to create, 0 to update, 0 unchanged.\n",
		"created job reports/nightly\ncreated job reports/ping\nApplied 2 changes.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("chime apply output lacks %q:\n%s", want, out)
		}
	}
	if stderr != "Apply 2 changes to "+srv.URL+"? [y/N] " {
		t.Errorf("chime apply asked %q", stderr)
	}
	nightly, err := c.GetJob(ctx, "reports", "nightly")
	if err != nil || nightly.Timeout == "" || nightly.Retry == nil || nightly.Retry.MaxAttempts != 3 || len(nightly.Triggers) != 1 {
		t.Fatalf("the server's job after apply = %+v, %v", nightly, err)
	}

	// Applying the same file again changes nothing.
	unchanged := "job reports/nightly: unchanged\njob reports/ping: unchanged\n\n0 to create, 0 to update, 2 unchanged.\n"
	out, _, err = execChime(t, "", append([]string{"apply", "-f", file, "--dry-run"}, flags...)...)
	if err != nil || out != unchanged {
		t.Errorf("second apply: %v\n%s\nwant:\n%s", err, out, unchanged)
	}

	// Export, then apply the export: unchanged.
	exported, _, err := execChime(t, "", append([]string{"export", "--group", "reports"}, flags...)...)
	if err != nil {
		t.Fatalf("chime export: %v", err)
	}
	wantExport := "# chime export from " + srv.URL + ", group reports\n# Apply with: chime apply -f FILE\n" + strings.ReplaceAll(`jobs:
  - group: reports
    name: nightly
    description: Nightly report
    type: http
    http:
      method: POST
      url: TARGET/run
    triggers:
      - name: nightly-0
        schedule:
          kind: cron
          expression: 0 30 2 ? * MON-FRI
          time_zone: Europe/Berlin
    timeout: 5m
    retry:
      max_attempts: 3
      delay: 1m30s
  - group: reports
    name: ping
    type: http
    http:
      url: TARGET/ping
`, "TARGET", target)
	if exported != wantExport {
		t.Errorf("chime export:\n%s\nwant:\n%s", exported, wantExport)
	}
	exportFile := writeFile(t, "export.yaml", exported)
	out, _, err = execChime(t, "", append([]string{"jobs", "apply", "-f", exportFile, "--dry-run"}, flags...)...)
	if err != nil || out != unchanged {
		t.Errorf("applying the export: %v\n%s\nwant:\n%s", err, out, unchanged)
	}

	// An edit shows as a diff of the changed lines and applies with the
	// version it was compared with.
	edited := writeFile(t, "edited.yaml", strings.Replace(exported, "description: Nightly report", "description: Weekday report", 1))
	out, _, err = execChime(t, "", append([]string{"apply", "-f", edited, "--yes"}, flags...)...)
	if err != nil {
		t.Fatalf("chime apply of an edit: %v\n%s", err, out)
	}
	for _, want := range []string{
		"job reports/nightly: update\n--- server: job reports/nightly (version 1)\n+++ file: job reports/nightly\n",
		"-description: Nightly report\n+description: Weekday report\n",
		"job reports/ping: unchanged\n",
		"0 to create, 1 to update, 1 unchanged.\n",
		"updated job reports/nightly (version 2)\nApplied 1 change.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("chime apply of an edit lacks %q:\n%s", want, out)
		}
	}

	// Declining applies nothing.
	declined := writeFile(t, "declined.yaml", strings.Replace(exported, "description: Nightly report", "description: Never saved", 1))
	_, _, err = execChime(t, "n\n", append([]string{"apply", "-f", declined}, flags...)...)
	if err == nil || err.Error() != "cancelled: nothing applied" {
		t.Errorf("declined apply: error %v", err)
	}

	// Someone else edits the job between the diff and the answer: the
	// update is refused, saying why, and their edit stays.
	concurrent := writeFile(t, "concurrent.yaml", strings.Replace(exported, "description: Nightly report", "description: Mine", 1))
	stdin := &onFirstRead{answer: strings.NewReader("y\n"), fn: func() {
		j, err := c.GetJob(ctx, "reports", "nightly")
		if err != nil {
			t.Error(err)
			return
		}
		j.Description = "Theirs"
		if _, _, err := c.PutJob(ctx, *j, j.Version); err != nil {
			t.Error(err)
		}
	}}
	out, _, err = execChimeIn(t, stdin, append([]string{"apply", "-f", concurrent}, flags...)...)
	if err == nil {
		t.Fatalf("apply over a concurrent edit succeeded:\n%s", out)
	}
	for _, want := range []string{
		"job reports/nightly changed on the server after the diff was made against version 2; run apply again to see the new diff",
		"version_mismatch",
		"(0 changes applied before this one; nothing after it)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if j, _ := c.GetJob(ctx, "reports", "nightly"); j.Description != "Theirs" {
		t.Errorf("description after the refused apply = %q, want the concurrent edit's", j.Description)
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	flags := []string{"--server", srv.URL, "--token", token}
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{
			name: "bad URL, found by the server",
			yaml: "jobs:\n  - {group: g, name: a, type: http, http: {url: 'not a url'}}\n",
			want: []string{"job g/a: POST /api/v1/jobs/batch: invalid_argument: jobs[0].http.url: ", "(0 changes applied before these; nothing after them)"},
		},
		{
			// The new jobs are created together: the good one is not
			// created either (the check after the table finds no job).
			name: "bad URL in the second new job",
			yaml: "jobs:\n  - {group: g, name: e, type: http, http: {url: 'http://127.0.0.1:9/'}}\n  - {group: g, name: f, type: http, http: {url: 'not a url'}}\n",
			want: []string{"creating 2 jobs: job g/f: ", "invalid_argument: jobs[1].http.url: ", "(0 changes applied before these; nothing after them)"},
		},
		{
			name: "unknown calendar, found by the server",
			yaml: "jobs:\n  - group: g\n    name: b\n    type: http\n    http: {url: 'http://127.0.0.1:9/'}\n    triggers:\n      - schedule: {kind: cron, expression: '@daily'}\n        calendar: nowhere\n",
			want: []string{"invalid_argument: jobs[0].triggers[0].calendar: no calendar is named \"nowhere\""},
		},
		{
			name: "bad cron, found before asking",
			yaml: "jobs:\n  - group: g\n    name: c\n    type: http\n    triggers:\n      - schedule: {kind: cron, expression: '0 0 25 * * ?'}\n",
			want: []string{"jobs[0] (g/c): triggers[0].schedule.expression: ", `hour "25"`},
		},
		{
			name: "unknown field, found before asking",
			yaml: "jobs:\n  - {group: g, name: d, type: http, retries: 3}\n",
			want: []string{`unknown field "retries"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, "jobs.yaml", tt.yaml)
			_, _, err := execChime(t, "", append([]string{"apply", "-f", file, "--yes"}, flags...)...)
			if err == nil {
				t.Fatal("chime apply succeeded")
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
	list, err := srv.Client.ListJobs(t.Context(), api.JobQuery{})
	if err != nil || len(list.Jobs) != 0 {
		t.Errorf("jobs after refused applies = %+v, %v; want none", list, err)
	}
}

func TestJobAndExecutionCommands(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	c := srv.Client
	ctx := t.Context()
	flags := []string{"--server", srv.URL, "--token", token}
	chime := func(args ...string) string {
		t.Helper()
		out, _, err := execChime(t, "", append(args, flags...)...)
		if err != nil {
			t.Fatalf("chime %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	file := writeFile(t, "jobs.yaml", strings.ReplaceAll(jobsYAML, "TARGET", newEndpoint(t, http.StatusOK, "pong").URL))
	chime("apply", "-f", file, "--yes")

	out := chime("jobs", "list")
	for _, want := range []string{
		`(?m)^JOB +TYPE +SCHEDULE +STATE +NEXT FIRE +LAST RUN +LAST OUTCOME$`,
		`(?m)^reports/nightly +http +cron 0 30 2 \? \* MON-FRI Europe/Berlin +active +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`,
		`(?m)^reports/ping +http +on demand +active +- +- +-$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("chime jobs list does not match %s:\n%s", want, out)
		}
	}
	out = chime("jobs", "get", "reports/nightly")
	for _, want := range []string{
		"Job:           reports/nightly\n", "Retry:         up to 3 attempts, exponential backoff from 1m30s\n",
		"TRIGGER    SCHEDULE", "nightly-0  cron 0 30 2 ? * MON-FRI Europe/Berlin",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("chime jobs get lacks %q:\n%s", want, out)
		}
	}
	var job api.Job
	if err := json.Unmarshal([]byte(chime("jobs", "get", "reports", "nightly", "-o", "json")), &job); err != nil || job.Version != 1 {
		t.Errorf("chime jobs get -o json: %+v, %v", job, err)
	}

	if out := chime("jobs", "pause", "reports/nightly"); out != "Job reports/nightly paused.\n" {
		t.Errorf("chime jobs pause: %q", out)
	}
	if !regexp.MustCompile(`(?m)^reports/nightly .* paused `).MatchString(chime("jobs", "list", "--state", "paused")) {
		t.Error("the paused job is not listed as paused")
	}
	chime("jobs", "resume", "reports/nightly")

	out = chime("jobs", "run", "reports/ping", "--param", "who=test")
	if !strings.HasPrefix(out, "Job reports/ping: 1 run scheduled.") {
		t.Errorf("chime jobs run: %q", out)
	}
	var run api.Execution
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err := c.ListExecutions(ctx, api.ExecutionQuery{JobGroup: "reports", JobName: "ping"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Executions) == 1 && list.Executions[0].Outcome != "running" {
			run = list.Executions[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not finish within 20s: %+v", list.Executions)
		}
		time.Sleep(50 * time.Millisecond) // polling the real history; nothing to wait on
	}
	out = chime("executions", "list", "--job", "reports/ping", "--since", "1h")
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(run.ID) + ` +reports/ping +1 +succeeded +`).MatchString(out) {
		t.Errorf("chime executions list:\n%s", out)
	}
	var list api.ExecutionList
	if err := json.Unmarshal([]byte(chime("executions", "list", "--outcome", "succeeded", "-o", "json")), &list); err != nil ||
		len(list.Executions) != 1 || list.Executions[0].ID != run.ID {
		t.Errorf("chime executions list -o json: %+v, %v", list, err)
	}
	if out := chime("executions", "list", "--outcome", "failed"); out != "no executions\n" {
		t.Errorf("no failed executions, yet:\n%s", out)
	}
	out = chime("executions", "get", run.ID)
	for _, want := range []string{"Execution:  " + run.ID + "\n", "Outcome:    succeeded\n", "Param:      who=test\n", "Notes:      run by hand\n", "\nOutput:\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("chime executions get lacks %q:\n%s", want, out)
		}
	}
	if out := chime("executions", "retry", run.ID); !strings.HasPrefix(out, "Execution "+run.ID+" retried: 1 run scheduled.") {
		t.Errorf("chime executions retry: %q", out)
	}
	if out := chime("executions", "attempts", run.ID); !strings.Contains(out, run.ID) {
		t.Errorf("chime executions attempts:\n%s", out)
	}

	if out := chime("nodes"); !regexp.MustCompile(`(?m)^\S+ +yes +\d+ +\d{4}-.* \(answered this request\)$`).MatchString(out) {
		t.Errorf("chime nodes:\n%s", out)
	}

	cal := writeFile(t, "cal.yaml", "calendars:\n  - name: holidays\n    calendar: {type: holiday, time_zone: Europe/Berlin, excluded_dates: ['2025-12-25']}\n")
	if out := chime("calendars", "apply", "-f", cal, "--yes"); !strings.Contains(out, "created calendar holidays\n") {
		t.Errorf("chime calendars apply:\n%s", out)
	}
	if out := chime("calendars", "list"); !regexp.MustCompile(`(?m)^holidays +\{.*"2025-12-25".* +-$`).MatchString(out) {
		t.Errorf("chime calendars list:\n%s", out)
	}
	if out := chime("calendars", "get", "holidays"); !strings.HasPrefix(out, "name: holidays\ncalendar:\n") {
		t.Errorf("chime calendars get:\n%s", out)
	}
	if out := chime("calendars", "delete", "holidays"); out != "Calendar holidays deleted.\n" {
		t.Errorf("chime calendars delete: %q", out)
	}

	if out := chime("jobs", "delete", "reports/ping"); out != "Job reports/ping deleted.\n" {
		t.Errorf("chime jobs delete: %q", out)
	}
	_, _, err := execChime(t, "", append([]string{"jobs", "get", "reports/ping"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "GET /api/v1/jobs/reports/ping: not_found: ") {
		t.Errorf("chime jobs get of a deleted job: %v", err)
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  []string
	}{
		{
			name: "no token",
			args: []string{"jobs", "list", "--server", srv.URL, "--token", ""},
			want: []string{"unauthenticated", "hint: log in with `chime login --server " + srv.URL + "`, or pass an API token in CHIME_TOKEN or --token"},
		},
		{
			name:  "wrong password",
			stdin: "not the password\n",
			args:  []string{"login", "--server", srv.URL, "--username", "admin", "--password-stdin"},
			want:  []string{"POST /api/v1/auth/login: unauthenticated: "},
		},
		{
			name: "password on a non-terminal without --password-stdin",
			args: []string{"login", "--server", srv.URL, "--username", "admin"},
			want: []string{"standard input is not a terminal to ask for the password on: pass it on standard input with --password-stdin"},
		},
		{
			name: "bad job reference",
			args: []string{"jobs", "get", "nightly", "--server", srv.URL},
			want: []string{`job "nightly": want GROUP/NAME`},
		},
		{
			name: "bad parameter",
			args: []string{"jobs", "run", "g/n", "--param", "novalue", "--server", srv.URL},
			want: []string{`--param "novalue": want KEY=VALUE`},
		},
		{
			name: "bad since",
			args: []string{"executions", "list", "--since", "last week", "--server", srv.URL},
			want: []string{`--since "last week": want an RFC 3339 instant`},
		},
		{
			name: "server URL without a scheme",
			args: []string{"nodes", "--server", "127.0.0.1:8080"},
			want: []string{"--server: apiclient: server URL \"127.0.0.1:8080\": want an http:// or https:// URL"},
		},
		{
			name: "nobody listening",
			args: []string{"nodes", "--server", "http://127.0.0.1:1"},
			want: []string{"connection refused", "hint: is chime server running at http://127.0.0.1:1? Point --server or CHIME_SERVER at it"},
		},
		{
			name: "apply from standard input without --yes",
			args: []string{"apply", "-f", "-", "--server", srv.URL},
			want: []string{"-f - reads the file from standard input, so apply cannot ask there: add --yes or --dry-run"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := execChime(t, tt.stdin, tt.args...)
			if err == nil {
				t.Fatalf("chime %s succeeded", strings.Join(tt.args, " "))
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
		})
	}
}
