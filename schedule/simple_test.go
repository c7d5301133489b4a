package schedule_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

func TestSimpleFireTimes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		tr   schedule.Trigger
		cal  schedule.Calendar
		n    int
		want []string
	}{
		{
			name: "fires once without repeats",
			tr:   schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: 0}, StartTime: at(t, "2024-01-01T10:00:00Z")},
			n:    5,
			want: []string{"2024-01-01T10:00:00Z"},
		},
		{
			name: "repeat count adds fires",
			tr:   schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: 2, RepeatInterval: time.Hour}, StartTime: at(t, "2024-01-01T10:00:00Z")},
			n:    5,
			want: []string{"2024-01-01T10:00:00Z", "2024-01-01T11:00:00Z", "2024-01-01T12:00:00Z"},
		},
		{
			name: "end time excludes a fire at the end",
			tr: schedule.Trigger{
				Schedule:  &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: time.Hour},
				StartTime: at(t, "2024-01-01T10:00:00Z"),
				EndTime:   at(t, "2024-01-01T12:00:00Z"),
			},
			n:    5,
			want: []string{"2024-01-01T10:00:00Z", "2024-01-01T11:00:00Z"},
		},
		{
			name: "milliseconds are kept",
			tr:   schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: 2, RepeatInterval: 1500 * time.Millisecond}, StartTime: at(t, "2024-01-01T10:00:00.250Z")},
			n:    5,
			want: []string{"2024-01-01T10:00:00.250Z", "2024-01-01T10:00:01.750Z", "2024-01-01T10:00:03.250Z"},
		},
		{
			name: "excluded fire times use up repeats",
			tr:   schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: 4, RepeatInterval: time.Hour}, StartTime: at(t, "2024-01-01T10:00:00Z")},
			cal:  hourExcluder{hour: 11},
			n:    10,
			// 11:00 is skipped but still counts: 10, 12, 13, 14 (index 4 is the last).
			want: []string{"2024-01-01T10:00:00Z", "2024-01-01T12:00:00Z", "2024-01-01T13:00:00Z", "2024-01-01T14:00:00Z"},
		},
		{
			name: "an excluded start moves to the next included fire time",
			tr:   schedule.Trigger{Schedule: &schedule.Simple{RepeatCount: schedule.RepeatForever, RepeatInterval: 12 * time.Hour}, StartTime: at(t, "2024-06-14T12:00:00Z")},
			cal:  weekendCalendar{},
			n:    4,
			// Friday noon, then Monday 00:00 and on: the weekend's four fire times are skipped in one jump.
			want: []string{"2024-06-14T12:00:00Z", "2024-06-17T00:00:00Z", "2024-06-17T12:00:00Z", "2024-06-18T00:00:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := fires(t, tt.tr, tt.cal, tt.n)
			if d := diffTimes(times(t, tt.want...), got); d != "" {
				t.Errorf("fire times %s", d)
			}
		})
	}
}

func TestSimpleValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		s     schedule.Simple
		field string
	}{
		{"repeat count below -1", schedule.Simple{RepeatCount: -2, RepeatInterval: time.Second}, "repeat_count"},
		{"negative interval", schedule.Simple{RepeatCount: 5, RepeatInterval: -time.Second}, "repeat_interval"},
		{"zero interval when repeating", schedule.Simple{RepeatCount: schedule.RepeatForever}, "repeat_interval"},
		{"sub-millisecond interval", schedule.Simple{RepeatCount: 1, RepeatInterval: time.Microsecond}, "repeat_interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantField(t, tt.s.Validate(), tt.field)
			_, err := schedule.NewSimple(tt.s.RepeatCount, tt.s.RepeatInterval)
			wantField(t, err, tt.field)
		})
	}
	if _, err := schedule.NewSimple(0, 0); err != nil {
		t.Errorf("NewSimple(0, 0) = %v, want a valid one-shot schedule", err)
	}
}

