package schedule_test

import (
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

// A cron trigger in a time zone, previewed without firing it.
func Example() {
	s, err := schedule.NewCron("0 30 9 ? * MON-FRI", "Europe/Paris")
	if err != nil {
		panic(err)
	}
	tr := schedule.Trigger{Schedule: s, StartTime: time.Date(2024, 3, 29, 0, 0, 0, 0, time.UTC)}
	tr.ComputeFirstFireTime(nil)
	for _, ft := range tr.Upcoming(nil, 3) {
		fmt.Println(ft.Format(time.RFC3339))
	}
	// Output:
	// 2024-03-29T09:30:00+01:00
	// 2024-04-01T09:30:00+02:00
	// 2024-04-02T09:30:00+02:00
}

// A simple trigger that was down for a while: RESCHEDULE_NEXT_WITH_REMAINING_COUNT
// waits for the next slot and counts the missed ones as done.
func ExampleTrigger_UpdateAfterMisfire() {
	tr := schedule.Trigger{
		Schedule:           &schedule.Simple{RepeatCount: 5, RepeatInterval: time.Hour},
		StartTime:          time.Date(2024, 6, 15, 8, 0, 0, 0, time.UTC),
		MisfireInstruction: schedule.MisfireRescheduleNextWithRemainingCount,
	}
	tr.ComputeFirstFireTime(nil)
	tr.Triggered(nil) // fired at 08:00; next is 09:00

	tr.UpdateAfterMisfire(time.Date(2024, 6, 15, 11, 30, 0, 0, time.UTC), nil)
	fmt.Println("next:", tr.NextFireTime.Format("15:04"), "times triggered:", tr.TimesTriggered)
	for _, ft := range tr.Upcoming(nil, 10) {
		fmt.Println(ft.Format("15:04"))
	}
	// Output:
	// next: 12:00 times triggered: 4
	// 12:00
	// 13:00
}

// Schedules are stored as JSON with a "kind" discriminator.
func ExampleMarshal() {
	s := &schedule.CalendarInterval{Unit: schedule.UnitMonth, Interval: 1}
	data, err := schedule.Marshal(s)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(data))
	back, err := schedule.Unmarshal(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(back.Kind())
	// Output:
	// {"kind":"calendar_interval","unit":"MONTH","interval":1,"time_zone":"UTC"}
	// calendar_interval
}

// Fire times listed with the daylight-saving changes marked: Berlin skips
// 02:30 on the night its clocks go forward.
func ExampleOffsetChanges() {
	s, err := schedule.NewCron("0 30 2 * * ?", "Europe/Berlin")
	if err != nil {
		panic(err)
	}
	after := time.Date(2025, 3, 28, 12, 0, 0, 0, time.UTC)
	tr := schedule.Trigger{Schedule: s, StartTime: after}
	tr.ComputeFirstFireTime(nil)
	for ft, changed := range schedule.OffsetChanges(after, tr.Upcoming(nil, 3), s.Location()) {
		note := ""
		if changed {
			note = " (UTC offset changed)"
		}
		fmt.Println(ft.Format(time.RFC3339) + note)
	}
	// Output:
	// 2025-03-29T02:30:00+01:00
	// 2025-03-31T02:30:00+02:00 (UTC offset changed)
	// 2025-04-01T02:30:00+02:00
}
