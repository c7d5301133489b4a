package outage

import (
	"testing"
	"time"
)

func TestBackoffDoublesUpToMaxAndLogsAreSpaced(t *testing.T) {
	t.Parallel()
	tr := New(100*time.Millisecond, time.Second, 2*time.Second)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	want := []Failure{
		{First: true, Log: true, Attempts: 1, Duration: 0, Backoff: 100 * time.Millisecond},
		{Attempts: 2, Duration: 100 * time.Millisecond, Backoff: 200 * time.Millisecond},
		{Attempts: 3, Duration: 300 * time.Millisecond, Backoff: 400 * time.Millisecond},
		{Attempts: 4, Duration: 700 * time.Millisecond, Backoff: 800 * time.Millisecond},
		{Attempts: 5, Duration: 1500 * time.Millisecond, Backoff: time.Second},
		{Log: true, Attempts: 6, Duration: 2500 * time.Millisecond, Backoff: time.Second},
		{Attempts: 7, Duration: 3500 * time.Millisecond, Backoff: time.Second},
		{Log: true, Attempts: 8, Duration: 4500 * time.Millisecond, Backoff: time.Second},
	}
	for i, w := range want {
		got := tr.Fail(now)
		if got != w {
			t.Errorf("failure %d = %+v, want %+v", i+1, got, w)
		}
		if !tr.Failing() {
			t.Errorf("failure %d: Failing() = false", i+1)
		}
		now = now.Add(got.Backoff)
	}
	r, ended := tr.Succeed(now)
	if !ended || r != (Recovery{Duration: 5500 * time.Millisecond, Attempts: 8}) {
		t.Errorf("Succeed = %+v, %v; want 5.5s after 8 attempts, true", r, ended)
	}
	if tr.Failing() {
		t.Error("Failing() after a success")
	}
	if _, ended := tr.Succeed(now); ended {
		t.Error("a second success ended an outage again")
	}
	// A new outage starts over: logged, shortest backoff.
	if got := tr.Fail(now); !got.First || !got.Log || got.Backoff != 100*time.Millisecond || got.Attempts != 1 {
		t.Errorf("first failure of a new outage = %+v", got)
	}
}
