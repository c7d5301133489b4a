package calendar

import (
	"testing"
	"time"
)

func TestResolveWall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		zone string
		wall string // local reading, written as UTC
		want string
	}{
		{"plain winter time", "America/New_York", "2024-01-15T09:00:00Z", "2024-01-15T14:00:00Z"},
		{"plain summer time", "America/New_York", "2024-07-15T09:00:00Z", "2024-07-15T13:00:00Z"},
		{"in the spring-forward gap reads as standard time", "America/New_York", "2024-03-10T02:30:00Z", "2024-03-10T07:30:00Z"},
		{"start of the gap is the transition", "America/New_York", "2024-03-10T02:00:00Z", "2024-03-10T07:00:00Z"},
		{"end of the gap", "America/New_York", "2024-03-10T03:00:00Z", "2024-03-10T07:00:00Z"},
		{"repeated hour is its later occurrence", "America/New_York", "2024-11-03T01:00:00Z", "2024-11-03T06:00:00Z"},
		{"just before the repeated hour", "America/New_York", "2024-11-03T00:59:59.999Z", "2024-11-03T04:59:59.999Z"},
		{"half-hour gap", "Australia/Lord_Howe", "2024-10-06T02:15:00Z", "2024-10-05T15:45:00Z"},
		{"half-hour overlap", "Australia/Lord_Howe", "2024-04-07T01:45:00Z", "2024-04-06T15:15:00Z"},
		{"far future gap", "Europe/Berlin", "2150-03-29T02:30:00Z", "2150-03-29T01:30:00Z"},
		{"far future new year in a leap year", "Europe/Berlin", "2153-01-01T00:00:00Z", "2152-12-31T23:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := resolveWall(loadLocation(t, tt.zone), instant(tt.wall))
			if !got.Equal(instant(tt.want)) {
				t.Errorf("resolveWall(%s in %s) = %s, want %s", tt.wall, tt.zone, got.UTC().Format(time.RFC3339Nano), tt.want)
			}
		})
	}
}

func TestStartOfNextDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		zone string
		from string
		want string
	}{
		{"ordinary day", "Europe/Berlin", "2024-06-01T12:00:00Z", "2024-06-01T22:00:00Z"},
		{"before spring-forward day", "America/New_York", "2024-03-09T12:00:00Z", "2024-03-10T05:00:00Z"},
		{"spring-forward day is 23 hours long", "America/New_York", "2024-03-10T12:00:00Z", "2024-03-11T04:00:00Z"},
		{"midnight in a gap starts the day at the transition", "America/Santiago", "2024-09-07T12:00:00Z", "2024-09-08T04:00:00Z"},
		{"midnight repeated starts the day at its first occurrence", "America/Havana", "2024-11-02T12:00:00Z", "2024-11-03T04:00:00Z"},
		{"far future leap year end", "Europe/Berlin", "2152-12-31T18:00:00Z", "2152-12-31T23:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := loadLocation(t, tt.zone)
			got := startOfNextDay(loc, instant(tt.from))
			if !got.Equal(instant(tt.want)) {
				t.Errorf("startOfNextDay(%s in %s) = %s, want %s", tt.from, tt.zone, got.UTC().Format(time.RFC3339Nano), tt.want)
			}
			if before := got.Add(-time.Millisecond).In(loc); before.Day() == got.In(loc).Day() {
				t.Errorf("%s is not the first instant of its day (%s is the same day)", got, before)
			}
		})
	}
}
