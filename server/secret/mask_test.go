package secret_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/secret"
)

func TestSensitiveName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "X-Api-Key": true,
		"X-Auth-Token": true, "DB_PASSWORD": true, "AWS_SECRET_ACCESS_KEY": true, "X-Hub-Signature": true,
		"Content-Type": false, "Accept": false, "X-Request-Id": false, "REGION": false, "Keep-Alive": false,
	} {
		if got := secret.SensitiveName(name); got != want {
			t.Errorf("SensitiveName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMaskValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"literal token", "Bearer abc123", "****"},
		{"literal value", "abc123", "****"},
		{"secret reference", `Bearer {{secret "tok"}}`, `Bearer {{secret "tok"}}`},
		{"secret reference alone", `{{secret "tok"}}`, `{{secret "tok"}}`},
		{"basic with a parameter", `Basic {{.Params.creds}}`, `Basic {{.Params.creds}}`},
		{"literal beside a reference", `sk_live_{{secret "tok"}}`, "****"},
		{"literal inside an action", `Bearer {{"abc123"}}`, "****"},
		{"literal after a reference", `Bearer {{secret "tok"}} {{printf "%s" "x"}}`, "****"},
		{"unclosed action", `Bearer {{secret "tok"`, "****"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := secret.MaskValue(tc.in); got != tc.want {
				t.Errorf("MaskValue(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestMaskURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/XXXX":         "https://hooks.slack.com/****",
		"https://example.com/hook?token=abc":                  "https://example.com/****",
		"https://user:pass@example.com":                       "https://****@example.com",
		"https://example.com":                                 "https://example.com",
		"https://example.com/":                                "https://example.com",
		`https://hooks.slack.com/services/{{secret "slack"}}`: "https://hooks.slack.com/****",
		"::not a url": "****",
	} {
		if got := secret.MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMaskRequestURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://api.example.com/v1/items?api_key=abc&page=2":            "https://api.example.com/v1/items?api_key=****&page=2",
		"https://api.example.com/v1/items?page=2#token=x":                "https://api.example.com/v1/items?page=2#token=x",
		"https://bob:pw@api.example.com/x":                               "https://****@api.example.com/x",
		`https://api.example.com/x?token={{secret "t"}}&region=eu`:       `https://api.example.com/x?token={{secret "t"}}&region=eu`,
		"https://api.example.com/{{.Params.path}}?access_token=abc#frag": "https://api.example.com/{{.Params.path}}?access_token=****#frag",
		"https://api.example.com/plain":                                  "https://api.example.com/plain",
		"{{.Params.base}}/x?key=abc":                                     "{{.Params.base}}/x?key=****",
	} {
		if got := secret.MaskRequestURL(in); got != want {
			t.Errorf("MaskRequestURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMaskJob masks a job's sensitive headers, variables and webhooks and
// keeps everything else as it was.
func TestMaskJob(t *testing.T) {
	t.Parallel()
	in := api.Job{
		Group: "g", Name: "n", Type: "http",
		HTTP: json.RawMessage(`{"url":"https://api.example.com/x?api_key=k1","headers":{"Authorization":"Bearer abc123",` +
			`"X-Trace":"t1","X-Api-Key":"{{secret \"key\"}}"},"body":"{}"}`),
		Shell: json.RawMessage(`{"argv":["run"],"env":{"DB_PASSWORD":"hunter2","REGION":"eu"}}`),
		Alerts: &api.JobAlerts{Webhooks: []string{"https://hooks.slack.com/services/T/B/X"}, Emails: []string{"ops@example.com"},
			Slack: []string{"https://hooks.slack.com/services/T/B/Y"}, Teams: []string{"https://prod.logic.azure.com/workflows/1?sig=s"},
			PagerDuty:     []api.PagerDutyTarget{{RoutingKey: "R0UT1NG", Severity: "critical"}, {RoutingKey: `{{secret "pd"}}`}},
			AfterFailures: 3, Recovered: true, RunningLongerThan: "10m"},
	}
	got := secret.MaskJob(in)
	var http, shell map[string]any
	if err := json.Unmarshal(got.HTTP, &http); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got.Shell, &shell); err != nil {
		t.Fatal(err)
	}
	wantHTTP := map[string]any{"url": "https://api.example.com/x?api_key=****", "body": "{}", "headers": map[string]any{
		"Authorization": "****", "X-Trace": "t1", "X-Api-Key": `{{secret "key"}}`,
	}}
	if !reflect.DeepEqual(http, wantHTTP) {
		t.Errorf("http = %v, want %v", http, wantHTTP)
	}
	wantShell := map[string]any{"argv": []any{"run"}, "env": map[string]any{"DB_PASSWORD": "****", "REGION": "eu"}}
	if !reflect.DeepEqual(shell, wantShell) {
		t.Errorf("shell = %v, want %v", shell, wantShell)
	}
	wantAlerts := &api.JobAlerts{Webhooks: []string{"https://hooks.slack.com/****"}, Emails: []string{"ops@example.com"},
		Slack: []string{"https://hooks.slack.com/****"}, Teams: []string{"https://prod.logic.azure.com/****"},
		PagerDuty:     []api.PagerDutyTarget{{RoutingKey: "****", Severity: "critical"}, {RoutingKey: `{{secret "pd"}}`}},
		AfterFailures: 3, Recovered: true, RunningLongerThan: "10m"}
	if !reflect.DeepEqual(got.Alerts, wantAlerts) {
		t.Errorf("alerts = %+v, want %+v", got.Alerts, wantAlerts)
	}
	if in.Alerts.Webhooks[0] != "https://hooks.slack.com/services/T/B/X" || in.Alerts.PagerDuty[0].RoutingKey != "R0UT1NG" {
		t.Error("MaskJob changed the job it was given")
	}
	// A job without sensitive values is returned byte for byte.
	plain := api.Job{HTTP: json.RawMessage(`{"url":"https://x.example", "headers":{"Accept":"*/*"}}`)}
	if got := secret.MaskJob(plain); string(got.HTTP) != string(plain.HTTP) {
		t.Errorf("MaskJob changed a spec without sensitive values: %s", got.HTTP)
	}
}
