package history_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/history"
)

func testDecisions(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	two := t0.Truncate(24 * time.Hour).Add(2 * time.Hour)
	// "Why did reports.nightly not run at 02:00?" Its 01:00 run fired, the
	// 02:00 one was found late and skipped by its misfire instruction, and
	// a pause was recorded without a scheduled time.
	ds := []*history.Decision{
		{JobGroup: "reports", JobName: "nightly", TriggerGroup: "tg", TriggerName: "hourly", ScheduledTime: two.Add(-time.Hour),
			At: two.Add(-time.Hour), Kind: history.DecisionFired, NodeID: "n1", ExecutionID: "e1"},
		{JobGroup: "reports", JobName: "nightly", TriggerGroup: "tg", TriggerName: "hourly", ScheduledTime: two,
			At: two.Add(20 * time.Minute), Kind: history.DecisionMisfired, Reason: "no node was up; misfire instruction do-nothing", NodeID: "n2"},
		{JobGroup: "reports", JobName: "nightly", At: two.Add(30 * time.Minute), Kind: history.DecisionPaused, Reason: "paused by ann"},
		{JobGroup: "reports", JobName: "weekly", ScheduledTime: two, At: two, Kind: history.DecisionVetoed, Reason: "listener quota"},
		{ID: "custom-id", JobGroup: "billing", JobName: "invoice", ScheduledTime: two, At: two, Kind: "held_for_review"},
	}
	for i, d := range ds {
		if err := h.RecordDecision(ctx, d); err != nil {
			t.Fatalf("RecordDecision #%d: %v", i, err)
		}
		if d.ID == "" {
			t.Errorf("RecordDecision #%d left ID empty", i)
		}
	}
	if ds[0].ID == ds[1].ID {
		t.Errorf("two decisions got one ID %q", ds[0].ID)
	}
	deref := func(ps ...*history.Decision) []history.Decision {
		var out []history.Decision
		for _, p := range ps {
			out = append(out, *p)
		}
		return out
	}
	tests := []struct {
		name       string
		group, job string
		from, to   time.Time
		limit      int
		want       []history.Decision
	}{
		{"AroundTwo", "reports", "nightly", two.Add(-5 * time.Minute), two.Add(5 * time.Minute), 0, deref(ds[1])},
		{"Job", "reports", "nightly", time.Time{}, time.Time{}, 0, deref(ds[2], ds[1], ds[0])},
		{"JobLimited", "reports", "nightly", time.Time{}, time.Time{}, 2, deref(ds[2], ds[1])},
		{"Group", "reports", "", two, time.Time{}, 0, deref(ds[2], ds[1], ds[3])},
		{"All", "", "", two, two.Add(time.Minute), 0, deref(ds[1], ds[3], ds[4])},
		{"None", "reports", "monthly", time.Time{}, time.Time{}, 0, nil},
	}
	for _, tc := range tests {
		got, err := h.Decisions(ctx, tc.group, tc.job, tc.from, tc.to, tc.limit)
		if err != nil {
			t.Errorf("%s: Decisions: %v", tc.name, err)
			continue
		}
		// Rows of one time are ordered by their random IDs, descending.
		want := slices.Clone(tc.want)
		slices.SortStableFunc(want, func(a, b history.Decision) int {
			if c := decisionTime(b).Compare(decisionTime(a)); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		equal(t, tc.name, got, want)
	}

	if err := h.RecordDecision(ctx, &history.Decision{ID: "custom-id", JobGroup: "g", JobName: "j", At: two, Kind: history.DecisionFired}); !errors.Is(err, history.ErrExists) {
		t.Errorf("RecordDecision with a taken ID: %v, want ErrExists", err)
	}
	bad := []struct {
		name string
		d    history.Decision
		want string
	}{
		{"NoJob", history.Decision{JobName: "j", At: two, Kind: history.DecisionFired}, "JobGroup"},
		{"NoKind", history.Decision{JobGroup: "g", JobName: "j", At: two}, "Kind"},
		{"LongKind", history.Decision{JobGroup: "g", JobName: "j", At: two, Kind: history.DecisionKind(strings.Repeat("k", 33))}, "Kind"},
		{"NoTime", history.Decision{JobGroup: "g", JobName: "j", Kind: history.DecisionFired}, "At"},
	}
	for _, tc := range bad {
		wantInvalid(t, tc.name, h.RecordDecision(ctx, &tc.d), tc.want)
		if tc.d.ID != "" {
			t.Errorf("%s: refused decision got ID %q", tc.name, tc.d.ID)
		}
	}
	_, err := h.Decisions(ctx, "reports", "nightly", two, two.Add(-time.Second), 0)
	wantInvalid(t, "Decisions with from after to", err, "from")
	_, err = h.Decisions(ctx, "reports", "nightly", time.Time{}, time.Time{}, history.MaxLimit+1)
	wantInvalid(t, "Decisions with a large limit", err, "limit")
}

// decisionTime is the time Decisions selects and orders by.
func decisionTime(d history.Decision) time.Time {
	if d.ScheduledTime.IsZero() {
		return d.At
	}
	return d.ScheduledTime
}
