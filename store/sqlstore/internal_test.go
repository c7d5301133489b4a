package sqlstore

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

func TestRender(t *testing.T) {
	t.Parallel()
	const q = `SELECT {now} FROM {p}nodes WHERE a = ? AND b = ?{share}{wake}`
	tests := []struct {
		d    Dialect
		want string
	}{
		{Postgres, `SELECT ((EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT * 1000) FROM x_nodes WHERE a = $1 AND b = $2 FOR SHARE RETURNING state, next_fire_time`},
		{MySQL, `SELECT (TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000) FROM x_nodes WHERE a = ? AND b = ? LOCK IN SHARE MODE`},
		{SQLite, `SELECT (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000) FROM x_nodes WHERE a = ? AND b = ?`},
	}
	for _, tc := range tests {
		d, err := dialectFor(tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.render("x_", q); got != tc.want {
			t.Errorf("%s: render =\n%s\nwant\n%s", tc.d, got, tc.want)
		}
	}
	if _, err := dialectFor("oracle"); err == nil {
		t.Errorf("dialectFor(oracle) succeeded")
	}
}

// TestRenderIndexHint checks the {use:NAME} token: FORCE INDEX of the
// prefixed index on MySQL, nothing elsewhere.
func TestRenderIndexHint(t *testing.T) {
	t.Parallel()
	const q = `SELECT 1 FROM {p}triggers t{use:triggers_job} WHERE EXISTS (SELECT 1 FROM {p}executions e{use:executions_by_job})`
	tests := []struct {
		d    Dialect
		want string
	}{
		{MySQL, `SELECT 1 FROM x_triggers t FORCE INDEX (x_triggers_job) WHERE EXISTS (SELECT 1 FROM x_executions e FORCE INDEX (x_executions_by_job))`},
		{Postgres, `SELECT 1 FROM x_triggers t WHERE EXISTS (SELECT 1 FROM x_executions e)`},
		{SQLite, `SELECT 1 FROM x_triggers t WHERE EXISTS (SELECT 1 FROM x_executions e)`},
	}
	for _, tc := range tests {
		d, err := dialectFor(tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.render("x_", q); got != tc.want {
			t.Errorf("%s: render =\n%s\nwant\n%s", tc.d, got, tc.want)
		}
	}
}

func TestMySQLConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url                       string
		user, pass, net, addr, db string
		timeout                   time.Duration
	}{
		{"mysql://chime:p%40ss%2Fw:rd@db.example:3307/sched?timeout=5s", "chime", "p@ss/w:rd", "tcp", "db.example:3307", "sched", 5 * time.Second},
		{"mysql://root@db.example/sched", "root", "", "tcp", "db.example:3306", "sched", 0},
		{"mysql://root@/sched?socket=/run/mysqld/mysqld.sock", "root", "", "unix", "/run/mysqld/mysqld.sock", "sched", 0},
	}
	for _, tc := range tests {
		cfg, err := mysqlConfig(tc.url)
		if err != nil {
			t.Errorf("mysqlConfig(%q): %v", tc.url, err)
			continue
		}
		if cfg.User != tc.user || cfg.Passwd != tc.pass || cfg.Net != tc.net || cfg.Addr != tc.addr ||
			cfg.DBName != tc.db || cfg.Timeout != tc.timeout || !cfg.InterpolateParams || !cfg.ParseTime {
			t.Errorf("mysqlConfig(%q) = user %q pass %q %s(%s)/%s timeout %s interpolate %v",
				tc.url, cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName, cfg.Timeout, cfg.InterpolateParams)
		}
	}
	for _, bad := range []string{"mysql://root@host/", "mysql://root@host/a/b"} {
		if _, err := mysqlConfig(bad); err == nil {
			t.Errorf("mysqlConfig(%q) succeeded, want an error", bad)
		}
	}
}

func TestSQLitePath(t *testing.T) {
	t.Parallel()
	tests := []struct{ rest, path, query string }{
		{"data/chime.db", "data/chime.db", ""},
		{"//data/chime.db", "data/chime.db", ""},
		{"///var/lib/chime.db", "/var/lib/chime.db", ""},
		{"/var/lib/chime.db?_pragma=cache_size(-4000)", "/var/lib/chime.db", "_pragma=cache_size(-4000)"},
	}
	for _, tc := range tests {
		if path, query := sqlitePath(tc.rest); path != tc.path || query != tc.query {
			t.Errorf("sqlitePath(%q) = %q, %q; want %q, %q", tc.rest, path, query, tc.path, tc.query)
		}
	}
}

func TestInstants(t *testing.T) {
	t.Parallel()
	ok := []time.Time{{}, time.Date(1700, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2260, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := checkInstants("t", ok...); err != nil {
		t.Errorf("checkInstants(%v): %v", ok, err)
	}
	for _, bad := range []time.Time{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if err := checkInstants("t", bad); !errors.Is(err, errInvalid) {
			t.Errorf("checkInstants(%s) = %v, want errInvalid", bad, err)
		}
	}
	if got := boundNanos(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); got != math.MaxInt64 {
		t.Errorf("boundNanos(9999) = %d, want MaxInt64", got)
	}
	if got := boundNanos(time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)); got != math.MinInt64 {
		t.Errorf("boundNanos(1) = %d, want MinInt64", got)
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	if got := boundNanos(at); got != at.UnixNano() {
		t.Errorf("boundNanos(%s) = %d, want %d", at, got, at.UnixNano())
	}
}

func TestNotifyChannel(t *testing.T) {
	t.Parallel()
	long := notifyChannel(strings.Repeat("p", 32), "triggers", "some_schema", strings.Repeat("s", 200))
	if len(long) > 63 {
		t.Errorf("channel %q is %d bytes, want at most 63", long, len(long))
	}
	a, b := notifyChannel("chime_", "triggers", "public", "a"), notifyChannel("chime_", "triggers", "public", "b")
	c := notifyChannel("chime_", "triggers", "other", "a")
	d := notifyChannel("chime_", "dispatch", "public", "a")
	if a == b || a == c || a == d {
		t.Errorf("channels %q, %q, %q, %q are not distinct", a, b, c, d)
	}
}

func TestKeysWhere(t *testing.T) {
	t.Parallel()
	keys := []store.Key{{Group: "a", Name: "1"}, {Group: "b", Name: "2"}, {Group: "a", Name: "3"}}
	for _, tc := range []struct {
		dialect   Dialect
		wantWhere string
		wantArgs  string
	}{
		{dialect: MySQL, wantWhere: "((g = ? AND n IN (?, ?)) OR (g = ? AND n IN (?)))", wantArgs: "first a 1 3 b 2\n"},
		{dialect: SQLite, wantWhere: "((g = ? AND n IN (?, ?)) OR (g = ? AND n IN (?)))", wantArgs: "first a 1 3 b 2\n"},
		// One array of names a group.
		{dialect: Postgres, wantWhere: "((g = ? AND n = ANY(CAST(? AS TEXT[]))) OR (g = ? AND n = ANY(CAST(? AS TEXT[]))))", wantArgs: "first a [1 3] b [2]\n"},
	} {
		d, err := dialectFor(tc.dialect)
		if err != nil {
			t.Fatal(err)
		}
		where, args := d.keysWhere("g", "n", keys, []any{"first"})
		if where != tc.wantWhere {
			t.Errorf("%s: keysWhere = %s, want %s", tc.dialect, where, tc.wantWhere)
		}
		if got := fmt.Sprintln(args...); got != tc.wantArgs {
			t.Errorf("%s: keysWhere args = %q, want %q", tc.dialect, got, tc.wantArgs)
		}
	}
}
