package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestLoginSavedToken follows a session from chime login to chime logout:
// the token is saved readable by its owner alone, under the server's URL,
// used when neither --token nor CHIME_TOKEN is given, and removed with
// the session by chime logout.
func TestLoginSavedToken(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	other := servertest.Start(t, nil)
	configHome := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": configHome}
	run := func(stdin string, args ...string) (string, string, error) {
		t.Helper()
		return execChimeEnv(t, testEnv(env), strings.NewReader(stdin), args...)
	}
	path := filepath.Join(configHome, "chime", "credentials.yaml")

	// Before any login, the commands have no token to send.
	_, _, err := run("", "jobs", "list", "--server", srv.URL)
	if !apiclient.IsCode(err, api.CodeUnauthenticated) {
		t.Fatalf("chime jobs list before login: %v, want unauthenticated", err)
	}
	for _, s := range []*servertest.Server{srv, other} {
		if _, _, err := run(s.AdminPassword+"\n", "login", "--server", s.URL, "-u", "admin", "--password-stdin"); err != nil {
			t.Fatalf("chime login %s: %v", s.URL, err)
		}
	}
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", p, fi.Mode(), err, want)
		}
	}
	creds, err := loadCredentials(path)
	if err != nil || len(creds.Servers) != 2 || creds.Servers[srv.URL].Token == creds.Servers[other.URL].Token {
		t.Fatalf("the credentials hold %+v, %v; want one session for each of the two servers", creds, err)
	}

	// The saved token is used…
	out, _, err := run("", "jobs", "list", "--server", srv.URL)
	if err != nil || out != "no jobs\n" {
		t.Fatalf("chime jobs list with the saved token = %q, %v", out, err)
	}
	// …unless CHIME_TOKEN or --token says otherwise.
	env["CHIME_TOKEN"] = "not-a-token"
	if _, _, err := run("", "jobs", "list", "--server", srv.URL); !apiclient.IsCode(err, api.CodeUnauthenticated) {
		t.Errorf("chime jobs list with a bad CHIME_TOKEN: %v, want unauthenticated", err)
	}
	if _, _, err := run("", "jobs", "list", "--server", srv.URL, "--token", srv.AdminToken); err != nil {
		t.Errorf("chime jobs list with --token over a bad CHIME_TOKEN: %v", err)
	}
	delete(env, "CHIME_TOKEN")

	// Logging out ends the session on the server and forgets its token,
	// and only that server's.
	token := creds.Servers[srv.URL].Token
	out, _, err = run("", "logout", "--server", srv.URL)
	if want := "Logged out of " + srv.URL + ". Removed its token from " + path + ".\n"; err != nil || out != want {
		t.Errorf("chime logout = %q, %v; want %q", out, err, want)
	}
	if _, err := srv.Client.WithToken(token).Me(t.Context()); !apiclient.IsCode(err, api.CodeUnauthenticated) {
		t.Errorf("the session after chime logout: %v, want unauthenticated", err)
	}
	creds, err = loadCredentials(path)
	if _, ok := creds.Servers[srv.URL]; err != nil || ok || creds.Servers[other.URL].Token == "" {
		t.Errorf("the credentials after chime logout hold %+v, %v; want the other server's session alone", creds, err)
	}
	_, _, err = run("", "logout", "--server", srv.URL)
	if err == nil || !strings.Contains(err.Error(), "not logged in to "+srv.URL) {
		t.Errorf("a second chime logout: %v", err)
	}
	if out, _, err := run("", "nodes", "--server", other.URL); err != nil || !strings.Contains(out, "(answered this request)") {
		t.Errorf("chime nodes on the other server = %q, %v", out, err)
	}

	// A session that ended on the server is still removed from the file.
	if err := other.Client.WithToken(creds.Servers[other.URL].Token).Logout(t.Context()); err != nil {
		t.Fatal(err)
	}
	out, _, err = run("", "logout", "--server", other.URL)
	if !strings.HasPrefix(out, "The session had already ended. Removed its token") || err != nil {
		t.Errorf("chime logout of an ended session = %q, %v", out, err)
	}
}

func TestLoginJSON(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	env := testEnv(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})
	for _, format := range []string{"json", "yaml"} {
		out, stderr, err := execChimeEnv(t, env, strings.NewReader(srv.AdminPassword+"\n"),
			"login", "--server", srv.URL, "-u", "admin", "--password-stdin", "-o", format)
		if err != nil || stderr != "" {
			t.Fatalf("chime login -o %s: %v, %q", format, err, stderr)
		}
		if !strings.Contains(out, `"user": "admin"`) && !strings.Contains(out, "user: admin\n") {
			t.Errorf("chime login -o %s printed %q, want the session", format, out)
		}
	}
}

func TestCredentialsPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/ann"}, "/x/cfg/chime/credentials.yaml", ""},
		{"HOME", map[string]string{"HOME": "/home/ann"}, "/home/ann/.config/chime/credentials.yaml", ""},
		{"relative XDG_CONFIG_HOME", map[string]string{"XDG_CONFIG_HOME": "cfg"}, "", `XDG_CONFIG_HOME "cfg": want an absolute path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := credentialsPath(testEnv(tt.env))
			if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("credentialsPath = %q, %v; want %q, %q", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
