package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestForgedFormCannotPauseAJob logs an admin in to the console, then has
// the same browser open a page of another origin on the same host (so the
// same site: the SameSite=Strict session cookie is sent along) whose form
// posts to the job's pause route, as a cross-site request forgery would.
// The server refuses it and the job stays active.
func TestForgedFormCannotPauseAJob(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	target := targetServer(t, http.StatusOK)
	if _, err := srv.Client.CreateJob(ctx, cronJob(t, "csrf", "victim", target.URL, "0 0 3 * * ?")); err != nil {
		t.Fatal(err)
	}
	pause := srv.URL + "/api/v1/jobs/csrf/victim/pause"
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// A text/plain form can carry a JSON-looking body; it posts itself.
		fmt.Fprintf(w, `<!doctype html><title>prize</title>
<form method="POST" action=%q enctype="text/plain"><input type="hidden" name='{"x":"' value='"}'></form>
<script>document.forms[0].submit()</script>`, pause)
	}))
	t.Cleanup(evil.Close)
	if !strings.HasPrefix(evil.URL, "http://127.0.0.1:") || !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("want both servers on 127.0.0.1 (same site, other origin): %s, %s", evil.URL, srv.URL)
	}

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/jobs", servertest.AdminName, srv.AdminPassword)
	p.Do("opening the forging page "+evil.URL, chromedp.Navigate(evil.URL))
	// Either the browser shows the server's answer to the form, or (when
	// the server accepts it: 204 leaves the page as it is) the job is
	// paused. The loop polls both; no event tells which comes.
	deadline := time.Now().Add(30 * time.Second)
	for {
		job, err := srv.Client.GetJob(ctx, "csrf", "victim")
		if err != nil {
			t.Fatal(err)
		}
		if job.Paused {
			t.Fatal("the forged form paused the job")
		}
		answered := browsertest.Get(p, "reading the page", chromedp.Evaluate[bool](
			`location.href.includes('/pause') && document.body !== null && document.body.innerText.length > 0`))
		if answered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the forged form got no answer")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if answer := p.Text("body"); !strings.Contains(answer, "cross-origin POST refused") {
		t.Errorf("the forged form's answer is %q; want the cross-origin refusal", answer)
	}

	// The console itself, in the same browser, still pauses it.
	p.Navigate(srv.URL + "/#/jobs/csrf/victim")
	p.ClickText("button", "Pause")
	deadline = time.Now().Add(30 * time.Second)
	for {
		job, err := srv.Client.GetJob(ctx, "csrf", "victim")
		if err != nil {
			t.Fatal(err)
		}
		if job.Paused {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the console's Pause button did not pause the job")
		}
		time.Sleep(100 * time.Millisecond) // polls the API: nothing to wait on in the browser
	}
}
