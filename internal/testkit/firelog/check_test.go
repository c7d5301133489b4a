package firelog

import (
	"fmt"
	"testing"
	"time"
)

func TestCheckCountsDuplicatesMissesAndReruns(t *testing.T) {
	at := func(ms int64) time.Time { return time.UnixMilli(ms) }
	expected := map[FireKey]bool{
		{"g.t1", 1000}: true,
		{"g.t1", 2000}: true,
		{"g.t2", 1000}: true,
		{"g.t2", 2000}: true,
	}
	records := []Record{
		{Trigger: "g.t1", Scheduled: at(1000), Actual: at(1010), Node: "a", Event: EventFire},
		{Trigger: "g.t1", Scheduled: at(2000), Actual: at(2020), Node: "a", Event: EventFire},
		{Trigger: "g.t1", Scheduled: at(2000), Actual: at(2500), Node: "b", Recovering: true, Event: EventFire},
		{Trigger: "g.t2", Scheduled: at(1000), Actual: at(1030), Node: "b", Event: EventStart},
		{Trigger: "g.t2", Scheduled: at(1000), Actual: at(1500), Node: "b", Event: EventEnd},
		{Trigger: "g.t2", Scheduled: at(3000), Actual: at(3000), Node: "c", Event: EventFire},
		{Trigger: "other.t", Scheduled: at(1000), Actual: at(1000), Node: "c", Event: EventFire},
	}
	tests := []struct {
		name                     string
		opts                     CheckOptions
		wantDuplicates, wantRuns int
	}{
		{"a recovery re-run is a duplicate by default", CheckOptions{}, 1, 5},
		{"a recovery re-run is allowed when asked", CheckOptions{AllowRecoveryReruns: true}, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(records, expected, "g", tt.opts)
			got := fmt.Sprintf("fires=%d distinct=%d duplicates=%d misses=%d unexpected=%d reruns=%d lags=%v",
				r.Fires, r.Distinct, r.Duplicates, r.Misses, r.Unexpected, r.Reruns, r.Lags)
			want := fmt.Sprintf("fires=%d distinct=4 duplicates=%d misses=1 unexpected=1 reruns=1 lags=[0s 10ms 20ms 30ms]",
				tt.wantRuns, tt.wantDuplicates)
			if got != want {
				t.Errorf("Check:\n got %s\nwant %s", got, want)
			}
		})
	}
}
