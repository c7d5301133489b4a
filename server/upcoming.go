package server

import (
	"cmp"
	"container/heap"
	"context"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
)

// Limits of Upcoming.
const (
	defaultUpcomingAll = 20
	maxUpcomingAll     = 200
)

// Upcoming returns the next count firings of every job (of one job group
// when group is set), earliest first, marking those next to a
// daylight-saving change of their schedule's zone. Paused triggers, and
// triggers in error, which will not fire, are left out.
//
// It lists the triggers once and loads each calendar they use once; the
// fire times are then computed in memory, merging the triggers' sequences
// through a heap, so the cost is one store round trip per distinct
// calendar and O((triggers + count) log triggers) schedule steps.
func (s *Server) Upcoming(ctx context.Context, group string, count int) ([]api.UpcomingFiring, error) {
	switch {
	case count == 0:
		count = defaultUpcomingAll
	case count < 0 || count > maxUpcomingAll:
		return nil, invalidf("count", "%d: want 1 to %d", count, maxUpcomingAll)
	}
	triggers, err := s.sched.Triggers(ctx, nil)
	if err != nil {
		return nil, err
	}
	calendars := make(map[string]schedule.Calendar)
	var q firingQueue
	for i := range triggers {
		t := &triggers[i]
		if (group != "" && t.JobKey.Group != group) || t.State == chime.TriggerPaused || t.State == chime.TriggerError ||
			t.NextFireTime.IsZero() || t.Schedule == nil {
			continue
		}
		cal, ok := calendars[t.CalendarName]
		if !ok {
			if cal, err = s.calendarOf(ctx, t.CalendarName); err != nil {
				return nil, err
			}
			calendars[t.CalendarName] = cal
		}
		q = append(q, &firingSource{info: t, cal: cal, timing: &schedule.Trigger{
			Schedule: t.Schedule, StartTime: t.StartTime, EndTime: t.EndTime,
			MisfireInstruction: t.MisfireInstruction, NextFireTime: t.NextFireTime,
			PreviousFireTime: t.PreviousFireTime, TimesTriggered: t.TimesTriggered,
		}})
	}
	heap.Init(&q)
	var order []*firingSource // the source of each firing, in order
	for len(order) < count && q.Len() > 0 {
		src := q[0]
		src.times = append(src.times, src.timing.NextFireTime)
		order = append(order, src)
		src.timing.Triggered(src.cal)
		if src.timing.NextFireTime.IsZero() {
			heap.Pop(&q)
		} else {
			heap.Fix(&q, 0)
		}
	}

	// Mark offset changes per trigger, over its own sequence, as the
	// per-job list does; then lay the firings out in the merged order.
	now := s.now()
	marked := make(map[*firingSource][]api.UpcomingFiring)
	for _, src := range order {
		if _, done := marked[src]; done {
			continue
		}
		var list []api.UpcomingFiring
		for ft, changed := range schedule.OffsetChanges(now, src.times, scheduleLocation(src.info.Schedule)) {
			list = append(list, api.UpcomingFiring{
				JobGroup: src.info.JobKey.Group, JobName: src.info.JobKey.Name,
				TriggerGroup: src.info.Key.Group, TriggerName: src.info.Key.Name,
				Time: ft, DST: changed,
			})
		}
		marked[src] = list
	}
	out := make([]api.UpcomingFiring, 0, len(order))
	for _, src := range order {
		out = append(out, marked[src][0])
		marked[src] = marked[src][1:]
	}
	return out, nil
}

// firingSource is one trigger's sequence of fire times, advanced in
// memory.
type firingSource struct {
	info   *chime.TriggerInfo
	cal    schedule.Calendar
	timing *schedule.Trigger
	// times are the fire times taken from the sequence so far.
	times []time.Time
}

// firingQueue is a min-heap of sources by next fire time, then job and
// trigger key, so that equal times come out in a stable order.
type firingQueue []*firingSource

func (q firingQueue) Len() int { return len(q) }

func (q firingQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if c := a.timing.NextFireTime.Compare(b.timing.NextFireTime); c != 0 {
		return c < 0
	}
	return cmp.Or(
		cmp.Compare(a.info.JobKey.Group, b.info.JobKey.Group),
		cmp.Compare(a.info.JobKey.Name, b.info.JobKey.Name),
		cmp.Compare(a.info.Key.Group, b.info.Key.Group),
		cmp.Compare(a.info.Key.Name, b.info.Key.Name),
	) < 0
}

func (q firingQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *firingQueue) Push(x any) { *q = append(*q, x.(*firingSource)) }

func (q *firingQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
