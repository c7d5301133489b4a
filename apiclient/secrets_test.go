package apiclient_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/servertest"
)

// rawGet returns the body of a GET as the API sent it.
func rawGet(t *testing.T, base, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestSecretsAreWriteOnlyAndViewersReadJobsMasked runs a real server: no
// answer of the secrets routes holds a value, viewers and operators cannot
// read them, and a viewer reads a job whose spec holds literal credentials
// with them masked, where an operator reads it whole.
func TestSecretsAreWriteOnlyAndViewersReadJobsMasked(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv := servertest.Start(t, &servertest.Options{Config: server.Config{SecretKey: secret.GenerateKey()}})
	admin := srv.Client
	const value = "value-that-must-not-come-back"
	sessions := map[api.Role]string{api.RoleAdmin: srv.AdminToken}
	for _, u := range []api.User{
		{Name: "vera", Role: api.RoleViewer, Password: "vera's long password"},
		{Name: "otto", Role: api.RoleOperator, Password: "otto's long password"},
	} {
		if _, err := admin.CreateUser(ctx, u); err != nil {
			t.Fatal(err)
		}
		s, err := admin.WithToken("").Login(ctx, u.Name, u.Password)
		if err != nil {
			t.Fatal(err)
		}
		sessions[u.Role] = s.Token
	}

	put, created, err := admin.PutSecret(ctx, "billing-token", value)
	if err != nil || !created || put.KeyID == "" {
		t.Fatalf("PutSecret = %+v, created %v, %v; want it created, with a key ID and no value", put, created, err)
	}
	for _, path := range []string{"/api/v1/secrets", "/api/v1/secrets/billing-token"} {
		status, body := rawGet(t, srv.URL, path, srv.AdminToken)
		if status != http.StatusOK || strings.Contains(body, value) || strings.Contains(body, `"value"`) {
			t.Errorf("GET %s as admin: %d %s; want 200 without a value", path, status, body)
		}
		for _, role := range []api.Role{api.RoleViewer, api.RoleOperator} {
			if status, body := rawGet(t, srv.URL, path, sessions[role]); status != http.StatusForbidden || strings.Contains(body, value) {
				t.Errorf("GET %s as %s: %d %s; want 403", path, role, status, body)
			}
		}
	}

	job := api.Job{Group: "billing", Name: "sync", Type: "http",
		HTTP: json.RawMessage(`{"url":"https://billing.example.com/sync?api_key=legacy-key&page=1",` +
			`"headers":{"Authorization":"Bearer {{secret \"billing-token\"}}","Cookie":"sid=legacy-cookie","Accept":"text/plain"}}`),
		Alerts: &api.JobAlerts{Webhooks: []string{"https://hooks.slack.com/services/T0/B0/legacy-path"}}}
	if _, err := admin.CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	leaks := []string{"legacy-key", "legacy-cookie", "legacy-path", value}
	for _, path := range []string{"/api/v1/jobs/billing/sync", "/api/v1/jobs"} {
		status, body := rawGet(t, srv.URL, path, sessions[api.RoleViewer])
		if status != http.StatusOK {
			t.Fatalf("GET %s as a viewer: %d %s", path, status, body)
		}
		for _, leak := range leaks {
			if strings.Contains(body, leak) {
				t.Errorf("GET %s as a viewer holds %q: %s", path, leak, body)
			}
		}
		for _, want := range []string{`api_key=****\u0026page=1`, `"Cookie":"****"`, `Bearer {{secret \"billing-token\"}}`, `"Accept":"text/plain"`, `https://hooks.slack.com/****`} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s as a viewer lacks %s: %s", path, want, body)
			}
		}
		_, body = rawGet(t, srv.URL, path, sessions[api.RoleOperator])
		for _, want := range leaks[:3] {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s as an operator lacks %q: %s", path, want, body)
			}
		}
	}
}