// TestSimpleMisfire checks each instruction on a trigger that fires hourly
// from 02:00 (21 fires, up to 22:00), fired 8 times (02:00–09:00), and is
// found at 12:00 with 10:00 still pending.
func TestSimpleMisfire(t *testing.T) {
	t.Parallel()
	base := func(repeatCount int, m schedule.MisfireInstruction) schedule.Trigger {
		return schedule.Trigger{
			Schedule:           &schedule.Simple{RepeatCount: repeatCount, RepeatInterval: time.Hour},
			StartTime:          at(t, "2024-06-15T02:00:00Z"),
			MisfireInstruction: m,
			NextFireTime:       at(t, "2024-06-15T10:00:00Z"),
			PreviousFireTime:   at(t, "2024-06-15T09:00:00Z"),
			TimesTriggered:     8,
		}
	}
	now := at(t, "2024-06-15T12:00:00Z")
	hours := func(from, to int) []time.Time {
		var out []time.Time
		for h := from; h <= to; h++ {
			out = append(out, time.Date(2024, 6, 15, h, 0, 0, 0, time.UTC))
		}
		return out
	}
	tests := []struct {
		name            string
		tr              schedule.Trigger
		wantUpcoming    []time.Time
		wantTimes       int
		wantRepeatCount int
		wantStart       time.Time
	}{
		{
			name:         "ignore leaves the state",
			tr:           base(20, schedule.MisfireIgnore),
			wantUpcoming: hours(10, 22), wantTimes: 8, wantRepeatCount: 20, wantStart: at(t, "2024-06-15T02:00:00Z"),
		},
		{
			// 20 - 8 = 12 repeats left, restarted at 12:00.
			name:         "reschedule now with existing count",
			tr:           base(20, schedule.MisfireRescheduleNowWithExistingRepeatCount),
			wantUpcoming: hours(12, 24), wantTimes: 0, wantRepeatCount: 12, wantStart: now,
		},
		{
			// 10:00 and 11:00 missed: 20 - (8 + 2) = 10 repeats left.
			name:         "reschedule now with remaining count",
			tr:           base(20, schedule.MisfireRescheduleNowWithRemainingRepeatCount),
			wantUpcoming: hours(12, 22), wantTimes: 0, wantRepeatCount: 10, wantStart: now,
		},
		{
			name:         "fire now on a repeating trigger is reschedule now with remaining count",
			tr:           base(20, schedule.MisfireFireNow),
			wantUpcoming: hours(12, 22), wantTimes: 0, wantRepeatCount: 10, wantStart: now,
		},
		{
			// Next is 13:00; 10:00, 11:00 and 12:00 count as done.
			name:         "reschedule next with remaining count",
			tr:           base(20, schedule.MisfireRescheduleNextWithRemainingCount),
			wantUpcoming: hours(13, 22), wantTimes: 11, wantRepeatCount: 20, wantStart: at(t, "2024-06-15T02:00:00Z"),
		},
		{
			name:         "reschedule next with existing count",
			tr:           base(20, schedule.MisfireRescheduleNextWithExistingCount),
			wantUpcoming: hours(13, 22), wantTimes: 8, wantRepeatCount: 20, wantStart: at(t, "2024-06-15T02:00:00Z"),
		},
		{
			name:         "smart policy on a bounded trigger is reschedule now with existing count",
			tr:           base(20, schedule.MisfireSmartPolicy),
			wantUpcoming: hours(12, 24), wantTimes: 0, wantRepeatCount: 12, wantStart: now,
		},
		{
			name:         "empty instruction is smart policy",
			tr:           base(20, ""),
			wantUpcoming: hours(12, 24), wantTimes: 0, wantRepeatCount: 12, wantStart: now,
		},
		{
			name:         "smart policy on an endless trigger is reschedule next with remaining count",
			tr:           base(schedule.RepeatForever, schedule.MisfireSmartPolicy),
			wantUpcoming: hours(13, 16), wantTimes: 11, wantRepeatCount: schedule.RepeatForever, wantStart: at(t, "2024-06-15T02:00:00Z"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := tt.tr
			original := tr.Schedule
			tr.UpdateAfterMisfire(now, nil)
			n := len(tt.wantUpcoming)
			if tt.tr.Schedule.(*schedule.Simple).RepeatCount != schedule.RepeatForever {
				n = 100 // bounded: the whole remaining series
			}
			if d := diffTimes(tt.wantUpcoming, tr.Upcoming(nil, n)); d != "" {
				t.Errorf("upcoming %s", d)
			}
			if tr.TimesTriggered != tt.wantTimes {
				t.Errorf("TimesTriggered = %d, want %d", tr.TimesTriggered, tt.wantTimes)
			}
			if got := tr.Schedule.(*schedule.Simple).RepeatCount; got != tt.wantRepeatCount {
				t.Errorf("RepeatCount = %d, want %d", got, tt.wantRepeatCount)
			}
			if !tr.StartTime.Equal(tt.wantStart) {
				t.Errorf("StartTime = %s, want %s", tr.StartTime, tt.wantStart)
			}
			if original.(*schedule.Simple).RepeatCount != tt.tr.Schedule.(*schedule.Simple).RepeatCount {
				t.Errorf("the original schedule was modified in place")
			}
		})
	}
}

func TestSimpleMisfireOneShot(t *testing.T) {
	t.Parallel()
	now := at(t, "2024-06-15T12:00:00Z")
	tests := []struct {
		name string
		m    schedule.MisfireInstruction
		end  time.Time
		want time.Time
	}{
		{name: "smart policy fires now", m: schedule.MisfireSmartPolicy, want: now},
		{name: "fire now fires now", m: schedule.MisfireFireNow, want: now},
		// Quartz fires a one-shot FIRE_NOW trigger even after its end time.
		{name: "fire now ignores the end time", m: schedule.MisfireFireNow, end: at(t, "2024-06-15T11:00:00Z"), want: now},
		{name: "reschedule now completes after the end time", m: schedule.MisfireRescheduleNowWithExistingRepeatCount, end: at(t, "2024-06-15T11:00:00Z")},
		{name: "reschedule next finds nothing after the only fire time", m: schedule.MisfireRescheduleNextWithExistingCount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := schedule.Trigger{
				Schedule:           &schedule.Simple{},
				StartTime:          at(t, "2024-06-15T10:00:00Z"),
				EndTime:            tt.end,
				MisfireInstruction: tt.m,
				NextFireTime:       at(t, "2024-06-15T10:00:00Z"),
			}
			tr.UpdateAfterMisfire(now, nil)
			if !tr.NextFireTime.Equal(tt.want) {
				t.Fatalf("NextFireTime = %s, want %s", tr.NextFireTime, tt.want)
			}
			tr.Triggered(nil)
			if tr.MayFireAgain() {
				t.Errorf("after firing, NextFireTime = %s, want none", tr.NextFireTime)
			}
		})
	}
}
