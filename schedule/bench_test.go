package schedule_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

// BenchmarkTriggered measures advancing a trigger by one fire, per kind.
func BenchmarkTriggered(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	cron, err := schedule.NewCronInLocation("0 */15 9-17 ? * MON-FRI", ny)
	if err != nil {
		b.Fatal(err)
	}
	schedules := []schedule.Schedule{
		cron,
		&schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: time.Minute},
		&schedule.CalendarInterval{Unit: schedule.UnitDay, Interval: 1, Location: ny},
		&schedule.CalendarInterval{Unit: schedule.UnitMonth, Interval: 1, Location: ny},
		&schedule.DailyTimeInterval{
			StartTimeOfDay: schedule.TimeOfDay{Hour: 9}, EndTimeOfDay: schedule.TimeOfDay{Hour: 17},
			DaysOfWeek: schedule.MondayToFriday, Interval: 15, Unit: schedule.UnitMinute,
			RepeatCount: schedule.RepeatForever, Location: ny,
		},
	}
	names := []string{"cron", "simple", "calendar_interval_day", "calendar_interval_month", "daily_time_interval"}
	for i, s := range schedules {
		b.Run(names[i], func(b *testing.B) {
			b.ReportAllocs()
			start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			tr := schedule.Trigger{Schedule: s, StartTime: start}
			tr.ComputeFirstFireTime(nil)
			fresh := tr
			// Stay within ten years of the start, as a live trigger would.
			horizon := start.AddDate(10, 0, 0)
			for b.Loop() {
				tr.Triggered(nil)
				if !tr.MayFireAgain() || tr.NextFireTime.After(horizon) {
					tr = fresh
				}
			}
		})
	}
}
