package chaos

import (
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// The audit's classification, on histories made up for each case: the
// soak passes only if the audit can fail.

// auditAt is the instant the cases audit.
func auditAt() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// execution is an execution of job j at auditAt.
func execution(id string, attempt int, outcome string, recovering bool) api.Execution {
	started := auditAt().Add(time.Duration(attempt) * time.Second)
	return api.Execution{ID: id, FirstID: id, Attempt: attempt, JobGroup: jobGroup, JobName: "j",
		ScheduledTime: auditAt(), StartedTime: &started, Outcome: outcome, Recovering: recovering, NodeID: "a"}
}

// nodeless is e as the node that re-runs a firing lost before any record
// of it records the lost try: without its node.
func nodeless(e api.Execution) api.Execution {
	e.NodeID = ""
	return e
}

// received is a request of job j for auditAt.
func received(id string, attempt int) request {
	return request{Job: "j", Scheduled: auditAt(), ExecutionID: id, Attempt: attempt, Node: "a"}
}

// answered is a request of job j for auditAt that the target answered
// after a delay.
func answered(id string, attempt int, after time.Duration) request {
	r := received(id, attempt)
	r.Status, r.Answered = 200, auditAt().Add(after)
	return r
}

func TestAuditInstant(t *testing.T) {
	t.Parallel()
	plain := auditJob{name: "j", maxAttempts: 1}
	recovery := auditJob{name: "j", recovery: true, maxAttempts: 1}
	retried := auditJob{name: "j", maxAttempts: 3}
	for _, tt := range []struct {
		name       string
		job        auditJob
		execs      []api.Execution
		reqs       []request
		faults     []fault
		wantClass  class
		wantReason string // a part of the reason
	}{
		{name: "succeeded once", job: plain,
			execs: []api.Execution{execution("e1", 1, "succeeded", false)}, reqs: []request{received("e1", 1)},
			wantClass: classFired, wantReason: "succeeded"},
		{name: "lost, then re-run on recovery", job: recovery,
			execs:     []api.Execution{execution("e1", 1, "node_lost", false), execution("e2", 2, "succeeded", true)},
			reqs:      []request{received("e1", 1), received("e2", 2)},
			wantClass: classFired, wantReason: "recovery re-run"},
		{name: "lost before its record, re-run on recovery", job: recovery,
			execs: []api.Execution{execution("e2", 1, "succeeded", true)}, reqs: []request{received("e2", 1)},
			wantClass: classFired, wantReason: "recovery re-run"},
		{name: "failed, then retried", job: retried,
			execs:     []api.Execution{execution("e1", 1, "failed", false), execution("e2", 2, "succeeded", false)},
			reqs:      []request{received("e1", 1), received("e2", 2)},
			wantClass: classFired, wantReason: "succeeded"},
		{name: "lost with its node, no recovery asked", job: plain,
			execs: []api.Execution{execution("e1", 1, "node_lost", false)}, reqs: []request{received("e1", 1)},
			wantClass: classExplained, wantReason: "node_lost"},
		{name: "failed with no retry left", job: retried,
			execs:     []api.Execution{execution("e1", 1, "failed", false), execution("e2", 2, "failed", false), execution("e3", 3, "failed", false)},
			wantClass: classExplained, wantReason: "failed"},
		{name: "two first attempts in the history", job: recovery,
			execs:     []api.Execution{execution("e1", 1, "succeeded", false), execution("e2", 1, "succeeded", false)},
			reqs:      []request{received("e1", 1), received("e2", 1)},
			wantClass: classDup, wantReason: "2 first attempts in the history"},
		{name: "two first attempts received for a job never re-run", job: plain,
			execs:     []api.Execution{execution("e1", 1, "succeeded", false)},
			reqs:      []request{received("e1", 1), received("e9", 1)},
			wantClass: classDup, wantReason: "2 first attempts received"},
		{name: "one execution received twice", job: recovery,
			execs:     []api.Execution{execution("e1", 1, "succeeded", false)},
			reqs:      []request{received("e1", 1), received("e1", 1)},
			wantClass: classDup, wantReason: "received more than once"},
		{name: "received but not in the history", job: recovery,
			execs:     []api.Execution{execution("e2", 1, "succeeded", true)},
			reqs:      []request{received("e1", 1), received("e2", 1)},
			wantClass: classUnexplained, wantReason: "execution e1 (attempt 1 on node a) was received but is not in the history"},
		{name: "received, nothing in the history", job: plain,
			reqs:      []request{received("e1", 1)},
			wantClass: classUnexplained, wantReason: "not in the history"},
		{name: "lost and not re-run, though recovery is asked", job: recovery,
			execs: []api.Execution{execution("e1", 1, "node_lost", false)}, reqs: []request{received("e1", 1)},
			wantClass: classUnexplained, wantReason: "not re-run"},
		{name: "cancelled and not re-run, though recovery is asked", job: recovery,
			execs: []api.Execution{execution("e1", 1, "cancelled", false)}, reqs: []request{received("e1", 1)},
			wantClass: classUnexplained, wantReason: "not re-run"},
		{name: "failed with retries left, no retry", job: retried,
			execs: []api.Execution{execution("e1", 1, "failed", false)}, reqs: []request{received("e1", 1)},
			wantClass: classUnexplained, wantReason: "no retry ran"},
		{name: "still running", job: plain,
			execs: []api.Execution{execution("e1", 1, "running", false)}, reqs: []request{received("e1", 1)},
			wantClass: classUnexplained, wantReason: "still running"},
		{name: "re-run though no recovery is asked", job: plain,
			execs:     []api.Execution{execution("e1", 1, "node_lost", false), execution("e2", 2, "succeeded", true)},
			reqs:      []request{received("e1", 1), received("e2", 2)},
			wantClass: classUnexplained, wantReason: "does not request recovery"},
		{name: "succeeded but never received", job: plain,
			execs:     []api.Execution{execution("e1", 1, "succeeded", false)},
			wantClass: classUnexplained, wantReason: "never received"},
		{name: "lost with its node after the answer, killed then", job: plain,
			execs: []api.Execution{execution("e1", 1, "node_lost", false)}, reqs: []request{answered("e1", 1, time.Second)},
			faults:    []fault{{kind: faultKill9, node: "a", start: auditAt().Add(1500 * time.Millisecond), held: time.Second}},
			wantClass: classExplained, wantReason: "node_lost"},
		{name: "lost with its node after the answer, cut off past DeadAfter then", job: plain,
			execs: []api.Execution{execution("e1", 1, "node_lost", false)}, reqs: []request{answered("e1", 1, time.Second)},
			faults:    []fault{{kind: faultCut, node: "a", start: auditAt(), held: deadAfter + time.Second}},
			wantClass: classExplained, wantReason: "node_lost"},
		{name: "lost before any record, answered just before its node was killed", job: recovery,
			execs:     []api.Execution{nodeless(execution("e1", 1, "node_lost", false)), execution("e2", 2, "succeeded", true)},
			reqs:      []request{answered("e1", 1, time.Second), received("e2", 2)},
			faults:    []fault{{kind: faultKill9, node: "a", start: auditAt().Add(2 * time.Second), held: time.Second}},
			wantClass: classFired, wantReason: "recovery re-run"},
		{name: "lost before any record, answered while its node held its lease", job: recovery,
			execs:     []api.Execution{nodeless(execution("e1", 1, "node_lost", false)), execution("e2", 2, "succeeded", true)},
			reqs:      []request{answered("e1", 1, time.Second), received("e2", 2)},
			faults:    []fault{{kind: faultKill9, node: "b", start: auditAt().Add(2 * time.Second), held: time.Second}},
			wantClass: classUnexplained, wantReason: "no fault made node a lose its lease"},
		{name: "recorded lost, answered while its node held its lease", job: plain,
			execs: []api.Execution{execution("e1", 1, "node_lost", false)}, reqs: []request{answered("e1", 1, time.Second)},
			faults: []fault{
				{kind: faultKill9, node: "a", start: auditAt().Add(time.Minute), held: time.Second},
				{kind: faultKill9, node: "b", start: auditAt().Add(time.Second), held: time.Second},
				{kind: faultCut, node: "a", start: auditAt().Add(time.Second), held: time.Second},
			},
			wantClass: classUnexplained, wantReason: "its end was not recorded"},
		{name: "nothing", job: plain, wantClass: classMiss},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inHistory := make(map[string]bool)
			for _, e := range tt.execs {
				inHistory[e.ID] = true
			}
			got := auditInstant(tt.job, auditAt(), tt.execs, tt.reqs, inHistory, tt.faults)
			if got.class != tt.wantClass || !strings.Contains(got.reason, tt.wantReason) {
				t.Errorf("got %s, want %s with %q", got, tt.wantClass, tt.wantReason)
			}
		})
	}
}

