package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestSecretsPage drives the admin's secrets page: a bad name is refused
// next to its field, a secret is created and its value, typed in the
// browser, reaches a job's request and never comes back to the page; its
// value is replaced; a secret a job uses cannot be deleted, an unused one
// can; the audit log shows it all. A viewer is refused the page and reads
// the job with its literal credential masked.
func TestSecretsPage(t *testing.T) {
	srv := servertest.Start(t, &servertest.Options{Config: server.Config{SecretKey: secret.GenerateKey()}})
	ctx := context.Background()
	var mu sync.Mutex
	var auths []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(target.Close)

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/secrets", servertest.AdminName, srv.AdminPassword)
	p.WaitText("main", "No secret yet.")

	// A bad name is refused next to its field; a good one is created.
	const first, second = "typed-in-the-browser-1", "typed-in-the-browser-2"
	p.ClickText("button", "New secret")
	p.Fill(`dialog input[name="name"]`, "billing token")
	p.Fill(`dialog input[name="value"]`, first)
	p.ClickText("dialog button", "Create secret")
	p.WaitText(`dialog .field[data-field="name"] .error`, "letters, digits")
	setText(p, `dialog input[name="name"]`, "billing-token")
	p.ClickText("dialog button", "Create secret")
	p.WaitText(`tr[data-secret="billing-token"]`, "admin")
	p.WaitText(`tr[data-secret="billing-token"]`, "nothing")

	// A job uses it: the value typed in the browser reaches the request.
	job := api.Job{Group: "billing", Name: "sync", Type: "http",
		HTTP: json.RawMessage(`{"url":"` + target.URL + `/sync?api_key=legacy-key-abc","headers":{"Authorization":"Bearer {{secret \"billing-token\"}}"}}`)}
	createJobs(t, srv, job)
	if _, err := srv.Client.RunJob(ctx, "billing", "sync", api.RunRequest{}); err != nil {
		t.Fatal(err)
	}
	e := waitExecution(t, srv, api.ExecutionQuery{JobGroup: "billing", JobName: "sync", Outcomes: []string{"succeeded", "failed"}})
	if e.Outcome != "succeeded" {
		t.Fatalf("the job's run: %+v; want it succeeded", e)
	}
	mu.Lock()
	got := append([]string(nil), auths...)
	mu.Unlock()
	if len(got) != 1 || got[0] != "Bearer "+first {
		t.Errorf("the job sent Authorization %q, want Bearer %s", got, first)
	}

	// Replace the value; the page never shows either.
	p.Route("/jobs") // and back: the page reads the secrets again
	p.Route("/secrets")
	p.WaitText(`tr[data-secret="billing-token"]`, "billing/sync")
	p.Click(`button[aria-label="Replace the value of secret billing-token"]`)
	p.Fill(`dialog input[name="value"]`, second)
	p.ClickText("dialog button", "Replace value")
	p.WaitText("#toasts", "Secret billing-token replaced.")
	if body := p.Text("body"); strings.Contains(body, first) || strings.Contains(body, second) {
		t.Errorf("the page shows a secret's value:\n%s", body)
	}
	list, err := srv.Client.ListSecrets(ctx)
	if err != nil || len(list) != 1 || list[0].UsedBy[0] != "billing/sync" {
		t.Fatalf("ListSecrets = %+v, %v", list, err)
	}

	// Used by a job, it cannot be deleted: the API's reason is shown.
	p.Click(`button[aria-label="Delete secret billing-token"]`)
	p.ClickText("dialog button", "Delete")
	p.WaitText(".toast.error", "is used by billing/sync")

	// An unused one can.
	p.ClickText("button", "New secret")
	p.Fill(`dialog input[name="name"]`, "spare")
	p.Fill(`dialog input[name="value"]`, "spare value")
	p.ClickText("dialog button", "Create secret")
	p.WaitText(`tr[data-secret="spare"]`, "nothing")
	p.Click(`button[aria-label="Delete secret spare"]`)
	p.ClickText("dialog button", "Delete")
	poll(p, "the deleted secret's row to go", `!document.querySelector('tr[data-secret="spare"]')`)
	poll(p, "the toasts to go before the screenshot", `!document.querySelector('.toast')`)
	p.Screenshot("secrets")

	p.Route("/audit")
	p.WaitText(`tr[data-action="secret.delete"]`, "secrets/spare")
	if n := p.Count(`tr[data-action="secret.set"]`); n != 3 {
		t.Errorf("the audit log shows %d secret.set entries, want 3 (create, replace, spare)", n)
	}
	if body := p.Text("body"); strings.Contains(body, first) || strings.Contains(body, second) {
		t.Errorf("the audit log shows a secret's value:\n%s", body)
	}

	// A viewer is refused the page, and reads the job's URL masked.
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "vera's long password"}); err != nil {
		t.Fatal(err)
	}
	v := b.NewPage(t)
	v.Login(srv.URL, "/secrets", "vera", "vera's long password")
	v.WaitText("main", "needs the admin role")
	if n := v.Count(`nav a[data-route="/secrets"]`); n != 0 {
		t.Errorf("a viewer's menu has %d links to the secrets page", n)
	}
	v.Route("/jobs/billing/sync")
	v.WaitText("main", "/sync?api_key=****")
	if body := v.Text("body"); strings.Contains(body, "legacy-key-abc") {
		t.Errorf("a viewer's job page shows the job's literal key:\n%s", body)
	}
}
