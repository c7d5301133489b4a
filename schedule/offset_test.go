package schedule_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

func TestOffsetChanges(t *testing.T) {
	t.Parallel()
	cron := func(expr, tz string) func(t testing.TB) schedule.Schedule {
		return func(t testing.TB) schedule.Schedule {
			s, err := schedule.NewCron(expr, tz)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	daily := func(tz string) func(t testing.TB) schedule.Schedule {
		return func(t testing.TB) schedule.Schedule {
			s, err := schedule.NewCalendarInterval(schedule.UnitDay, 1, tz)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	// Each wanted fire time is written in the schedule's zone, followed by
	// " *" when it is marked.
	tests := []struct {
		name     string
		schedule func(t testing.TB) schedule.Schedule
		after    string
		zone     string
		want     []string
	}{
		{
			name:     "Berlin spring forward: 02:30 does not exist on March 30",
			schedule: cron("0 30 2 * * ?", "Europe/Berlin"),
			after:    "2025-03-28T12:00:00Z", zone: "Europe/Berlin",
			want: []string{"2025-03-29T02:30:00+01:00", "2025-03-31T02:30:00+02:00 *", "2025-04-01T02:30:00+02:00"},
		},
		{
			name:     "Berlin spring forward, hourly: 02:00 is skipped",
			schedule: cron("0 0 * * * ?", "Europe/Berlin"),
			after:    "2025-03-29T23:30:00Z", zone: "Europe/Berlin",
			want: []string{"2025-03-30T01:00:00+01:00", "2025-03-30T03:00:00+02:00 *", "2025-03-30T04:00:00+02:00"},
		},
		{
			name:     "Berlin spring forward, daily interval as Quartz computes it: the wall time shifts an hour",
			schedule: daily("Europe/Berlin"),
			after:    "2025-03-29T01:30:00Z", zone: "Europe/Berlin",
			want: []string{"2025-03-29T02:30:00+01:00", "2025-03-30T01:30:00+01:00", "2025-03-31T01:30:00+02:00 *"},
		},
		{
			name:     "New York fall back: 01:30 happens twice on November 2 and fires once",
			schedule: cron("0 30 1 * * ?", "America/New_York"),
			after:    "2025-11-01T00:00:00Z", zone: "America/New_York",
			want: []string{"2025-11-01T01:30:00-04:00", "2025-11-02T01:30:00-05:00 *", "2025-11-03T01:30:00-05:00"},
		},
		{
			name:     "the first fire time is compared with the instant after",
			schedule: cron("0 0 12 * * ?", "Europe/Berlin"),
			after:    "2025-03-30T00:30:00Z", zone: "Europe/Berlin",
			want: []string{"2025-03-30T12:00:00+02:00 *", "2025-03-31T12:00:00+02:00"},
		},
		{
			name:     "Tokyo has no daylight saving",
			schedule: cron("0 30 2 * * ?", "Asia/Tokyo"),
			after:    "2025-03-28T12:00:00Z", zone: "Asia/Tokyo",
			want: []string{"2025-03-29T02:30:00+09:00", "2025-03-30T02:30:00+09:00", "2025-03-31T02:30:00+09:00"},
		},
		{
			name:     "a Berlin schedule listed in UTC is never marked",
			schedule: cron("0 30 2 * * ?", "Europe/Berlin"),
			after:    "2025-03-28T12:00:00Z", zone: "UTC",
			want: []string{"2025-03-29T01:30:00Z", "2025-03-31T00:30:00Z", "2025-04-01T00:30:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			after := at(t, tt.after)
			tr := schedule.Trigger{Schedule: tt.schedule(t), StartTime: after}
			times := fires(t, tr, nil, len(tt.want))
			var got []string
			for ft, changed := range schedule.OffsetChanges(after, times, zone(t, tt.zone)) {
				s := ft.Format(time.RFC3339)
				if changed {
					s += " *"
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("(-want +got)\n-%s\n+%s", strings.Join(tt.want, "\n-"), strings.Join(got, "\n+"))
			}
		})
	}
}

func TestOffsetChangesEdges(t *testing.T) {
	t.Parallel()
	after := at(t, "2025-03-30T00:30:00Z")
	for range schedule.OffsetChanges(after, nil, zone(t, "Europe/Berlin")) {
		t.Error("no times yielded something")
	}
	// A nil location is UTC.
	berlin := at(t, "2025-03-30T03:00:00+02:00").In(zone(t, "Europe/Berlin"))
	for ft, changed := range schedule.OffsetChanges(after, []time.Time{berlin}, nil) {
		if changed || ft.Location() != time.UTC || !ft.Equal(berlin) {
			t.Errorf("nil location yielded %v, %v; want the same instant in UTC, unmarked", ft, changed)
		}
	}
	// Stopping early is honoured.
	n := 0
	for range schedule.OffsetChanges(after, []time.Time{after, after, after}, time.UTC) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("the loop ran %d times after break, want 1", n)
	}
}
