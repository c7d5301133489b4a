package calendar_test

import (
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/calendar"
)

// Office hours on working days: an inverted daily calendar (only 09:00 to
// 17:00 included) chained to weekends and a holiday.
func Example() {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		panic(err)
	}
	holidays, err := calendar.NewHoliday(ny, calendar.Date{Year: 2024, Month: time.July, Day: 4})
	if err != nil {
		panic(err)
	}
	weekends, err := calendar.NewWeekly(ny, time.Saturday, time.Sunday)
	if err != nil {
		panic(err)
	}
	office, err := calendar.NewDaily(ny, 9*time.Hour, 17*time.Hour, true)
	if err != nil {
		panic(err)
	}
	cal := office.WithBase(weekends.WithBase(holidays))

	wednesdayEvening := time.Date(2024, time.July, 3, 18, 0, 0, 0, ny)
	fmt.Println(cal.Includes(wednesdayEvening))
	fmt.Println(cal.NextIncluded(wednesdayEvening))
	// Output:
	// false
	// 2024-07-05 09:00:00 -0400 EDT
}

// Calendars are stored and exchanged in a JSON definition format.
func ExampleUnmarshal() {
	cal, err := calendar.Unmarshal([]byte(`{
		"type": "cron", "tz": "UTC", "expr": "* * 0-5 ? * *",
		"base": {"type": "monthly", "tz": "UTC", "excludedDaysOfMonth": [1], "base": null}
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(cal.NextIncluded(time.Date(2024, time.February, 1, 3, 0, 0, 0, time.UTC)))
	out, err := calendar.Marshal(cal)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))

	_, err = calendar.Unmarshal([]byte(`{"type": "daily", "tz": "UTC", "rangeStart": "22:00:00.000", "rangeEnd": "02:00:00.000", "base": null}`))
	fmt.Println(err)
	// Output:
	// 2024-02-02 06:00:00 +0000 UTC
	// {"type":"cron","tz":"UTC","expr":"* * 0-5 ? * *","base":{"type":"monthly","tz":"UTC","excludedDaysOfMonth":[1],"base":null}}
	// calendar: rangeEnd: range end 02:00:00.000 is not after range start 22:00:00.000
}

// A calendar that excludes everything reports no next included instant
// instead of searching forever.
func ExampleCalendar_NextIncluded() {
	everyDay, err := calendar.NewWeekly(time.UTC,
		time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday)
	if err != nil {
		panic(err)
	}
	fmt.Println(everyDay.NextIncluded(time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)).IsZero())
	// Output:
	// true
}
