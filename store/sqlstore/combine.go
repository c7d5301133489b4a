package sqlstore

import (
	"context"
	"slices"
	"sync"

	"github.com/chime-scheduler/chime/store"
)

// maxCombined bounds the new jobs that one combined transaction stores.
const maxCombined = 1000

// insertQueue gathers the new jobs that callers write one at a time
// (JobWrite of a new job, JobsInsert of one) while an earlier write is in
// flight, so that the next transaction stores them all: one commit, one
// WAL flush and one notification for many callers, as group commit in a
// database does. A caller alone writes at once, in a transaction of its
// own.
type insertQueue struct {
	mu      sync.Mutex
	pending []*insertRequest
	// writing is true while a goroutine of writeQueued is running.
	writing bool
}

// insertRequest is one caller's new job, waiting in an insertQueue.
type insertRequest struct {
	job *store.JobInsert
	// done receives the outcome of the job's write, once.
	done chan error
}

// insertCombined stores one new job as insertJob does, in a transaction
// that may also store the jobs of other callers: the jobs written
// together are all stored, or else each is written again on its own, so
// that each caller gets its own outcome (a taken key, a missing calendar)
// and no caller's error undoes another's job. The write does not end with
// ctx once it has begun: ctx ending before that withdraws the job.
func (s *Store) insertCombined(ctx context.Context, e *store.JobInsert) error {
	r := &insertRequest{job: e, done: make(chan error, 1)}
	q := &s.inserts
	q.mu.Lock()
	if s.closed.Load() {
		q.mu.Unlock()
		return store.ErrClosed
	}
	q.pending = append(q.pending, r)
	if !q.writing {
		q.writing = true
		s.background.Go(s.writeQueued)
	}
	q.mu.Unlock()
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
	}
	q.mu.Lock()
	if i := slices.Index(q.pending, r); i >= 0 {
		q.pending = slices.Delete(q.pending, i, i+1)
		q.mu.Unlock()
		return ctx.Err()
	}
	q.mu.Unlock()
	return <-r.done // taken into a write: its outcome is on its way
}

// writeQueued writes the queued jobs, as many at a time as have gathered,
// until none is left. It runs on a goroutine of the store's background;
// Close ends its writes.
func (s *Store) writeQueued() {
	q := &s.inserts
	for {
		q.mu.Lock()
		n := min(len(q.pending), maxCombined)
		if n == 0 {
			q.writing = false
			q.mu.Unlock()
			return
		}
		batch := slices.Clone(q.pending[:n])
		q.pending = slices.Delete(q.pending, 0, n)
		q.mu.Unlock()
		s.writeTogether(s.stop, batch)
	}
}

// writeTogether stores the jobs of batch in one transaction and tells
// each request its outcome. When that transaction fails, each half of
// batch is written the same way, down to single jobs, whose errors are
// their own: a refused job costs the others a few transactions, not one
// each.
func (s *Store) writeTogether(ctx context.Context, batch []*insertRequest) {
	if len(batch) == 1 {
		batch[0].done <- s.insertJob(ctx, batch[0].job)
		return
	}
	jobs := make([]store.JobInsert, len(batch))
	for i, r := range batch {
		jobs[i] = *r.job
	}
	if err := s.write(ctx, "inserting jobs", func(tx *txn) error { return tx.insertJobs(jobs) }); err == nil {
		for _, r := range batch {
			r.done <- nil
		}
		return
	}
	half := len(batch) / 2
	s.writeTogether(ctx, batch[:half])
	s.writeTogether(ctx, batch[half:])
}

// insertJob stores one new job: in one statement where insertOneStatement
// can, in insertJobs' transaction otherwise, naming the key that is taken
// when one is.
func (s *Store) insertJob(ctx context.Context, e *store.JobInsert) error {
	if done, err := s.insertOneStatement(ctx, e); done || err != nil {
		return err
	}
	return s.writeJobs(ctx, []store.JobInsert{*e})
}
