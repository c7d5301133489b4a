package cron_test

import (
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/schedule/cron"
)

func ExampleParseQuartz() {
	expr, err := cron.ParseQuartz("0 30 9 ? * MON-FRI")
	if err != nil {
		fmt.Println(err)
		return
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		fmt.Println(err)
		return
	}
	after := time.Date(2024, 3, 29, 12, 0, 0, 0, berlin) // a Friday
	for _, t := range expr.NextN(after, 3) {
		fmt.Println(t.Format(time.RFC3339))
	}
	// Output:
	// 2024-04-01T09:30:00+02:00
	// 2024-04-02T09:30:00+02:00
	// 2024-04-03T09:30:00+02:00
}

func ExampleExplain() {
	for _, s := range []string{"0 0 2 LW * ?", "0 15 10 ? * 6#3", "*/5 9-17 * * 1-5", "@hourly"} {
		text, err := cron.Explain(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(text)
	}
	// Output:
	// At 02:00, on the last weekday of every month
	// At 10:15, on the third Friday of every month
	// Every 5 minutes, between 09:00 and 17:59, on Monday through Friday
	// At minute 0, every hour
}

func ExampleParseError() {
	_, err := cron.Parse("0 0 12 32 * ?")
	fmt.Println(err)
	// Output:
	// cron: day-of-month "32": value out of range 1-31
}
