package alert_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
)

// A Notifier posting to a webhook; an httptest server stands in for the
// chat tool and prints what it receives.
func Example() {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p alert.WebhookPayload
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Println(p.Kind, p.Job.Group, p.Job.Name, p.ExecutionID)
		fmt.Println(p.Text)
	}))
	defer hook.Close()

	n, err := alert.New(alert.Config{DefaultWebhooks: []string{hook.URL}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := n.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	n.Notify(alert.Event{
		Kind:        alert.KindTimeout,
		JobGroup:    "reports",
		JobName:     "daily",
		ExecutionID: "e-17",
		Attempt:     1,
		NodeID:      "node-a",
		Error:       "context deadline exceeded",
		Detail:      "The job's time limit is 5m0s.",
	})
	// Stop returns once the queued alert is delivered.
	if err := n.Stop(ctx); err != nil {
		fmt.Println(err)
	}
	// Output:
	// timeout reports daily e-17
	// *Job reports.daily timed out*
	// Execution: `e-17` (attempt 1)
	// Node: `node-a`
	// ```context deadline exceeded```
	// The job's time limit is 5m0s.
}

// lastSuccesses is a SuccessHistory kept in a map; the server reads its
// execution history instead.
type lastSuccesses map[alert.JobKey]time.Time

func (l lastSuccesses) LastSuccess(_ context.Context, group, name string) (time.Time, error) {
	return l[alert.JobKey{Group: group, Name: name}], nil
}

// A DeadManChecker reports a nightly job that missed its 25-hour window,
// once; the caller passes its events to Notifier.Notify.
func ExampleDeadManChecker() {
	lastRun := time.Date(2025, 3, 1, 2, 0, 0, 0, time.UTC)
	checker := alert.NewDeadManChecker(lastSuccesses{{Group: "etl", Name: "nightly"}: lastRun}, nil)
	watches := []alert.DeadManWatch{{JobGroup: "etl", JobName: "nightly", Window: 25 * time.Hour}}

	for _, now := range []time.Time{
		lastRun.Add(24 * time.Hour),
		lastRun.Add(25 * time.Hour),
		lastRun.Add(26 * time.Hour),
	} {
		events, err := checker.Check(context.Background(), now, watches)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %d alerts\n", now.Format(time.DateTime), len(events))
		for _, ev := range events {
			fmt.Println(ev.Kind, ev.JobKey(), ev.Detail)
		}
	}
	// Output:
	// 2025-03-02 02:00:00: 0 alerts
	// 2025-03-02 03:00:00: 1 alerts
	// dead_man etl.nightly No success within 25h0m0s; the last one finished at 2025-03-01T02:00:00Z.
	// 2025-03-02 04:00:00: 0 alerts
}

// A job's failure triggers a PagerDuty incident, and its recovery
// resolves it: both events carry the job's dedup key. An httptest server
// stands in for PagerDuty's Events API v2.
func Example_pagerDuty() {
	pd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev alert.PagerDutyEvent
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		summary := ""
		if ev.Payload != nil {
			summary = ev.Payload.Summary + " (" + ev.Payload.Severity + ")"
		}
		fmt.Println(ev.EventAction, ev.DedupKey, summary)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer pd.Close()

	n, err := alert.New(alert.Config{
		PagerDutyURL:     pd.URL,
		DefaultPagerDuty: []alert.PagerDutyTarget{{RoutingKey: "0123456789abcdef0123456789abcdef", Severity: alert.SeverityCritical}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := n.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	n.Notify(alert.Event{Kind: alert.KindFailure, JobGroup: "billing", JobName: "invoice", NodeID: "node-a", Error: "exit status 1"})
	n.Notify(alert.Event{Kind: alert.KindRecovered, JobGroup: "billing", JobName: "invoice", NodeID: "node-b"})
	if err := n.Stop(ctx); err != nil {
		fmt.Println(err)
	}
	// Output:
	// trigger chime/job/billing.invoice Job billing.invoice failed (critical)
	// resolve chime/job/billing.invoice
}
