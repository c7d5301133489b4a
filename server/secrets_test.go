package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/secret"
)

// echoEndpoint answers every request with its Authorization header and
// URL, as a careless endpoint might, and keeps what it received.
type echoEndpoint struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
	paths []string
}

func newEchoEndpoint(t *testing.T, status int) *echoEndpoint {
	t.Helper()
	e := &echoEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		e.mu.Lock()
		e.auths = append(e.auths, r.Header.Get("Authorization"))
		e.paths = append(e.paths, r.URL.RequestURI())
		e.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "you sent "+r.Header.Get("Authorization")+" to "+r.URL.RequestURI())
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *echoEndpoint) received() (auths, paths []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auths...), append([]string(nil), e.paths...)
}

// withKey sets a new secret key.
func withKey(key string) func(*Config) { return func(c *Config) { c.SecretKey = key } }

// TestSecretReachesTheEndpointAndIsMaskedInTheHistory fires an http job
// whose header and URL use {{secret "tok"}} against a real endpoint that
// echoes them: the endpoint receives the value, the recorded output has
// it masked, a new value applies to the next firing, and the secret cannot
// be deleted while the job uses it.
func TestSecretReachesTheEndpointAndIsMaskedInTheHistory(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url, withKey(secret.GenerateKey()))
		start(t, s)
		ep := newEchoEndpoint(t, http.StatusOK)
		const first, second = "tok-0123456789abcdef", "tok-fedcba9876543210"
		if _, created, err := s.PutSecret(ctx, "admin", "tok", first); err != nil || !created {
			t.Fatalf("PutSecret = created %v, %v", created, err)
		}
		j := api.Job{Group: "billing", Name: "sync", Type: "http", HTTP: httpSpec(t, map[string]any{
			"url":     ep.URL + `/sync?key={{secret "tok"}}`,
			"headers": map[string]string{"Authorization": `Bearer {{secret "tok"}}`},
		})}
		if _, err := s.CreateJob(ctx, "otto", j); err != nil {
			t.Fatalf("CreateJob: %v", err)
		}

		for i, value := range []string{first, second} {
			if i > 0 {
				if _, created, err := s.PutSecret(ctx, "admin", "tok", value); err != nil || created {
					t.Fatalf("PutSecret (replace) = created %v, %v", created, err)
				}
			}
			acc, err := s.RunJob(ctx, "otto", "billing", "sync", api.RunRequest{})
			if err != nil {
				t.Fatalf("RunJob: %v", err)
			}
			e := waitExecution(t, s, acc.ExecutionIDs[0])
			auths, paths := ep.received()
			if len(auths) != i+1 || auths[i] != "Bearer "+value || paths[i] != "/sync?key="+value {
				t.Fatalf("endpoint received %q at %q; want Bearer %s at /sync?key=%s", auths, paths, value, value)
			}
			if e.Outcome != "succeeded" || strings.Contains(e.Output, value) || !strings.Contains(e.Output, "you sent Bearer **** to /sync?key=****") {
				t.Errorf("execution = %s, output %q; want it succeeded with the secret masked", e.Outcome, e.Output)
			}
		}

		err := s.DeleteSecret(ctx, "admin", "tok")
		wantAPIError(t, err, api.CodeConflict, "")
		if !strings.Contains(err.Error(), "billing/sync") {
			t.Errorf("DeleteSecret of a used secret: %v, want it to name the job", err)
		}
		sec, err := s.GetSecret(ctx, "tok")
		if err != nil || len(sec.UsedBy) != 1 || sec.UsedBy[0] != "billing/sync" {
			t.Errorf("GetSecret = %+v, %v; want it used by billing/sync, without a value", sec, err)
		}
		page, err := s.ListAudit(ctx, api.AuditQuery{Target: "secrets/tok"})
		if err != nil || len(page.Entries) != 2 {
			t.Fatalf("ListAudit(secrets/tok) = %+v, %v; want two entries", page, err)
		}
		for _, e := range page.Entries {
			if e.Actor != "admin" || e.Action != secret.ActionSet {
				t.Errorf("audit entry %+v, want admin %s", e, secret.ActionSet)
			}
			for _, v := range e.Detail {
				if s, ok := v.(string); ok && (strings.Contains(s, first) || strings.Contains(s, second)) {
					t.Errorf("audit entry %+v holds the value", e)
				}
			}
		}
	})
}

