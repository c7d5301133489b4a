package server

import (
	"encoding/json"
	"testing"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// failTriggerInserts makes the database refuse to insert a trigger row
// named "boom", with a trigger of the database itself: the store then
// fails in the middle of a job write, after it wrote the job row, deleted
// and replaced triggers and inserted the triggers listed before "boom".
func failTriggerInserts(t *testing.T, st *sqlstore.Store) {
	t.Helper()
	var stmts []string
	switch st.Dialect() {
	case sqlstore.SQLite:
		stmts = []string{`CREATE TRIGGER chime_test_boom BEFORE INSERT ON chime_triggers
			WHEN NEW.trigger_name = 'boom' BEGIN SELECT RAISE(ABORT, 'boom refused'); END`}
	case sqlstore.Postgres:
		stmts = []string{
			`CREATE FUNCTION chime_test_boom() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF NEW.trigger_name = 'boom' THEN RAISE EXCEPTION 'boom refused'; END IF;
				RETURN NEW;
			END $$`,
			`CREATE TRIGGER chime_test_boom BEFORE INSERT ON chime_triggers
			FOR EACH ROW EXECUTE FUNCTION chime_test_boom()`,
		}
	case sqlstore.MySQL:
		stmts = []string{`CREATE TRIGGER chime_test_boom BEFORE INSERT ON chime_triggers FOR EACH ROW
			BEGIN
				IF NEW.trigger_name = 'boom' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom refused'; END IF;
			END`}
	}
	for _, q := range stmts {
		if _, err := st.DB().ExecContext(t.Context(), q); err != nil {
			t.Fatalf("creating the failing database trigger: %v", err)
		}
	}
}

// TestPutJobFailingInTheStoreChangesNothing checks that a PUT the store
// fails part-way stores the old job or the new one, never a mix: the
// issue's half-written job (its record replaced, some triggers written,
// the pause not applied) cannot happen, and no audit entry claims a change.
func TestPutJobFailingInTheStoreChangesNothing(t *testing.T) {
	t.Parallel()
	forEachDB(t, func(t *testing.T, url string) {
		ctx := t.Context()
		s := newServer(t, url)
		failTriggerInserts(t, s.store)

		old := httpJob(t, "g", "j", "https://example.com/old")
		old.Triggers = []api.Trigger{
			{Name: "kept", Schedule: cronSchedule("0 0 2 * * ?")},
			{Name: "dropped", Schedule: cronSchedule("0 0 3 * * ?")},
		}
		if _, _, err := s.PutJob(ctx, "alice", old, 0, nil); err != nil {
			t.Fatalf("PutJob of the old job: %v", err)
		}
		before, err := s.GetJob(ctx, "g", "j")
		if err != nil {
			t.Fatalf("GetJob: %v", err)
		}
		audit := func() []api.AuditEntry {
			t.Helper()
			l, err := s.ListAudit(ctx, api.AuditQuery{Target: jobTarget(chime.NewJobKey("g", "j"))})
			if err != nil {
				t.Fatalf("ListAudit: %v", err)
			}
			return l.Entries
		}
		auditBefore := audit()

		// The new job changes the record, replaces one trigger, drops one,
		// adds two (the second of which the database refuses) and pauses.
		changed := httpJob(t, "g", "j", "https://example.com/new")
		changed.Description = "changed"
		changed.Paused = true
		changed.Triggers = []api.Trigger{
			{Name: "kept", Schedule: cronSchedule("0 30 2 * * ?")},
			{Name: "added", Schedule: cronSchedule("0 0 4 * * ?")},
			{Name: "boom", Schedule: cronSchedule("0 0 5 * * ?")},
		}
		for _, ifMatch := range []int64{0, before.Version} {
			if _, _, err := s.PutJob(ctx, "alice", changed, ifMatch, nil); err == nil {
				t.Fatalf("PutJob (If-Match %d) with a trigger the database refuses succeeded", ifMatch)
			}
			after, err := s.GetJob(ctx, "g", "j")
			if err != nil {
				t.Fatalf("GetJob: %v", err)
			}
			if jobJSON(t, after) != jobJSON(t, before) {
				t.Errorf("the failed PUT (If-Match %d) changed the job\n got %s\nwant %s", ifMatch, jobJSON(t, after), jobJSON(t, before))
			}
		}

		// A new job fails the same way: nothing of it is stored.
		fresh := changed
		fresh.Name = "fresh"
		if _, err := s.CreateJob(ctx, "alice", fresh); err == nil {
			t.Fatal("CreateJob with a trigger the database refuses succeeded")
		}
		if _, _, err := s.PutJob(ctx, "alice", fresh, 0, nil); err == nil {
			t.Fatal("PutJob of a new job with a trigger the database refuses succeeded")
		}
		_, err = s.GetJob(ctx, "g", "fresh")
		wantAPIError(t, err, api.CodeNotFound, "")
		if got := audit(); len(got) != len(auditBefore) {
			t.Errorf("failed writes added audit entries: %+v", got[:len(got)-len(auditBefore)])
		}

		// Without the refused trigger the same PUT is stored whole.
		changed.Triggers = changed.Triggers[:2]
		got, _, err := s.PutJob(ctx, "alice", changed, before.Version, nil)
		if err != nil {
			t.Fatalf("PutJob without the refused trigger: %v", err)
		}
		if len(got.Triggers) != 2 || !got.Paused || got.Description != "changed" {
			t.Fatalf("stored job = %s, want the two triggers, paused, described", jobJSON(t, got))
		}
		for _, tr := range got.Triggers {
			if tr.State != "PAUSED" {
				t.Errorf("trigger %s is %s, want PAUSED: the pause is part of the write", tr.Name, tr.State)
			}
		}
	})
}

// jobJSON is a job's JSON without its status, which a read computes anew.
func jobJSON(t *testing.T, j *api.Job) string {
	t.Helper()
	c := *j
	c.Status = nil
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
