package history_test

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server/history"
)

// TestActivity counts known executions per bucket on every dialect.
func TestActivity(t *testing.T) {
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			url := db.URL(t)
			t.Run("Buckets", func(t *testing.T) { testActivityBuckets(t, newHistory(t, url, nil)) })
			t.Run("PartialBucket", func(t *testing.T) { testActivityPartialBucket(t, newHistory(t, url, nil)) })
			t.Run("Invalid", func(t *testing.T) { testActivityInvalid(t, newHistory(t, url, nil)) })
		})
	}
}

// lagged returns a running first attempt started at the given time,
// scheduled lag before it.
func lagged(id string, started time.Time, lag time.Duration) *history.Execution {
	e := execution(id, "g", id, started)
	e.ScheduledTime = started.Add(-lag)
	return e
}

func testActivityBuckets(t *testing.T, h *history.History) {
	m := time.Minute
	// Outside the window: one before (running, so counted by Running
	// only) and one at its exclusive end.
	start(t, h, lagged("before", t0.Add(-time.Nanosecond), time.Second), lagged("end", t0.Add(5*m), time.Second))
	finish(t, h, "end", history.OutcomeSucceeded, t0.Add(6*m))
	// Bucket 0: a success (lag 1 s) and a failure (lag 3 s).
	start(t, h, lagged("b0ok", t0.Add(10*time.Second), time.Second), lagged("b0bad", t0.Add(50*time.Second), 3*time.Second))
	finish(t, h, "b0ok", history.OutcomeSucceeded, t0.Add(11*time.Second))
	finish(t, h, "b0bad", history.OutcomeFailed, t0.Add(51*time.Second))
	// Bucket 1: a time-out on its first instant (lag 2 s) and a manual
	// success, which has no lag.
	manual := lagged("b1manual", t0.Add(90*time.Second), 10*time.Second)
	manual.Manual = true
	start(t, h, lagged("b1timeout", t0.Add(m), 2*time.Second), manual)
	finish(t, h, "b1timeout", history.OutcomeTimedOut, t0.Add(m+time.Second))
	finish(t, h, "b1manual", history.OutcomeSucceeded, t0.Add(91*time.Second))
	// Bucket 2: a cancelled run (lag 1 s): a fire, neither success nor
	// failure.
	start(t, h, lagged("b2cancel", t0.Add(2*m), time.Second))
	finish(t, h, "b2cancel", history.OutcomeCancelled, t0.Add(2*m+time.Second))
	// Bucket 3: a running one (lag 500 ms) and, on its last nanosecond, a
	// retry lost with its node (a retry has no lag).
	retry := lagged("b3retry", t0.Add(4*m-time.Nanosecond), time.Hour)
	retry.FirstID, retry.Attempt = "b1timeout", 2
	start(t, h, lagged("b3run", t0.Add(3*m+10*time.Second), 500*time.Millisecond), retry)
	finish(t, h, "b3retry", history.OutcomeNodeLost, t0.Add(4*m))
	// Bucket 4: nothing.

	got, err := h.Activity(t.Context(), &history.ActivityParams{From: t0, To: t0.Add(5 * m), Bucket: m})
	if err != nil {
		t.Fatalf("Activity: %v", err)
	}
	s := time.Second
	want := &history.Activity{
		From: t0, To: t0.Add(5 * m), Bucket: m,
		Buckets: []history.ActivityBucket{
			{Start: t0, Fires: 2, Succeeded: 1, Failed: 1, LagAvg: 2 * s, LagMax: 3 * s, Lagged: 2},
			{Start: t0.Add(m), Fires: 2, Succeeded: 1, Failed: 1, LagAvg: 2 * s, LagMax: 2 * s, Lagged: 1},
			{Start: t0.Add(2 * m), Fires: 1, LagAvg: s, LagMax: s, Lagged: 1},
			{Start: t0.Add(3 * m), Fires: 2, Failed: 1, LagAvg: 500 * time.Millisecond, LagMax: 500 * time.Millisecond, Lagged: 1},
			{Start: t0.Add(4 * m)},
		},
		// Lags 0.5, 1, 1, 2, 3 s: nearest ranks 3, 5 and 5.
		LagP50: s, LagP95: 3 * s, LagP99: 3 * s, LagSampled: 5,
		Running: 2, // b3run and before
	}
	equal(t, "Activity", got, want)
}

func testActivityPartialBucket(t *testing.T, h *history.History) {
	// A 150 s window in 60 s buckets: the third bucket is cut at To.
	start(t, h, lagged("a", t0.Add(30*time.Second), time.Second), lagged("b", t0.Add(40*time.Second), 2*time.Second),
		lagged("c", t0.Add(149*time.Second), time.Second), lagged("late", t0.Add(150*time.Second), time.Second))
	for _, id := range []string{"a", "b", "c", "late"} {
		finish(t, h, id, history.OutcomeSucceeded, t0.Add(200*time.Second))
	}
	got, err := h.Activity(t.Context(), &history.ActivityParams{From: t0, To: t0.Add(150 * time.Second), Bucket: time.Minute})
	if err != nil {
		t.Fatalf("Activity: %v", err)
	}
	want := []history.ActivityBucket{
		{Start: t0, Fires: 2, Succeeded: 2, LagAvg: 1500 * time.Millisecond, LagMax: 2 * time.Second, Lagged: 2},
		{Start: t0.Add(time.Minute)},
		{Start: t0.Add(2 * time.Minute), Fires: 1, Succeeded: 1, LagAvg: time.Second, LagMax: time.Second, Lagged: 1},
	}
	equal(t, "Buckets", got.Buckets, want)
	if got.Running != 0 || got.LagSampled != 3 || got.LagP50 != time.Second || got.LagP99 != 2*time.Second {
		t.Errorf("Running %d, LagSampled %d, LagP50 %s, LagP99 %s; want 0, 3, 1s, 2s",
			got.Running, got.LagSampled, got.LagP50, got.LagP99)
	}
}

func testActivityInvalid(t *testing.T, h *history.History) {
	tests := []struct {
		name string
		p    *history.ActivityParams
		want string
	}{
		{"Nil", nil, "nil ActivityParams"},
		{"NoFrom", &history.ActivityParams{To: t0, Bucket: time.Minute}, "ActivityParams.From is required"},
		{"NoTo", &history.ActivityParams{From: t0, Bucket: time.Minute}, "ActivityParams.To is required"},
		{"Backwards", &history.ActivityParams{From: t0, To: t0, Bucket: time.Minute}, "is not before"},
		{"NoBucket", &history.ActivityParams{From: t0, To: t0.Add(time.Hour)}, "ActivityParams.Bucket"},
		{"TooManyBuckets", &history.ActivityParams{From: t0, To: t0.Add(10_001 * time.Second), Bucket: time.Second}, "10001 buckets"},
	}
	for _, tc := range tests {
		_, err := h.Activity(t.Context(), tc.p)
		wantInvalid(t, tc.name, err, tc.want)
	}
}
