package sqlstore_test

import (
	"context"
	"errors"
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
// for creating jobs. A new job with one trigger (JobWrite) is one
// statement with no BEGIN or COMMIT, once the rows of its paused groups
// exist; the first job of a group finds them missing, stores nothing, and
// takes the transaction that creates them. A batch of 1,000 jobs
// (JobsInsert) takes one round trip for the paused groups, one INSERT
// each for the jobs and the triggers, and the notification, between
// BEGIN and COMMIT: not a thousand times as many.
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
	inTx := []string{"begin", "SELECT kind, group_name,", "INSERT INTO chime_paused_groups", "INSERT INTO chime_paused_groups",
		"INSERT INTO chime_paused_groups", "SELECT kind, group_name,", "INSERT INTO chime_jobs", "INSERT INTO chime_triggers",
		"SELECT pg_notify($1, $2)", "commit"}
	trace.take()
	write("first")
	if got, want := trace.take(), append([]string{"WITH p AS"}, inTx...); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("JobWrite of the first job of its groups sent %d statements %q, want %d: %q", len(got), got, len(want), want)
	}
	write("second")
	if got, want := trace.take(), []string{"WITH p AS"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("JobWrite of a new job sent %d statements %q, want %d: %q", len(got), got, len(want), want)
	}
	if err := s.JobsInsert(ctx, &store.JobsInsertParams{Jobs: []store.JobInsert{newJob("third")}}); err != nil {
		t.Fatalf("JobsInsert: %v", err)
	}
	if got, want := trace.take(), []string{"WITH p AS"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("JobsInsert of one job sent %d statements %q, want %d: %q", len(got), got, len(want), want)
	}
	taken := newJob("second")
	taken.Job.Key.Name = "another"
	taken.Triggers[0].JobKey = taken.Job.Key
	if _, err := s.JobWrite(ctx, &store.JobWriteParams{Job: taken.Job, Triggers: taken.Triggers}); !errors.Is(err, store.ErrTriggerExists) ||
		!strings.Contains(err.Error(), "g.second") {
		t.Errorf("JobWrite of a new job with a taken trigger key: %v, want ErrTriggerExists naming g.second", err)
	}
	if _, err := s.JobGet(ctx, taken.Job.Key); !errors.Is(err, store.ErrJobNotFound) {
		t.Errorf("JobGet of the refused job: %v, want ErrJobNotFound", err)
	}
	trace.take()
	one := inTx[5:]
	one = append([]string{"begin"}, one...)

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