func TestAuditDecisions(t *testing.T) {
	t.Parallel()
	job := auditJob{name: "j", instants: []time.Time{auditAt()}, maxAttempts: 1}
	for _, tt := range []struct {
		name      string
		decisions []api.Decision
		want      class
	}{
		{name: "none", want: classMiss},
		{name: "misfired", decisions: []api.Decision{{ScheduledTime: auditAt(), Kind: "misfired"}}, want: classExplained},
		{name: "another instant's misfire", decisions: []api.Decision{{ScheduledTime: auditAt().Add(time.Second), Kind: "misfired"}}, want: classMiss},
		{name: "fired without an execution", decisions: []api.Decision{{ScheduledTime: auditAt(), Kind: "fired", ExecutionID: "e1"}}, want: classUnexplained},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := audit([]auditJob{job}, nil, nil, nil, func(string, time.Time) ([]api.Decision, error) { return tt.decisions, nil })
			if err != nil {
				t.Fatal(err)
			}
			if got := res.verdicts[0].class; got != tt.want {
				t.Errorf("got %s, want %s", res.verdicts[0], tt.want)
			}
		})
	}
}

func TestAuditCountsUnexpectedAndRunning(t *testing.T) {
	t.Parallel()
	job := auditJob{name: "j", instants: []time.Time{auditAt()}, maxAttempts: 1}
	stray := execution("e2", 1, "running", false)
	stray.ScheduledTime = auditAt().Add(500 * time.Millisecond)
	execs := map[string][]api.Execution{"j": {execution("e1", 1, "succeeded", false), stray}}
	reqs := []request{received("e1", 1), {Job: "other", Scheduled: auditAt(), ExecutionID: "e3", Attempt: 1}}
	res, err := audit([]auditJob{job}, execs, reqs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.count(classFired); got != 1 {
		t.Errorf("fired = %d, want 1", got)
	}
	if len(res.unexpected) != 2 {
		t.Errorf("unexpected = %v, want the execution at a time that is no instant and the request for another job", res.unexpected)
	}
	if len(res.running) != 1 || res.running[0].ID != "e2" {
		t.Errorf("running = %v, want e2", res.running)
	}
	if got := len(res.failures()); got != 2 {
		t.Errorf("failures = %d, want 2", got)
	}
}
