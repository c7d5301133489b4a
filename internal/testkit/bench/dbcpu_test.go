package bench

import (
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	_ "github.com/jackc/pgx/v5/stdlib"
)

func TestParseStatReadsANameWithParentheses(t *testing.T) {
	t.Parallel()
	line := []byte("42 (post (gres)) S 1 42 42 0 -1 4194304 10 0 0 0 7 3 5 2 20 0 1 0 100 0 0")
	name, fields, ok := parseStat(line)
	if !ok || name != "post (gres)" {
		t.Fatalf("parseStat = %q, %v; want the name with its parentheses", name, ok)
	}
	if got := []string{string(fields[11]), string(fields[12]), string(fields[13]), string(fields[14])}; !slices.Equal(got, []string{"7", "3", "5", "2"}) {
		t.Errorf("utime, stime, cutime, cstime = %v, want 7 3 5 2", got)
	}
	if _, _, ok := parseStat([]byte("42 (short) S 1")); ok {
		t.Error("parseStat accepted a line without the CPU fields")
	}
}

func TestDBServerNamesOnlyForThisMachine(t *testing.T) {
	t.Parallel()
	for url, want := range map[string][]string{
		"postgres://u@127.0.0.1:5432/test":        {"postgres"},
		"postgresql://u@localhost/test":           {"postgres"},
		"postgres:///test?host=/var/run/postgres": {"postgres"},
		"mysql://root@[::1]:3306/test":            {"mariadbd", "mysqld"},
		"postgres://u@db.example.com:5432/test":   nil,
		"mysql://root@10.0.0.5:3306/test":         nil,
		"sqlite:chime.db":                         nil,
	} {
		if got := dbServerNames(url); !slices.Equal(got, want) {
			t.Errorf("dbServerNames(%q) = %v, want %v", url, got, want)
		}
	}
}

// TestDBServerCPUSeesWorkOfTheServer has the local PostgreSQL server count
// to ten million, in a connection that then closes, and reads its CPU
// before and after: the work shows, although the backend that did it is
// gone by the second reading.
func TestDBServerCPUSeesWorkOfTheServer(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	names := dbServerNames(url)
	if names == nil {
		t.Skipf("PostgreSQL at %s is not on this machine", url)
	}
	before, ok := dbServerCPU(names...)
	if !ok {
		t.Skip("no PostgreSQL process is visible in /proc: the server runs elsewhere")
	}
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM generate_series(1, 10000000)").Scan(&n); err != nil || n != 10_000_000 {
		t.Fatalf("counting: %d, %v", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the postmaster reaps the backend
	after, _ := dbServerCPU(names...)
	if spent := after - before; spent < 50*time.Millisecond {
		t.Errorf("the server's CPU grew by %s while it counted to ten million; want at least 50ms", spent)
	}
}
