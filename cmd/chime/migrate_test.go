package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

func TestMigrate(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			// The first run creates the tables, the second finds them up
			// to date; both print the same versions.
			for run := range 2 {
				out, stderr, err := execChime(t, "", "migrate", "--database-url", url)
				if err != nil {
					t.Fatalf("run %d: chime migrate: %v\n%s", run, err, stderr)
				}
				if !strings.Contains(out, "("+db.Dialect+", tables chime_*) is up to date.") {
					t.Errorf("run %d: output does not name the dialect and prefix:\n%s", run, out)
				}
				for _, want := range []string{
					fmt.Sprintf(`(?m)^store +%d +`, sqlstore.SchemaVersion),
					`(?m)^history +5 +`,
					`(?m)^runner +4 +`,
					`(?m)^auth +6 +`,
					`(?m)^dispatch +4 +`,
					`(?m)^catalog +1 +`,
					`(?m)^livelog +[1-9]\d* +`,
					`(?m)^secrets +[1-9]\d* +`,
					`(?m)^versions +[1-9]\d* +`,
					`(?m)^pool +1 +`,
					`(?m)^shard +1 +`,
					`(?m)^workflow +1 +`,
					`(?m)^outbox +1 +`,
				} {
					if !regexp.MustCompile(want).MatchString(out) {
						t.Errorf("run %d: output does not match %s:\n%s", run, want, out)
					}
				}
				applied := strings.Count(stderr, "applied schema migration")
				if run == 0 && applied < 4 || run == 1 && applied != 0 {
					t.Errorf("run %d: %d migrations logged as applied:\n%s", run, applied, stderr)
				}
			}
		})
	}
}

func TestMigrateErrors(t *testing.T) {
	t.Parallel()
	_, _, err := execChime(t, "", "migrate", "--database-url", "oracle://db/chime")
	if err == nil || !strings.Contains(err.Error(), "oracle") {
		t.Errorf("chime migrate with an unsupported URL: error = %v, want one naming the scheme", err)
	}
	_, _, err = execChime(t, "", "migrate", "--database-url", "sqlite:"+t.TempDir()+"/missing/dir/chime.db")
	if err == nil || !strings.Contains(err.Error(), "missing/dir") {
		t.Errorf("chime migrate in a missing directory: error = %v, want one naming the path", err)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://chime:s3cret@db/chime?sslmode=disable": "postgres://chime:xxxxx@db/chime?sslmode=disable",
		"mysql://root@tcp(db:3306)/chime":                  "mysql://root@tcp(db:3306)/chime",
		"sqlite:chime.db":                                  "sqlite:chime.db",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
