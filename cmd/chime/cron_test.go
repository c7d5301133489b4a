package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

func TestCronNext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "spring forward skips a daily time in the gap",
			args: []string{"0 30 2 * * ?", "--tz", "Europe/Berlin", "--count", "4", "--after", "2025-03-28T12:00:00Z"},
			want: trimLines(
				"Expression:   0 30 2 * * ?",
				"Time zone:    Europe/Berlin",
				"Description:  At 02:30, every day",
				"",
				"FIRE TIME            DAY  ZONE  UTC OFFSET  NOTE",
				"2025-03-29 02:30:00  Sat  CET   +01:00",
				"2025-03-31 02:30:00  Mon  CEST  +02:00      UTC offset changes +01:00 → +02:00",
				"2025-04-01 02:30:00  Tue  CEST  +02:00",
				"2025-04-02 02:30:00  Wed  CEST  +02:00",
			),
		},
		{
			name: "an hourly schedule resumes after the gap",
			args: []string{"0 0 * * * ?", "--tz", "Europe/Berlin", "--count", "3", "--after", "2025-03-30T00:00:00Z"},
			want: trimLines(
				"Expression:   0 0 * * * ?",
				"Time zone:    Europe/Berlin",
				"Description:  At minute 0, every hour",
				"",
				"FIRE TIME            DAY  ZONE  UTC OFFSET  NOTE",
				"2025-03-30 03:00:00  Sun  CEST  +02:00      UTC offset changes +01:00 → +02:00",
				"2025-03-30 04:00:00  Sun  CEST  +02:00",
				"2025-03-30 05:00:00  Sun  CEST  +02:00",
			),
		},
		{
			name: "fall back fires a repeated wall time once, at its second occurrence",
			args: []string{"0 30 1 * * ?", "--tz", "America/New_York", "--count", "3", "--after", "2025-11-01T00:00:00Z"},
			want: trimLines(
				"Expression:   0 30 1 * * ?",
				"Time zone:    America/New_York",
				"Description:  At 01:30, every day",
				"",
				"FIRE TIME            DAY  ZONE  UTC OFFSET  NOTE",
				"2025-11-01 01:30:00  Sat  EDT   -04:00",
				"2025-11-02 01:30:00  Sun  EST   -05:00      UTC offset changes -04:00 → -05:00",
				"2025-11-03 01:30:00  Mon  EST   -05:00",
			),
		},
		{
			name: "standard five-field cron in UTC by default",
			args: []string{"30 2 * * 1-5", "--count", "2", "--after", "2025-06-06T00:00:00Z"},
			want: trimLines(
				"Expression:   30 2 * * 1-5",
				"Time zone:    UTC",
				"Description:  At 02:30, on Monday through Friday",
				"",
				"FIRE TIME            DAY  ZONE  UTC OFFSET  NOTE",
				"2025-06-06 02:30:00  Fri  UTC   +00:00",
				"2025-06-09 02:30:00  Mon  UTC   +00:00",
			),
		},
		{
			name: "an expression that never fires again",
			args: []string{"0 0 0 1 1 ? 2020", "--after", "2021-01-01T00:00:00Z"},
			want: trimLines(
				"Expression:   0 0 0 1 1 ? 2020",
				"Time zone:    UTC",
				"Description:  At 00:00, on day 1 of January, in year 2020",
				"",
				"The expression has no fire time after 2021-01-01T00:00:00Z.",
			),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := execChime(t, "", append([]string{"cron", "next"}, tt.args...)...)
			if err != nil {
				t.Fatalf("chime cron next: %v", err)
			}
			if got != tt.want {
				t.Errorf("output:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestCronNextJSON(t *testing.T) {
	t.Parallel()
	out, _, err := execChime(t, "", "cron", "next", "0 30 2 * * ?", "--tz", "Europe/Berlin",
		"--count", "2", "--after", "2025-03-29T12:00:00Z", "-o", "json")
	if err != nil {
		t.Fatalf("chime cron next: %v", err)
	}
	var got api.CronExplanation
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not a CronExplanation: %v\n%s", err, out)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	want := []api.FireTime{
		{Time: time.Date(2025, 3, 31, 2, 30, 0, 0, berlin), DST: true},
		{Time: time.Date(2025, 4, 1, 2, 30, 0, 0, berlin)},
	}
	if got.Expression != "0 30 2 * * ?" || got.TimeZone != "Europe/Berlin" || got.Description != "At 02:30, every day" {
		t.Errorf("header = %q, %q, %q", got.Expression, got.TimeZone, got.Description)
	}
	if len(got.Next) != len(want) {
		t.Fatalf("next = %v, want %v", got.Next, want)
	}
	for i := range want {
		if !got.Next[i].Time.Equal(want[i].Time) || got.Next[i].DST != want[i].DST {
			t.Errorf("next[%d] = %v, want %v", i, got.Next[i], want[i])
		}
	}
}

func TestCronExplain(t *testing.T) {
	t.Parallel()
	got, _, err := execChime(t, "", "cron", "explain", "0 0 12 L * ?", "--tz", "Asia/Tokyo")
	if err != nil {
		t.Fatalf("chime cron explain: %v", err)
	}
	want := trimLines(
		"Expression:   0 0 12 L * ?",
		"Time zone:    Asia/Tokyo",
		"Description:  At 12:00, on the last day of every month",
	)
	if got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}

	got, _, err = execChime(t, "", "cron", "explain", "@every 90m", "-o", "json")
	if err != nil {
		t.Fatalf("chime cron explain -o json: %v", err)
	}
	want = `{
  "expression": "@every 90m",
  "time_zone": "UTC",
  "description": "Every 1h30m0s, counted from the previous fire time",
  "next": []
}
`
	if got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestCronErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string // the whole error message
	}{
		{
			name: "field out of range",
			args: []string{"explain", "0 30 2 32 * ?"},
			want: `invalid cron expression: cron: day-of-month "32": value out of range 1-31`,
		},
		{
			name: "both day fields set",
			args: []string{"next", "0 30 2 * * MON"},
			want: `invalid cron expression: cron: day-of-week "MON": one of day-of-month and day-of-week must be '?'`,
		},
		{
			name: "unknown zone",
			args: []string{"next", "@daily", "--tz", "Mars/Olympus_Mons"},
			want: `--tz: "Mars/Olympus_Mons" is not an IANA time zone such as "Europe/Berlin"`,
		},
		{
			name: "count out of range",
			args: []string{"next", "@daily", "--count", "0"},
			want: `--count 0: want 1 to 1000`,
		},
		{
			name: "after not RFC 3339",
			args: []string{"next", "@daily", "--after", "yesterday"},
			want: `--after "yesterday": want an RFC 3339 instant such as 2025-03-30T00:00:00Z`,
		},
		{
			name: "unquoted expression",
			args: []string{"next", "0", "30", "2", "*", "*", "?"},
			want: `got 6 arguments: quote the cron expression so that it is one, like '0 30 2 * * ?'`,
		},
		{
			name: "no expression",
			args: []string{"explain"},
			want: `missing the cron expression: pass it as one quoted argument, like '0 30 2 * * ?'`,
		},
		{
			name: "unknown output format",
			args: []string{"explain", "@daily", "-o", "xml"},
			want: `invalid argument "xml" for "-o, --output" flag: unknown output format "xml": want table, json or yaml`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, _, err := execChime(t, "", append([]string{"cron"}, tt.args...)...)
			if err == nil {
				t.Fatalf("chime cron %s succeeded with output %q, want error %q", strings.Join(tt.args, " "), out, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n%s\nwant:\n%s", err, tt.want)
			}
			if out != "" {
				t.Errorf("a failed command printed %q", out)
			}
		})
	}
}
