package schedule_test

import (
	"errors"
	"testing"

	"github.com/chime-scheduler/chime/schedule"
)

func TestCronFireTimes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		zone  string
		start string
		end   string
		n     int
		want  []string
	}{
		{
			name:  "hourly",
			expr:  "0 0 * * * ?",
			zone:  "UTC",
			start: "2024-06-15T10:30:00Z",
			n:     3,
			want:  []string{"2024-06-15T11:00:00Z", "2024-06-15T12:00:00Z", "2024-06-15T13:00:00Z"},
		},
		{
			// Quartz drops the start time's milliseconds: 10:00:00.250
			// still fires at 10:00:00.
			name:  "the start time's milliseconds are dropped",
			expr:  "0 0 10 * * ?",
			zone:  "UTC",
			start: "2024-06-15T10:00:00.250Z",
			n:     2,
			want:  []string{"2024-06-15T10:00:00Z", "2024-06-16T10:00:00Z"},
		},
		{
			name:  "a fire at the end time is allowed",
			expr:  "0 0 * * * ?",
			zone:  "UTC",
			start: "2024-06-15T10:30:00Z",
			end:   "2024-06-15T12:00:00Z",
			n:     5,
			want:  []string{"2024-06-15T11:00:00Z", "2024-06-15T12:00:00Z"},
		},
		{
			name:  "daily in a zone across the spring-forward gap",
			expr:  "0 30 2 * * ?",
			zone:  "America/New_York",
			start: "2024-03-09T00:00:00Z",
			n:     3,
			// 10 March has no 02:30.
			want: []string{"2024-03-09T07:30:00Z", "2024-03-11T06:30:00Z", "2024-03-12T06:30:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := schedule.NewCron(tt.expr, tt.zone)
			if err != nil {
				t.Fatalf("NewCron: %v", err)
			}
			tr := schedule.Trigger{Schedule: c, StartTime: at(t, tt.start)}
			if tt.end != "" {
				tr.EndTime = at(t, tt.end)
			}
			if d := diffTimes(times(t, tt.want...), fires(t, tr, nil, tt.n)); d != "" {
				t.Errorf("fire times %s", d)
			}
		})
	}
}

func TestNewCronErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		zone  string
		field string
	}{
		{"unknown zone", "0 0 * * * ?", "Nowhere/Special", "time_zone"},
		{"bad expression", "0 0 25 * * ?", "UTC", "expression"},
		{"empty expression", "", "UTC", "expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := schedule.NewCron(tt.expr, tt.zone)
			wantField(t, err, tt.field)
			if tt.field == "expression" && errors.Unwrap(err) == nil {
				t.Errorf("error %v does not wrap the parser's error", err)
			}
		})
	}
	c, err := schedule.NewCron("0 15 10 ? * MON-FRI", "")
	if err != nil {
		t.Fatalf("NewCron: %v", err)
	}
	if c.Location().String() != "UTC" || c.Expression() != "0 15 10 ? * MON-FRI" {
		t.Errorf("NewCron = %q in %v, want the expression in UTC", c.Expression(), c.Location())
	}
	if err := (&schedule.Cron{}).Validate(); err == nil {
		t.Errorf("a zero Cron validates; want an error")
	}
}

func TestCronMisfire(t *testing.T) {
	t.Parallel()
	now := at(t, "2024-06-15T12:30:00Z")
	tests := []struct {
		name string
		m    schedule.MisfireInstruction
		end  string
		want []string
	}{
		{name: "ignore", m: schedule.MisfireIgnore, want: []string{"2024-06-15T11:00:00Z", "2024-06-15T12:00:00Z", "2024-06-15T13:00:00Z"}},
		{name: "smart policy fires once now", m: schedule.MisfireSmartPolicy, want: []string{"2024-06-15T12:30:00Z", "2024-06-15T13:00:00Z", "2024-06-15T14:00:00Z"}},
		{name: "fire once now", m: schedule.MisfireFireOnceNow, want: []string{"2024-06-15T12:30:00Z", "2024-06-15T13:00:00Z", "2024-06-15T14:00:00Z"}},
		{name: "do nothing", m: schedule.MisfireDoNothing, want: []string{"2024-06-15T13:00:00Z", "2024-06-15T14:00:00Z", "2024-06-15T15:00:00Z"}},
		// chime completes the trigger; Quartz would fire once after the end.
		{name: "smart policy after the end", m: schedule.MisfireSmartPolicy, end: "2024-06-15T12:00:00Z", want: nil},
		{name: "fire once now before the end", m: schedule.MisfireFireOnceNow, end: "2024-06-15T13:00:00Z", want: []string{"2024-06-15T12:30:00Z", "2024-06-15T13:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := schedule.NewCron("0 0 * * * ?", "UTC")
			if err != nil {
				t.Fatal(err)
			}
			tr := schedule.Trigger{
				Schedule:           c,
				StartTime:          at(t, "2024-06-15T08:00:00Z"),
				MisfireInstruction: tt.m,
				NextFireTime:       at(t, "2024-06-15T11:00:00Z"),
				PreviousFireTime:   at(t, "2024-06-15T10:00:00Z"),
			}
			if tt.end != "" {
				tr.EndTime = at(t, tt.end)
			}
			tr.UpdateAfterMisfire(now, nil)
			if d := diffTimes(times(t, tt.want...), tr.Upcoming(nil, 3)); d != "" {
				t.Errorf("upcoming %s", d)
			}
		})
	}
}