// TestSavingAJobChecksItsSecrets refuses jobs that refer to undefined
// secrets, compute a secret's name, or hold a viewer's mask, naming the
// field, and stores nothing.
func TestSavingAJobChecksItsSecrets(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", withKey(secret.GenerateKey()), func(c *Config) { c.EnableShellJobs, c.ShellAllow = true, []string{"*"} })
	ctx := t.Context()
	if _, _, err := s.PutSecret(ctx, "admin", "defined", "v"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		job   api.Job
		field string
		says  string
	}{
		{"undefined secret in a header", api.Job{Type: "http", HTTP: httpSpec(t, map[string]any{
			"url": "https://example.com", "headers": map[string]string{"Authorization": `Bearer {{secret "missing"}}`},
		})}, "http.headers.Authorization", `secret "missing" is not defined`},
		{"undefined secret in the body", api.Job{Type: "http", HTTP: httpSpec(t, map[string]any{
			"url": "https://example.com", "body": `{"k":{{json (secret "defined")}},"m":{{json (secret "gone")}}}`,
		})}, "http.body", `secret "gone" is not defined`},
		{"undefined secret in a variable", api.Job{Type: "shell", Shell: []byte(`{"argv":["true"],"env":{"TOKEN":"{{secret \"nope\"}}"}}`)},
			"shell.env.TOKEN", `secret "nope" is not defined`},
		{"undefined secret in a webhook", api.Job{Type: "http", HTTP: httpSpec(t, map[string]any{"url": "https://example.com"}),
			Alerts: &api.JobAlerts{Webhooks: []string{`https://hooks.example.com/{{secret "hook"}}`}}},
			"alerts.webhooks[0]", `secret "hook" is not defined`},
		{"computed name", api.Job{Type: "http", HTTP: httpSpec(t, map[string]any{
			"url": "https://example.com", "headers": map[string]string{"X-Key": `{{secret .Params.which}}`},
		})}, "http.headers.X-Key", "secret takes one quoted name"},
		{"a viewer's mask written back", api.Job{Type: "http", HTTP: httpSpec(t, map[string]any{
			"url": "https://example.com", "headers": map[string]string{"Authorization": secret.Mask},
		})}, "http.headers.Authorization", "the mask a viewer reads"},
		{"a masked URL written back", api.Job{Type: "http", HTTP: httpSpec(t, map[string]any{
			"url": "https://example.com/x?api_key=" + secret.Mask,
		})}, "http.url", "the mask a viewer reads"},
		{"a masked webhook written back", api.Job{Type: "http", HTTP: httpSpec(t, map[string]any{"url": "https://example.com"}),
			Alerts: &api.JobAlerts{Webhooks: []string{"https://hooks.slack.com/" + secret.Mask}}},
			"alerts.webhooks[0]", "the mask a viewer reads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.job.Group, tc.job.Name = "g", "j"
			_, err := s.CreateJob(ctx, "otto", tc.job)
			wantAPIError(t, err, api.CodeInvalidArgument, tc.field)
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
		})
	}
	if list, err := s.ListJobs(ctx, api.JobQuery{}); err != nil || len(list.Jobs) != 0 {
		t.Errorf("ListJobs = %+v, %v; want no job", list, err)
	}
	err := s.PutAlertSettings(ctx, "admin", api.AlertSettings{DefaultWebhooks: []string{`https://hooks.example.com/{{secret "nope"}}`}})
	wantAPIError(t, err, api.CodeInvalidArgument, "default_webhooks[0]")
}

