package chaos

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// class is what the audit concludes about one scheduled instant of a job.
type class string

// The classes, from best to worst.
const (
	// classFired: the firing succeeded in the history, once (a recovery
	// re-run of a job that requests recovery included), and the target
	// received each execution the history says ran.
	classFired class = "fired"
	// classExplained: the firing did not succeed, and the history says
	// why: its last execution was node_lost, cancelled, skipped, or failed
	// with no retry left; or, with no execution at all, a decision
	// (misfired, skipped, vetoed, paused, blocked) names the instant.
	classExplained class = "explained"
	// classDup: the instant fired twice: two first attempts (not re-runs)
	// in the history, two first attempts of a job that does not request
	// recovery at the target, or one execution sent twice.
	classDup class = "dup"
	// classMiss: nothing at all: no execution, no request, no decision.
	classMiss class = "miss"
	// classUnexplained: something happened that the history does not
	// account for (see auditInstant for the cases).
	classUnexplained class = "unexplained"
)

// auditJob is what the audit knows of one job.
type auditJob struct {
	name     string
	instants []time.Time // every scheduled instant of the window, in order
	recovery bool        // requests_recovery
	// maxAttempts is the retry policy's; 1 without retries.
	maxAttempts int
}

// verdict is the audit of one instant.
type verdict struct {
	job    string
	at     time.Time
	class  class
	reason string   // why: the outcome that explains it, or the problems
	ids    []string // the execution IDs involved
}

func (v verdict) String() string {
	return fmt.Sprintf("%s %s at %s: %s [%s]", v.class, v.job, v.at.UTC().Format("15:04:05.000"), v.reason, strings.Join(v.ids, " "))
}

// decisionsFunc returns the decisions the history recorded about a job's
// instant (through GET /api/v1/jobs/{group}/{name}/explain).
type decisionsFunc func(job string, at time.Time) ([]api.Decision, error)

// auditResult is the audit of every instant of every job.
type auditResult struct {
	verdicts []verdict // every instant, job by job
	// unexpected are executions and requests for no scheduled instant.
	unexpected []verdict
	// running are the executions still running.
	running []api.Execution
	// explainedBy counts the explained instants by reason.
	explainedBy map[string]int
	requests    int
	executions  int
	reruns      int // recovering executions
}

// count returns how many instants have class c.
func (r *auditResult) count(c class) int {
	n := 0
	for _, v := range r.verdicts {
		if v.class == c {
			n++
		}
	}
	return n
}

// failures returns the verdicts that fail the suite: dup, miss and
// unexplained instants, and the unexpected firings.
func (r *auditResult) failures() []verdict {
	var out []verdict
	for _, v := range r.verdicts {
		if v.class == classDup || v.class == classMiss || v.class == classUnexplained {
			out = append(out, v)
		}
	}
	return append(out, r.unexpected...)
}

