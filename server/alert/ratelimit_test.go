package alert_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
)

// TestRateLimit drives the limit with a fake clock: a flapping job sends
// one alert per period and per kind, other jobs are not held back by it,
// and the next alert that goes out says how many were suppressed.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	hook := startHookServer(t)
	clock := &fakeClock{now: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)}
	n, rec := newNotifier(t, alert.Config{DefaultWebhooks: []string{hook.URL}, Now: clock.Now})
	if err := n.Start(t.Context()); err != nil {
		t.Fatal(err)
	}

	flap := failureEvent()
	flap.At = time.Time{} // stamped by Notify from the clock
	for range 4 {
		n.Notify(flap) // 1 sent, 3 suppressed
	}
	timeout := flap
	timeout.Kind = alert.KindTimeout
	n.Notify(timeout) // another kind: sent
	other := flap
	other.JobName = "other"
	n.Notify(other) // another job: sent

	clock.Advance(9 * time.Minute)
	n.Notify(flap) // suppressed: the period is not over
	clock.Advance(time.Minute)
	n.Notify(flap) // sent, saying 4 were suppressed
	n.Notify(flap) // suppressed again

	if err := n.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	type sent struct {
		kind       alert.Kind
		job        string
		at         time.Time
		suppressed int
	}
	var got []sent
	for _, r := range hook.Requests() {
		p := r.Payload
		got = append(got, sent{p.Kind, p.Job.Name, p.At, p.Suppressed})
	}
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	want := []sent{
		{alert.KindFailure, "invoice", t0, 0},
		{alert.KindTimeout, "invoice", t0, 0},
		{alert.KindFailure, "other", t0, 0},
		{alert.KindFailure, "invoice", t0.Add(10 * time.Minute), 4},
	}
	if len(got) != len(want) {
		t.Fatalf("sent %+v, want %+v; logs: %+v", got, want, rec.Records())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("alert %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if last := hook.Requests()[len(want)-1].Payload.Text; !strings.Contains(last, "(4 similar alerts were suppressed)") {
		t.Errorf("text %q does not mention the suppressed alerts", last)
	}
	if got := n.Stats(); got != (alert.Stats{Delivered: 4, Suppressed: 5}) {
		t.Errorf("Stats = %+v, want 4 delivered and 5 suppressed", got)
	}
}

func TestRateLimitSettings(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		limit alert.RateLimit
		// at are the offsets from t0 at which one failure of the same
		// job is notified.
		at   []time.Duration
		want int // alerts sent
	}{
		{"default: 1 per 10 minutes", alert.RateLimit{}, []time.Duration{0, time.Minute, 10 * time.Minute, 19 * time.Minute, 20 * time.Minute}, 3},
		{"3 per hour: a burst of 3, then one every 20 minutes", alert.RateLimit{Alerts: 3, Per: time.Hour},
			[]time.Duration{0, 0, 0, 0, 19 * time.Minute, 20 * time.Minute, 21 * time.Minute}, 4},
		{"off", alert.RateLimit{Alerts: -1}, []time.Duration{0, 0, 0, 0, 0}, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			hook := startHookServer(t)
			clock := &fakeClock{now: t0}
			n, _ := newNotifier(t, alert.Config{
				DefaultWebhooks: []string{hook.URL},
				RateLimit:       tt.limit,
				Now:             clock.Now,
			})
			for _, d := range tt.at {
				clock.mu.Lock()
				clock.now = t0.Add(d)
				clock.mu.Unlock()
				ev := failureEvent()
				ev.At = time.Time{}
				n.Notify(ev)
			}
			deliver(t, n)
			if got := len(hook.Requests()); got != tt.want {
				t.Errorf("sent %d alerts, want %d", got, tt.want)
			}
		})
	}
}
