package schedule_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

var propertyZones = []string{"UTC", "America/New_York", "Europe/London", "Australia/Lord_Howe", "Pacific/Chatham", "Asia/Kolkata", "America/Santiago"}

// randomTrigger builds a valid trigger of a random kind around DST-heavy
// dates.
func randomTrigger(t *testing.T, r *rand.Rand) schedule.Trigger {
	t.Helper()
	loc := zone(t, propertyZones[r.IntN(len(propertyZones))])
	start := time.Date(2024, time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000)*1e6, time.UTC)
	var end time.Time
	if r.IntN(2) == 0 {
		end = start.Add(time.Duration(1+r.Int64N(400*24)) * time.Hour)
	}
	units := []schedule.Unit{schedule.UnitSecond, schedule.UnitMinute, schedule.UnitHour, schedule.UnitDay, schedule.UnitWeek, schedule.UnitMonth, schedule.UnitYear}
	var s schedule.Schedule
	switch r.IntN(4) {
	case 0:
		exprs := []string{"0 0 * * * ?", "0 30 2 * * ?", "0 0/20 1-3 ? * SUN", "0 0 12 L * ?", "0 15 10 ? * 6#3", "*/7 * * * * ?"}
		c, err := schedule.NewCronInLocation(exprs[r.IntN(len(exprs))], loc)
		if err != nil {
			t.Fatal(err)
		}
		s = c
	case 1:
		s = &schedule.Simple{RepeatCount: r.IntN(50) - 1, RepeatInterval: time.Duration(1+r.IntN(100000000)) * time.Millisecond}
	case 2:
		s = &schedule.CalendarInterval{
			Unit: units[r.IntN(len(units))], Interval: 1 + r.IntN(5), Location: loc,
			PreserveHourOfDayAcrossDaylightSavings: r.IntN(2) == 0, SkipDayIfHourDoesNotExist: r.IntN(2) == 0,
		}
	default:
		startTOD := tod(r.IntN(24), r.IntN(60), r.IntN(60))
		endTOD := tod(23, 59, 59)
		if r.IntN(2) == 0 {
			endTOD = tod(startTOD.Hour+r.IntN(24-startTOD.Hour), r.IntN(60), r.IntN(60))
			if endTOD.Before(startTOD) {
				endTOD = startTOD
			}
		}
		unit := units[r.IntN(3)]
		limit := map[schedule.Unit]int{schedule.UnitSecond: 86400, schedule.UnitMinute: 1440, schedule.UnitHour: 24}[unit]
		s = &schedule.DailyTimeInterval{
			StartTimeOfDay: startTOD, EndTimeOfDay: endTOD, DaysOfWeek: schedule.Weekdays(1 + r.IntN(127)),
			Interval: 1 + r.IntN(min(limit, 200)), Unit: unit, RepeatCount: r.IntN(60) - 1, Location: loc,
		}
	}
	return schedule.Trigger{Schedule: s, StartTime: start, EndTime: end}
}

// TestPropertyFireTimesIncreaseWithinWindow checks, on random triggers,
// that fire times strictly increase and stay within [start, end].
func TestPropertyFireTimesIncreaseWithinWindow(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2024, 3))
	for i := range 400 {
		tr := randomTrigger(t, r)
		t.Run(fmt.Sprintf("%d-%s", i, tr.Schedule.Kind()), func(t *testing.T) {
			if err := tr.Validate(); err != nil {
				t.Fatalf("random trigger is invalid: %v", err)
			}
			got := fires(t, tr, nil, 60)
			start := tr.StartTime
			if _, ok := tr.Schedule.(*schedule.Cron); ok {
				start = start.Truncate(time.Second)
			}
			for j, ft := range got {
				if ft.Before(start) {
					t.Fatalf("fire %d at %s is before the start %s", j, ft, tr.StartTime)
				}
				if !tr.EndTime.IsZero() && ft.After(tr.EndTime) {
					t.Fatalf("fire %d at %s is after the end %s", j, ft, tr.EndTime)
				}
				if j > 0 && !ft.After(got[j-1]) {
					t.Fatalf("fire %d at %s does not follow %s", j, ft, got[j-1])
				}
			}
		})
	}
}

// TestPropertyFireTimeAfterIsStrict checks FireTimeAfter answers strictly
// after its input, at arbitrary instants.
func TestPropertyFireTimeAfterIsStrict(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	for range 400 {
		tr := randomTrigger(t, r)
		after := tr.StartTime.Add(time.Duration(r.Int64N(int64(500 * 24 * time.Hour))))
		if got := tr.FireTimeAfter(after); !got.IsZero() && !got.After(after) {
			t.Errorf("%s trigger %+v: FireTimeAfter(%s) = %s, not after it", tr.Schedule.Kind(), tr.Schedule, after, got)
		}
	}
}
