package alert

import (
	"testing"
	"time"
)

// TestLimiterForgetsIdleKeys keeps the limiter's memory bounded by the
// jobs that alerted recently, not by every job that ever alerted.
func TestLimiterForgetsIdleKeys(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(RateLimit{Alerts: 1, Per: 10 * time.Minute})
	quiet := limitKey{kind: KindFailure, name: "quiet"}
	flapping := limitKey{kind: KindFailure, name: "flapping"}
	l.allow(quiet, t0)
	l.allow(flapping, t0)
	l.allow(flapping, t0.Add(time.Minute)) // suppressed, so remembered

	l.allow(limitKey{kind: KindFailure, name: "new"}, t0.Add(10*time.Minute))

	if _, ok := l.buckets[quiet]; ok {
		t.Error("an idle key with a full bucket is still kept")
	}
	if b, ok := l.buckets[flapping]; !ok || b.suppressed != 1 {
		t.Errorf("a key with a suppressed alert was forgotten or changed: %+v", b)
	}
	if ok, suppressed := l.allow(flapping, t0.Add(10*time.Minute)); !ok || suppressed != 1 {
		t.Errorf("allow(flapping) = %v, %d; want true, 1", ok, suppressed)
	}
}
