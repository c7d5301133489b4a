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
