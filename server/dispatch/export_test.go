package dispatch

import (
	"context"

	"github.com/chime-scheduler/chime/api"
)

// ReportSQL and FenceSQL are the statements that fence what an executor
// sends by the run's key, as s sends them.
func ReportSQL(s *Service) string { return s.q.runReport }

// FenceSQL: see ReportSQL.
func FenceSQL(s *Service) string { return s.q.runFence }

// SetVacuumAfter sets how many runs s deletes before it has the runs'
// table vacuumed.
func SetVacuumAfter(s *Service, n int64) { s.vacuumAfter = n }

// TakeHanded takes the runs of ids that s handed executor, by their keys.
func TakeHanded(ctx context.Context, s *Service, executor string, ids ...string) (*api.ExecutorWork, error) {
	return s.takeHanded(ctx, executor, ids)
}

// HandedTake is a take by key of TakeTogether: the runs of IDs that
// Executor takes.
type HandedTake struct {
	Executor string
	IDs      []string
}

// TakeTogether makes takes as one batch of s's takes by key, and returns
// what each got. batched reports whether the batch's one statement made
// them (on PostgreSQL), rather than one takeHanded each.
func TakeTogether(ctx context.Context, s *Service, takes ...HandedTake) (works []*api.ExecutorWork, errs []error, batched bool) {
	batch := make([]*handedTake, len(takes))
	for i, t := range takes {
		batch[i] = &handedTake{executor: t.Executor, ids: t.IDs}
	}
	if s.st.WritableCTEs() {
		batched = s.takeBatch(ctx, batch) == nil
	}
	if !batched {
		s.commitTakes(ctx, batch)
	}
	for _, t := range batch {
		works, errs = append(works, t.work), append(errs, t.err)
	}
	return works, errs, batched
}

// WritableCTEs reports whether s's database runs the statements that
// PostgreSQL alone does.
func WritableCTEs(s *Service) bool { return s.st.WritableCTEs() }
