package sqlstore_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestMigrateFromSchemaV1 takes a database back to schema version 1 (the
// columns of later versions dropped, their migrations forgotten) with a
// job and a trigger stored in it, and opens it again: the migrations add
// the columns, and the rows stored before read as a job without meta and
// a trigger made by a schedule.
func TestMigrateFromSchemaV1(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			opts := &sqlstore.Options{SchedulerName: "sn"}
			s := open(t, url, opts)
			ctx := t.Context()
			jk := store.Key{Group: "g", Name: "j"}
			tk := store.Key{Group: "RETRY_TRIGGER", Name: "t"}
			if err := s.JobUpsert(ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: jk, Type: "noop", Durable: true,
				Data: []byte(`{"a":1}`), Meta: []byte(`{"gone":true}`)}}); err != nil {
				t.Fatalf("JobUpsert: %v", err)
			}
			next := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
			if err := s.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: store.TriggerRecord{Key: tk, JobKey: jk,
				Kind: "simple", Schedule: []byte(`{}`), MisfireInstruction: "SMART_POLICY", StartTime: next,
				NextFireTime: next, Data: []byte(`{"b":2}`), Origin: "retry", Meta: []byte(`{"gone":true}`)}}); err != nil {
				t.Fatalf("TriggerInsert: %v", err)
			}
			for _, stmt := range []string{
				"ALTER TABLE {p}triggers DROP COLUMN rearm_delay_ms",
				"ALTER TABLE {p}triggers DROP COLUMN trigger_meta",
				"ALTER TABLE {p}triggers DROP COLUMN origin",
				"ALTER TABLE {p}jobs DROP COLUMN job_meta",
				"DELETE FROM {p}schema_migrations WHERE version > 1",
			} {
				if _, err := s.DB().ExecContext(ctx, s.SQL(stmt)); err != nil {
					t.Fatalf("%s: %v", stmt, err)
				}
			}

			s2 := open(t, url, opts)
			var n, latest int
			if err := s2.DB().QueryRowContext(ctx, s2.SQL("SELECT COUNT(*), MAX(version) FROM {p}schema_migrations")).Scan(&n, &latest); err != nil {
				t.Fatalf("reading the migrations: %v", err)
			}
			if n != sqlstore.SchemaVersion || latest != sqlstore.SchemaVersion {
				t.Errorf("%d migrations up to version %d, want %d up to %d", n, latest, sqlstore.SchemaVersion, sqlstore.SchemaVersion)
			}
			j, err := s2.JobGet(ctx, jk)
			if err != nil {
				t.Fatalf("JobGet: %v", err)
			}
			if string(j.Data) != `{"a":1}` || j.Meta != nil {
				t.Errorf("job: data %s meta %s, want {\"a\":1} and no meta", j.Data, j.Meta)
			}
			tr, err := s2.TriggerGet(ctx, tk)
			if err != nil {
				t.Fatalf("TriggerGet: %v", err)
			}
			if string(tr.Data) != `{"b":2}` || tr.Origin != "" || tr.Meta != nil || !tr.NextFireTime.Equal(next) {
				t.Errorf("trigger: data %s origin %q meta %s next %s, want {\"b\":2}, no origin or meta, %s",
					tr.Data, tr.Origin, tr.Meta, tr.NextFireTime, next)
			}
			tr.Origin, tr.Meta = "manual", []byte(`{"id":"x"}`)
			if err := s2.TriggerInsert(ctx, &store.TriggerInsertParams{Trigger: *tr, Replace: true}); err != nil {
				t.Fatalf("TriggerInsert after the migration: %v", err)
			}
			if got, err := s2.TriggerGet(ctx, tk); err != nil || got.Origin != "manual" || string(got.Meta) != `{"id":"x"}` {
				t.Errorf("trigger after the migration: %+v, %v; want origin manual and its meta", got, err)
			}
		})
	}
}
