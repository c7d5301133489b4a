package chime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/schedule"
)

// BenchmarkFirePath measures the engine's whole fire path on the in-memory
// store: acquire, fire (advance timing and record the execution), run a
// no-op job on the worker pool and record its completion. One op is one
// firing.
func BenchmarkFirePath(b *testing.B) {
	ctx := context.Background()
	s, err := chime.New(chime.Config{Logger: quietLogger, Workers: 10})
	if err != nil {
		b.Fatal(err)
	}
	var fired atomic.Int64
	done := make(chan struct{})
	target := int64(b.N)
	err = s.Register("noop", chime.JobFunc(func(context.Context, *chime.JobContext) error {
		if fired.Add(1) == target {
			close(done)
		}
		return nil
	}))
	if err != nil {
		b.Fatal(err)
	}
	due := time.Now()
	for i := range b.N {
		j := chime.JobDetail{Key: chime.NewJobKey("bench", fmt.Sprintf("j%d", i)), Type: "noop"}
		t := chime.Trigger{Key: chime.NewTriggerKey("bench", fmt.Sprintf("t%d", i)), Schedule: &schedule.Simple{}, StartTime: due}
		if err := s.ScheduleJob(ctx, j, []chime.Trigger{t}, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	begin := time.Now()
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	<-done
	elapsed := time.Since(begin)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "fires/s")
	if err := s.Stop(ctx); err != nil {
		b.Fatal(err)
	}
}
