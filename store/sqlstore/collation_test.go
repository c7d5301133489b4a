package sqlstore_test

import (
	"testing"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestMySQLTablesConvertToNoPad opens a store on a MySQL database whose
// tables an older version created in the PAD SPACE collation utf8mb4_bin,
// where "a" and "a " are one key: the store's tables and a component's are
// converted to the server's NO PAD binary collation, and the two keys are
// then distinct.
func TestMySQLTablesConvertToNoPad(t *testing.T) {
	t.Parallel()
	url := dbtest.MySQLURL(t)
	old := open(t, url, nil)
	if err := old.MigrateComponent(t.Context(), "notes", []sqlstore.Migration{notesV1}); err != nil {
		t.Fatal(err)
	}
	db := old.DB()
	tables := func() map[string]string {
		t.Helper()
		rows, err := db.QueryContext(t.Context(), `SELECT TABLE_NAME, TABLE_COLLATION FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var name, collation string
			if err := rows.Scan(&name, &collation); err != nil {
				t.Fatal(err)
			}
			out[name] = collation
		}
		return out
	}
	before := tables()
	if len(before) < 5 {
		t.Fatalf("tables = %v, want the store's and the component's", before)
	}
	for name := range before {
		if _, err := db.ExecContext(t.Context(), "ALTER TABLE "+name+" CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
			t.Fatal(err)
		}
	}

	reopened := open(t, url, nil)
	if err := reopened.MigrateComponent(t.Context(), "notes", []sqlstore.Migration{notesV1}); err != nil {
		t.Fatal(err)
	}
	for name, collation := range tables() {
		if collation != "utf8mb4_nopad_bin" && collation != "utf8mb4_0900_bin" {
			t.Errorf("table %s has collation %s after the reopen, want a NO PAD binary one", name, collation)
		}
	}
	for _, k := range []store.Key{{Group: "g", Name: "trail"}, {Group: "g", Name: "trail "}} {
		if err := reopened.JobUpsert(t.Context(), &store.JobUpsertParams{Job: store.JobRecord{Key: k, Durable: true}}); err != nil {
			t.Errorf("JobUpsert(%q): %v", k, err)
		}
	}
}
