package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// statements records the text of every statement a pgx connection sends,
// transaction control included.
type statements struct {
	mu   sync.Mutex
	sent []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, data.SQL)
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// take returns the statements sent since the last take, each cut to its
// first words.
func (s *statements) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.sent))
	for i, q := range s.sent {
		out[i] = strings.Join(strings.Fields(q)[:min(3, len(strings.Fields(q)))], " ")
	}
	s.sent = nil
	return out
}

// TestCreatingJobsStatements counts the statements PostgreSQL receives
// for creating jobs: a new job with one trigger (JobWrite) takes one
// round trip for the paused groups, one INSERT each for the job and the
// trigger, and the notification, between BEGIN and COMMIT; a batch of
// 1,000 jobs (JobsInsert) takes the same statements, not a thousand
// times as many.
func TestCreatingJobsStatements(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	trace := &statements{}
	cfg.Tracer = trace
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { _ = db.Close() })
	s, err := sqlstore.OpenDB(t.Context(), db, sqlstore.Postgres, &sqlstore.Options{Logger: quiet()})
	if err != nil {
		t.Fatalf("OpenDB: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	next := time.Now().Add(time.Hour)
	newJob := func(name string) store.JobInsert {
		jk := store.Key{Group: "g", Name: name}
		return store.JobInsert{
			Job: store.JobRecord{Key: jk, Type: "noop"},
			Triggers: []store.TriggerRecord{{Key: jk, JobKey: jk, Kind: "simple", Schedule: []byte(`{}`),
				MisfireInstruction: "SMART_POLICY", StartTime: next, NextFireTime: next}},
		}
	}
	write := func(name string) {
		t.Helper()
		e := newJob(name)
		if _, err := s.JobWrite(ctx, &store.JobWriteParams{Job: e.Job, Triggers: e.Triggers}); err != nil {
			t.Fatalf("JobWrite(%s): %v", name, err)
		}
	}
	write("first") // creates the rows of the paused groups
	trace.take()
	write("second")
	one := []string{"begin", "SELECT kind, group_name,", "INSERT INTO chime_jobs", "INSERT INTO chime_triggers",
		"SELECT pg_notify($1, $2)", "commit"}
	if got := trace.take(); fmt.Sprint(got) != fmt.Sprint(one) {
		t.Errorf("JobWrite of a new job sent %d statements %q, want %d: %q", len(got), got, len(one), one)
	}

	batch := make([]store.JobInsert, 1000)
	for i := range batch {
		batch[i] = newJob(fmt.Sprintf("batch-%d", i))
	}
	if err := s.JobsInsert(ctx, &store.JobsInsertParams{Jobs: batch}); err != nil {
		t.Fatalf("JobsInsert: %v", err)
	}
	if got := trace.take(); fmt.Sprint(got) != fmt.Sprint(one) {
		t.Errorf("JobsInsert of 1,000 jobs sent %d statements %q, want %d: %q", len(got), got, len(one), one)
	}
}