// audit classifies every instant of every job from the executions the
// history holds (by job name), the requests the target received, and,
// for instants with neither, the decisions.
func audit(jobs []auditJob, execs map[string][]api.Execution, reqs []request, faults []fault, decisions decisionsFunc) (*auditResult, error) {
	r := &auditResult{explainedBy: make(map[string]int), requests: len(reqs)}
	reqsByJob := make(map[string][]request)
	for _, q := range reqs {
		reqsByJob[q.Job] = append(reqsByJob[q.Job], q)
	}
	known := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		known[j.name] = true
		vs, unexpected, err := auditJobInstants(j, execs[j.name], reqsByJob[j.name], faults, decisions)
		if err != nil {
			return nil, err
		}
		r.verdicts = append(r.verdicts, vs...)
		r.unexpected = append(r.unexpected, unexpected...)
		for _, v := range vs {
			if v.class == classExplained {
				r.explainedBy[v.reason]++
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(execs)) {
		for _, e := range execs[name] {
			r.executions++
			if e.Recovering {
				r.reruns++
			}
			if e.Outcome == "running" {
				r.running = append(r.running, e)
			}
		}
	}
	for _, q := range reqs {
		if !known[q.Job] {
			r.unexpected = append(r.unexpected, verdict{job: q.Job, at: q.Scheduled, class: classUnexplained,
				reason: "request for a job the suite did not create", ids: []string{q.ExecutionID}})
		}
	}
	return r, nil
}

// auditJobInstants classifies the instants of one job, and returns the
// executions and requests for times that are not instants of the job.
func auditJobInstants(j auditJob, execs []api.Execution, reqs []request, faults []fault, decisions decisionsFunc) ([]verdict, []verdict, error) {
	execsAt := make(map[int64][]api.Execution)
	inHistory := make(map[string]bool)
	for _, e := range execs {
		inHistory[e.ID] = true
		if e.Manual {
			continue // none in the suite; a run by hand is no firing
		}
		k := e.ScheduledTime.UnixNano()
		execsAt[k] = append(execsAt[k], e)
	}
	reqsAt := make(map[int64][]request)
	for _, q := range reqs {
		k := q.Scheduled.UnixNano()
		reqsAt[k] = append(reqsAt[k], q)
	}
	var out []verdict
	for _, at := range j.instants {
		k := at.UnixNano()
		v := auditInstant(j, at, execsAt[k], reqsAt[k], inHistory, faults)
		delete(execsAt, k)
		delete(reqsAt, k)
		if v.class == classMiss && decisions != nil {
			ds, err := decisions(j.name, at)
			if err != nil {
				return nil, nil, fmt.Errorf("decisions of %s at %s: %w", j.name, at, err)
			}
			v = explainByDecisions(v, at, ds)
		}
		out = append(out, v)
	}
	var unexpected []verdict
	for _, k := range slices.Sorted(maps.Keys(execsAt)) {
		v := verdict{job: j.name, at: time.Unix(0, k), class: classUnexplained, reason: "executions for a time that is not a scheduled instant"}
		for _, e := range execsAt[k] {
			v.ids = append(v.ids, e.ID)
		}
		unexpected = append(unexpected, v)
	}
	for _, k := range slices.Sorted(maps.Keys(reqsAt)) {
		if _, ok := execsAt[k]; ok {
			continue // reported with the executions
		}
		v := verdict{job: j.name, at: time.Unix(0, k), class: classUnexplained, reason: "requests for a time that is not a scheduled instant"}
		for _, q := range reqsAt[k] {
			v.ids = append(v.ids, q.ExecutionID)
		}
		unexpected = append(unexpected, v)
	}
	return out, unexpected, nil
}

// auditInstant classifies one instant from its executions in the history
// and its requests at the target. inHistory holds the IDs of every
// execution of the job. It returns classMiss when there is neither; the
// caller then looks for a decision.
//
// The instant is unexplained when the target received an execution the
// history does not know (a firing whose record was lost); when a job that
// does not request recovery was re-run as recovering; when a job that
// requests recovery did not succeed and its last execution was lost with
// its node or cancelled, with no re-run after it; when an attempt failed
// with retries left and no retry ran; when an execution is still running;
// when the history says an execution succeeded that the target never
// received; or when an execution is recorded node_lost although the
// target answered it while its node held its lease (no fault made the node
// lose it within lostGrace of the answer): the node ran it to its end,
// and the end was not recorded.
func auditInstant(j auditJob, at time.Time, execs []api.Execution, reqs []request, inHistory map[string]bool, faults []fault) verdict {
	v := verdict{job: j.name, at: at}
	ids := make(map[string]bool)
	for _, e := range execs {
		ids[e.ID] = true
	}
	for _, q := range reqs {
		ids[q.ExecutionID] = true
	}
	v.ids = slices.Sorted(maps.Keys(ids))
	if len(execs) == 0 && len(reqs) == 0 {
		v.class, v.reason = classMiss, "no execution, no request"
		return v
	}

	var dups, problems []string
	// First attempts in the history: attempt 1, not a re-run.
	var firsts []string
	for _, e := range execs {
		if e.Attempt == 1 && !e.Recovering {
			firsts = append(firsts, e.ID)
		}
	}
	if len(firsts) > 1 {
		dups = append(dups, fmt.Sprintf("%d first attempts in the history", len(firsts)))
	}
	// At the target: an execution received twice, and, for a job that is
	// never re-run, two first attempts.
	received := make(map[string]int)
	answered := make(map[string]request)
	var targetFirsts []string
	for _, q := range reqs {
		received[q.ExecutionID]++
		if !q.Answered.IsZero() {
			answered[q.ExecutionID] = q
		}
		if received[q.ExecutionID] == 2 {
			dups = append(dups, "execution "+q.ExecutionID+" received more than once")
		}
		if q.Attempt == 1 && received[q.ExecutionID] == 1 {
			targetFirsts = append(targetFirsts, q.ExecutionID)
		}
		if !inHistory[q.ExecutionID] {
			problems = append(problems, fmt.Sprintf("execution %s (attempt %d on node %s) was received but is not in the history",
				q.ExecutionID, q.Attempt, q.Node))
		}
	}
	if !j.recovery && len(targetFirsts) > 1 {
		dups = append(dups, fmt.Sprintf("%d first attempts received, and the job is never re-run", len(targetFirsts)))
	}
	if len(dups) > 0 {
		v.class, v.reason = classDup, strings.Join(dups, "; ")
		return v
	}

	// The executions in order: by attempt, then by start.
	ordered := slices.Clone(execs)
	slices.SortStableFunc(ordered, func(a, b api.Execution) int {
		if c := cmp.Compare(a.Attempt, b.Attempt); c != 0 {
			return c
		}
		return compareStart(a, b)
	})
	var success *api.Execution
	for i, e := range ordered {
		switch {
		case e.Outcome == "succeeded":
			success = &ordered[i]
		case e.Outcome == "running":
			problems = append(problems, "execution "+e.ID+" is still running")
		}
		if q, ok := answered[e.ID]; ok && e.Outcome == "node_lost" {
			// A firing its node died with before the history had any of
			// it is recorded by the node that re-runs it, which does not
			// know the lost node: the request names it.
			node := cmp.Or(e.NodeID, q.Node)
			if !lostNear(faults, node, q.Answered) {
				problems = append(problems, fmt.Sprintf("execution %s is recorded node_lost, but the target answered it (%d) at %s, "+
					"and no fault made node %s lose its lease then: its end was not recorded",
					e.ID, q.Status, q.Answered.UTC().Format("15:04:05.000"), node))
			}
		}
		if e.Recovering && !j.recovery {
			problems = append(problems, "execution "+e.ID+" re-ran the firing as recovering, but the job does not request recovery")
		}
	}
	if success != nil && received[success.ID] == 0 {
		problems = append(problems, "execution "+success.ID+" succeeded in the history, but the target never received it")
	}
	if success == nil && len(ordered) > 0 {
		last := ordered[len(ordered)-1]
		switch last.Outcome {
		case "node_lost", "cancelled":
			if j.recovery {
				problems = append(problems, fmt.Sprintf("execution %s ended %s (%s) and was not re-run, but the job requests recovery",
					last.ID, last.Outcome, last.Error))
			}
		case "failed", "timed_out":
			if last.Attempt < j.maxAttempts {
				problems = append(problems, fmt.Sprintf("attempt %d (%s) ended %s (%s) and no retry ran, with %d attempts allowed",
					last.Attempt, last.ID, last.Outcome, last.Error, j.maxAttempts))
			}
		}
	}
	switch {
	case len(problems) > 0:
		v.class, v.reason = classUnexplained, strings.Join(problems, "; ")
	case success != nil:
		v.class, v.reason = classFired, "succeeded"
		if success.Recovering {
			v.reason = "succeeded on a recovery re-run"
		}
	default:
		last := ordered[len(ordered)-1]
		v.class, v.reason = classExplained, "execution "+last.Outcome
	}
	return v
}

// compareStart orders executions by start time, unstarted first.
func compareStart(a, b api.Execution) int {
	switch {
	case a.StartedTime == nil && b.StartedTime == nil:
		return 0
	case a.StartedTime == nil:
		return -1
	case b.StartedTime == nil:
		return 1
	}
	return a.StartedTime.Compare(*b.StartedTime)
}

// explains reports whether a decision of this kind explains an instant
// without an execution.
func explains(kind string) bool {
	switch kind {
	case "misfired", "skipped", "vetoed", "paused", "blocked":
		return true
	}
	return false
}

// explainByDecisions turns a miss into an explained instant when a
// decision about the instant says why it did not run, or into an
// unexplained one when a decision says it fired.
func explainByDecisions(v verdict, at time.Time, ds []api.Decision) verdict {
	for _, d := range ds {
		if !d.ScheduledTime.Equal(at) {
			continue
		}
		if explains(d.Kind) {
			v.class, v.reason = classExplained, "decision "+d.Kind
			return v
		}
		if d.Kind == "fired" {
			v.class, v.reason = classUnexplained, "decided fired on node "+d.NodeID+", but no execution and no request"
			if d.ExecutionID != "" {
				v.ids = append(v.ids, d.ExecutionID)
			}
			return v
		}
	}
	return v
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// lostGrace is how long after the target answered an execution its node
// may have lost its lease for a node_lost record to be expected: the node
// records the end of an execution within milliseconds of the answer.
const lostGrace = 2 * time.Second

// lostNear reports whether a fault made node lose its lease within
// lostGrace of t, or while t.
func lostNear(faults []fault, node string, t time.Time) bool {
	for _, f := range faults {
		if f.loses(node, t, t.Add(lostGrace)) {
			return true
		}
	}
	return false
}