// TestFiringFailsClearlyWithoutTheSecret runs a job whose secret is gone,
// then on servers with another key and with none, on one database: each
// execution fails with an error naming the secret and the problem.
func TestFiringFailsClearlyWithoutTheSecret(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := "sqlite:" + t.TempDir() + "/chime.db"
	key := secret.GenerateKey()
	ep := newEchoEndpoint(t, http.StatusOK)

	setup := newServer(t, url, withKey(key))
	for _, name := range []string{"tok", "gone"} {
		if _, _, err := setup.PutSecret(ctx, "admin", name, "value-of-"+name); err != nil {
			t.Fatal(err)
		}
	}
	for name, ref := range map[string]string{"uses-tok": "tok", "uses-gone": "gone"} {
		j := api.Job{Group: "g", Name: name, Type: "http", HTTP: httpSpec(t, map[string]any{
			"url": ep.URL, "headers": map[string]string{"Authorization": `Bearer {{secret "` + ref + `"}}`},
		})}
		if _, err := setup.CreateJob(ctx, "otto", j); err != nil {
			t.Fatalf("CreateJob(%s): %v", name, err)
		}
	}
	// Deleted behind the job's back, as a race with a save could.
	if err := setup.secrets.Delete(ctx, "admin", "gone"); err != nil {
		t.Fatal(err)
	}
	if err := setup.Close(); err != nil {
		t.Fatal(err)
	}

	otherKey := secret.GenerateKey()
	for _, tc := range []struct {
		name, key, job string
		says           []string
	}{
		{"undefined", key, "uses-gone", []string{`http.headers.Authorization: secret "gone" is not defined`}},
		{"another key", otherKey, "uses-tok", []string{`secret "tok" was encrypted with the key whose ID is`, "set the secret again"}},
		{"no key", "", "uses-tok", []string{`secret "tok" cannot be decrypted: no secret key is configured`, "CHIME_SECRET_KEY"}},
	} {
		s := newServer(t, url, withKey(tc.key))
		stop := start(t, s)
		acc, err := s.RunJob(ctx, "otto", "g", tc.job, api.RunRequest{})
		if err != nil {
			t.Fatalf("%s: RunJob: %v", tc.name, err)
		}
		e := waitExecution(t, s, acc.ExecutionIDs[0])
		if e.Outcome != "failed" {
			t.Errorf("%s: outcome %s, want failed", tc.name, e.Outcome)
		}
		for _, part := range tc.says {
			if !strings.Contains(e.Error, part) {
				t.Errorf("%s: error %q does not say %q", tc.name, e.Error, part)
			}
		}
		if err := stop(); err != nil {
			t.Fatalf("%s: stopping: %v", tc.name, err)
		}
	}
	if auths, _ := ep.received(); len(auths) != 0 {
		t.Errorf("the endpoint received %q; want no request from a job whose secret cannot be read", auths)
	}
}

// TestSettingASecretNeedsAKey refuses PutSecret on a server without a key,
// saying how to configure one.
func TestSettingASecretNeedsAKey(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db")
	_, _, err := s.PutSecret(t.Context(), "admin", "tok", "v")
	wantAPIError(t, err, api.CodeInvalidArgument, "")
	if !strings.Contains(err.Error(), "CHIME_SECRET_KEY") || !strings.Contains(err.Error(), "chime secrets keygen") {
		t.Errorf("PutSecret without a key: %v; want it to say how to configure one", err)
	}
	_, err = New(t.Context(), Config{DatabaseURL: "sqlite:" + t.TempDir() + "/x.db", SecretKey: "too short"})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "SecretKey") {
		t.Errorf("New with a bad key: %v, want ErrInvalidConfig naming SecretKey", err)
	}
}

