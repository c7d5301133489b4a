package main

import (
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0 ms"},
		{-3828253 * time.Nanosecond, "\u22124 ms"},
		{3828253 * time.Nanosecond, "4 ms"},
		{-400 * time.Microsecond, "0 ms"},
		{400 * time.Microsecond, "0 ms"},
		{999 * time.Millisecond, "999 ms"},
		{999600 * time.Microsecond, "1 s"},
		{1500 * time.Millisecond, "1.5 s"},
		{2 * time.Second, "2 s"},
		{9960 * time.Millisecond, "10 s"},
		{42 * time.Second, "42 s"},
		{59600 * time.Millisecond, "1 min 0 s"},
		{125 * time.Second, "2 min 5 s"},
		{-125 * time.Second, "\u22122 min 5 s"},
		{3*time.Hour + 20*time.Minute + 10*time.Second, "3 h 20 min"},
		{50 * time.Hour, "50 h 0 min"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.d); got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestFormatOffset(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"-3.828253ms": "\u22124 ms", "-0.2ms": "0 ms", "": "-", "unknown": "unknown"} {
		if got := formatOffset(in); got != want {
			t.Errorf("formatOffset(%q) = %q, want %q", in, got, want)
		}
	}
}
