package schedule_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/schedule"
)

func TestFixedDelayValidate(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, 1500 * time.Microsecond} {
		_, err := schedule.NewFixedDelay(d)
		wantField(t, err, "delay")
	}
	tr := schedule.Trigger{Schedule: &schedule.FixedDelay{Delay: time.Second}, StartTime: at(t, "2026-01-05T10:00:00Z"),
		MisfireInstruction: schedule.MisfireRescheduleNextWithExistingCount}
	wantField(t, tr.Validate(), "misfire_instruction")
}

// The trigger fires at its start time, then has no fire time until its run
// ends; Rearm puts the next one a delay after the end.
func TestFixedDelayChain(t *testing.T) {
	fd, err := schedule.NewFixedDelay(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tr := schedule.Trigger{Schedule: fd, StartTime: at(t, "2026-01-05T10:00:00.250Z")}
	if got := fires(t, tr, nil, 3); diffTimes(times(t, "2026-01-05T10:00:00.250Z"), got) != "" {
		t.Fatalf("upcoming = %v, want only the start time", got)
	}
	tr.ComputeFirstFireTime(nil)
	tr.Triggered(nil)
	if tr.MayFireAgain() || tr.TimesTriggered != 1 {
		t.Fatalf("after firing: next %v, times %d; want none until the run ends, 1", tr.NextFireTime, tr.TimesTriggered)
	}
	// The run took 7.5 s: the next fire is 30 s after its end, not after
	// its start.
	if got, want := tr.Rearm(at(t, "2026-01-05T10:00:07.75Z"), nil), at(t, "2026-01-05T10:00:37.75Z"); !got.Equal(want) {
		t.Fatalf("Rearm = %v, want %v", got, want)
	}
	tr.Triggered(nil)
	if tr.MayFireAgain() || tr.TimesTriggered != 2 || !tr.PreviousFireTime.Equal(at(t, "2026-01-05T10:00:37.75Z")) {
		t.Fatalf("second fire: %+v", tr)
	}
}

func TestFixedDelayEndTimeAndCalendar(t *testing.T) {
	tr := schedule.Trigger{Schedule: &schedule.FixedDelay{Delay: time.Hour},
		StartTime: at(t, "2026-01-09T22:00:00Z"), EndTime: at(t, "2026-01-12T12:00:00Z")}
	// Start on a Saturday: the weekend calendar moves it to Monday.
	sat := tr
	sat.StartTime = at(t, "2026-01-10T09:00:00Z")
	if got := sat.ComputeFirstFireTime(weekendCalendar{}); !got.Equal(at(t, "2026-01-12T00:00:00Z")) {
		t.Fatalf("first fire on a weekend = %v, want Monday 00:00", got)
	}
	tr.ComputeFirstFireTime(weekendCalendar{})
	tr.Triggered(weekendCalendar{})
	// The run ends Friday 23:30; the next fire would be Saturday 00:30,
	// which the calendar moves to Monday.
	if got := tr.Rearm(at(t, "2026-01-09T23:30:00Z"), weekendCalendar{}); !got.Equal(at(t, "2026-01-12T00:00:00Z")) {
		t.Fatalf("Rearm into the weekend = %v, want Monday 00:00", got)
	}
	// A store re-arms without the calendar; Excluded tells where to go.
	tr.NextFireTime = at(t, "2026-01-10T00:30:00Z")
	if got, moved := tr.Excluded(weekendCalendar{}); !moved || !got.Equal(at(t, "2026-01-12T00:00:00Z")) {
		t.Fatalf("Excluded = %v, %v; want Monday 00:00, true", got, moved)
	}
	tr.NextFireTime = at(t, "2026-01-12T01:00:00Z")
	if got, moved := tr.Excluded(weekendCalendar{}); moved || !got.Equal(tr.NextFireTime) {
		t.Fatalf("Excluded on an included time = %v, %v", got, moved)
	}
	// Past the end time the trigger completes.
	if got := tr.Rearm(at(t, "2026-01-12T11:30:00Z"), nil); !got.IsZero() {
		t.Fatalf("Rearm past the end = %v, want zero", got)
	}
	if got := tr.Rearm(at(t, "2026-01-09T23:30:00Z"), excludeAll{}); !got.IsZero() {
		t.Fatalf("Rearm with a calendar that excludes everything = %v, want zero", got)
	}
}

func TestFixedDelayMisfire(t *testing.T) {
	now := at(t, "2026-01-05T12:00:00Z")
	for _, tc := range []struct {
		m    schedule.MisfireInstruction
		want time.Time
	}{
		{"", now},
		{schedule.MisfireSmartPolicy, now},
		{schedule.MisfireFireOnceNow, now},
		{schedule.MisfireIgnore, at(t, "2026-01-05T10:00:30Z")},
		{schedule.MisfireDoNothing, at(t, "2026-01-05T12:00:30Z")},
	} {
		tr := schedule.Trigger{Schedule: &schedule.FixedDelay{Delay: 30 * time.Second}, StartTime: at(t, "2026-01-05T10:00:00Z"),
			MisfireInstruction: tc.m, NextFireTime: at(t, "2026-01-05T10:00:30Z"), TimesTriggered: 1}
		if err := tr.Validate(); err != nil {
			t.Fatalf("%q: %v", tc.m, err)
		}
		tr.UpdateAfterMisfire(now, nil)
		if !tr.NextFireTime.Equal(tc.want) {
			t.Errorf("%q: next fire %v, want %v", tc.m, tr.NextFireTime, tc.want)
		}
	}
	ended := schedule.Trigger{Schedule: &schedule.FixedDelay{Delay: time.Second}, StartTime: at(t, "2026-01-05T10:00:00Z"),
		EndTime: at(t, "2026-01-05T11:00:00Z"), NextFireTime: at(t, "2026-01-05T10:30:00Z")}
	if ended.UpdateAfterMisfire(now, nil); ended.MayFireAgain() {
		t.Fatalf("misfire past the end time: next fire %v, want none", ended.NextFireTime)
	}
}

func TestFixedDelayJSON(t *testing.T) {
	data, err := schedule.Marshal(&schedule.FixedDelay{Delay: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"kind":"fixed_delay","delay_ms":90000}` {
		t.Fatalf("Marshal = %s", data)
	}
	s, err := schedule.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if fd, ok := s.(*schedule.FixedDelay); !ok || fd.Delay != 90*time.Second || schedule.RearmDelay(s) != 90*time.Second {
		t.Fatalf("Unmarshal = %#v", s)
	}
	if schedule.RearmDelay(&schedule.Simple{}) != 0 {
		t.Fatal("RearmDelay of a simple schedule is not zero")
	}
	_, err = schedule.Unmarshal([]byte(`{"kind":"fixed_delay"}`))
	wantField(t, err, "delay_ms")
	_, err = schedule.Unmarshal([]byte(`{"kind":"fixed_delay","delay_ms":0}`))
	wantField(t, err, "delay")
}