// TestAlertWebhookUsesASecret sends a failing job's alert to a webhook
// whose path is a secret.
func TestAlertWebhookUsesASecret(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", withKey(secret.GenerateKey()))
	start(t, s)
	ctx := t.Context()
	hook := newEchoEndpoint(t, http.StatusOK)
	target := newEchoEndpoint(t, http.StatusInternalServerError)
	if _, _, err := s.PutSecret(ctx, "admin", "hook-token", "T000/B000/XXXX"); err != nil {
		t.Fatal(err)
	}
	j := api.Job{Group: "g", Name: "failing", Type: "http", HTTP: httpSpec(t, map[string]any{"url": target.URL}),
		Alerts: &api.JobAlerts{Webhooks: []string{hook.URL + `/services/{{raw (secret "hook-token")}}`}}}
	if _, err := s.CreateJob(ctx, "otto", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := s.RunJob(ctx, "otto", "g", "failing", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the alert", func() bool {
		_, paths := hook.received()
		return len(paths) > 0
	})
	if _, paths := hook.received(); paths[0] != "/services/T000/B000/XXXX" {
		t.Errorf("the alert went to %q, want /services/T000/B000/XXXX", paths[0])
	}
}

// TestShellJobReadsASecretFromItsEnvironment passes a secret to a shell
// script through env; the script echoes it, and the history has it
// masked.
func TestShellJobReadsASecretFromItsEnvironment(t *testing.T) {
	t.Parallel()
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", withKey(secret.GenerateKey()), func(c *Config) { c.EnableShellJobs, c.ShellAllow = true, []string{"*"} })
	start(t, s)
	ctx := t.Context()
	const value = "db-password-0123456789"
	if _, _, err := s.PutSecret(ctx, "admin", "db-password", value); err != nil {
		t.Fatal(err)
	}
	j := api.Job{Group: "ops", Name: "backup", Type: "shell",
		Shell: []byte(`{"shell":"echo connecting with $DB_PASSWORD; echo length ${#DB_PASSWORD}; exit 3","env":{"DB_PASSWORD":"{{secret \"db-password\"}}"}}`)}
	if _, err := s.CreateJob(ctx, "otto", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	acc, err := s.RunJob(ctx, "otto", "ops", "backup", api.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	e := waitExecution(t, s, acc.ExecutionIDs[0])
	if e.Outcome != "failed" || strings.Contains(e.Output, value) || !strings.Contains(e.Output, "connecting with ****") ||
		!strings.Contains(e.Output, "length 22") {
		t.Errorf("execution = %s, output %q; want it failed, the secret read (length 22) and masked", e.Outcome, e.Output)
	}
}

// TestPagerDutyRoutingKeyFromASecret sends a failing job's alert to
// PagerDuty with a routing key kept as a secret, which cannot be deleted
// while the job refers to it.
func TestPagerDutyRoutingKeyFromASecret(t *testing.T) {
	t.Parallel()
	pd := newPagerDutyReceiver(t)
	s := newServer(t, "sqlite:"+t.TempDir()+"/chime.db", withKey(secret.GenerateKey()), func(c *Config) { c.Alert.PagerDutyURL = pd.URL })
	start(t, s)
	ctx := t.Context()
	if _, _, err := s.PutSecret(ctx, "admin", "pd-key", "0123456789abcdef0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	j := api.Job{Group: "g", Name: "paged", Type: "http", HTTP: httpSpec(t, map[string]any{"url": newEchoEndpoint(t, http.StatusInternalServerError).URL}),
		Alerts: &api.JobAlerts{PagerDuty: []api.PagerDutyTarget{{RoutingKey: `{{secret "pd-key"}}`}}}}
	if _, err := s.CreateJob(ctx, "otto", j); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	if _, err := s.RunJob(ctx, "otto", "g", "paged", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	if ev := pd.next(t); ev.RoutingKey != "0123456789abcdef0123456789abcdef" {
		t.Errorf("PagerDuty got routing key %q, want the secret's value", ev.RoutingKey)
	}
	wantAPIError(t, s.DeleteSecret(ctx, "admin", "pd-key"), api.CodeConflict, "")
}
