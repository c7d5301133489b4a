package storetest

import (
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// batchTests check the store's batch methods (store.Batcher), which every
// store implements.
var batchTests = []test{
	{"FireSeveral", func(t *testing.T, h *harness) {
		withData := h.job(key("g", "data"), withJobData(`{"n":1}`), requestsRecovery)
		plain := h.job(key("g", "plain"), nonDurable)
		repeating := trig(key("t", "1"), withData, at(1))
		repeating.Priority = 3
		h.trigger(repeating)
		h.simple(key("t", "2"), withData, at(1))
		h.simple(key("t", "3"), plain, at(2))
		l := h.node("n")
		acq := h.acquire(l, at(2), 10)
		wantEqual(t, "acquired keys", keysOf(acq), []store.Key{key("t", "1"), key("t", "2"), key("t", "3")})
		p := &store.TriggersFireParams{Lease: l}
		for _, tr := range acq {
			next := at(60)
			if tr.Key.Name == "3" {
				next = time.Time{} // its last fire
			}
			fp := h.fireParams(l, tr, next)
			p.Firings = append(p.Firings, store.TriggerFiring{Trigger: fp.Trigger, Execution: fp.Execution})
		}
		p.Firings[1].Execution.ID = "" // the store generates it
		out, err := h.s.TriggersFire(h.ctx, p)
		if err != nil {
			t.Fatalf("TriggersFire: %v", err)
		}
		if len(out) != 3 {
			t.Fatalf("TriggersFire returned %d outcomes, want 3", len(out))
		}
		for i, o := range out {
			if o.Err != nil || o.Result == nil || o.Result.Blocked {
				t.Fatalf("outcome %d = %+v, want fired", i, o)
			}
			wantEqual(t, "result job", normJob(o.Result.Job), normJob(h.getJob(acq[i].JobKey)))
		}
		if p.Firings[1].Execution.ID == "" {
			t.Errorf("generated execution ID not written back")
		}
		h.wantState(store.StateWaiting, key("t", "1"), key("t", "2"))
		h.wantState(store.StateComplete, key("t", "3"))
		got := h.get(key("t", "1"))
		if !got.NextFireTime.Equal(at(60)) || !got.PreviousFireTime.Equal(at(1)) || got.TimesTriggered != 1 || got.ClaimedBy != "" {
			t.Errorf("fired trigger = %+v, want next %s, previous %s, fired once, unclaimed", got, at(60), at(1))
		}
		for i, f := range p.Firings {
			e := h.execution(f.Execution.ID)
			want := f.Execution
			want.JobKey, want.Priority = acq[i].JobKey, acq[i].Priority
			want.RequestsRecovery = acq[i].JobKey == withData
			wantEqual(t, "execution", normExecution(e), normExecution(want))
		}
	}},
	{"FireRefusesFiringsOnTheirOwn", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"))
		for _, n := range []string{"fires", "released", "fired-before", "invalid"} {
			h.simple(key("t", n), jk, at(1))
		}
		l := h.node("n")
		acq := h.acquire(l, at(1), 10)
		byName := make(map[string]store.TriggerRecord)
		for _, tr := range acq {
			byName[tr.Key.Name] = tr
		}
		if err := h.s.TriggerRelease(h.ctx, &store.TriggerReleaseParams{Lease: l, Key: key("t", "released")}); err != nil {
			t.Fatalf("TriggerRelease: %v", err)
		}
		// A (buggy) advance that leaves the trigger at the instant it fired.
		h.mustFire(l, byName["fired-before"], at(1))
		byName["fired-before"] = h.acquireOne(l, key("t", "fired-before"))

		firing := func(name string) store.TriggerFiring {
			fp := h.fireParams(l, byName[name], at(30))
			return store.TriggerFiring{Trigger: fp.Trigger, Execution: fp.Execution}
		}
		p := &store.TriggersFireParams{Lease: l, Firings: []store.TriggerFiring{
			firing("released"), firing("fires"), firing("fired-before"), firing("invalid"), firing("fires"),
		}}
		p.Firings[3].Execution.ScheduledTime = time.Time{}
		out, err := h.s.TriggersFire(h.ctx, p)
		if err != nil {
			t.Fatalf("TriggersFire: %v", err)
		}
		wantErr(t, "firing a released trigger", out[0].Err, store.ErrNotClaimed)
		if out[1].Err != nil || out[1].Result == nil {
			t.Errorf("firing a claimed trigger: %+v, want fired", out[1])
		}
		wantErr(t, "firing an instant fired before", out[2].Err, store.ErrAlreadyFired)
		if out[3].Err == nil {
			t.Errorf("firing without a scheduled time succeeded, want an error")
		}
		wantErr(t, "firing one trigger twice in a batch", out[4].Err, store.ErrNotClaimed)
		h.wantState(store.StateWaiting, key("t", "fires"), key("t", "released"))
		h.wantState(store.StateAcquired, key("t", "fired-before"), key("t", "invalid"))
		for name, want := range map[string]int{"fires": 1, "released": 0, "fired-before": 1, "invalid": 0} {
			k := key("t", name)
			if es := h.executions(store.ExecutionListParams{TriggerKey: &k}); len(es) != want {
				t.Errorf("executions of %s = %v, want %d", k, execIDs(es), want)
			}
		}
	}},
	{"FireFenced", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		l := h.node("n")
		acq := h.acquireOne(l, k)
		fp := h.fireParams(store.Lease{NodeID: l.NodeID, Epoch: l.Epoch + 1}, acq, at(2))
		_, err := h.s.TriggersFire(h.ctx, &store.TriggersFireParams{Lease: fp.Lease,
			Firings: []store.TriggerFiring{{Trigger: fp.Trigger, Execution: fp.Execution}}})
		wantErr(t, "TriggersFire with a stale epoch", err, store.ErrFenced)
		h.wantState(store.StateAcquired, k)
		if es := h.executions(store.ExecutionListParams{}); len(es) != 0 {
			t.Errorf("a fenced batch recorded executions %v", execIDs(es))
		}
	}},
	{"FireNonConcurrentJobOnce", func(t *testing.T, h *harness) {
		single := h.job(key("g", "single"), nonConcurrent)
		free := h.job(key("g", "free"))
		h.simple(key("t", "1"), single, at(1))
		h.simple(key("t", "2"), single, at(1))
		h.simple(key("t", "3"), free, at(1))
		waiting := h.simple(key("t", "4"), single, at(50)).Key
		l := h.node("n")
		p := &store.TriggersFireParams{Lease: l}
		for _, tr := range h.acquire(l, at(1), 10) {
			fp := h.fireParams(l, tr, at(10))
			p.Firings = append(p.Firings, store.TriggerFiring{Trigger: fp.Trigger, Execution: fp.Execution})
		}
		out, err := h.s.TriggersFire(h.ctx, p)
		if err != nil {
			t.Fatalf("TriggersFire: %v", err)
		}
		if len(out) != 3 || out[0].Err != nil || out[0].Result.Blocked || out[1].Err != nil || !out[1].Result.Blocked ||
			out[2].Err != nil || out[2].Result.Blocked {
			t.Fatalf("outcomes %+v, want fired, blocked, fired", out)
		}
		h.wantState(store.StateBlocked, key("t", "1"), key("t", "2"), waiting)
		h.wantState(store.StateWaiting, key("t", "3"))
		if got := h.get(key("t", "2")); !got.NextFireTime.Equal(at(1)) || got.TimesTriggered != 0 {
			t.Errorf("blocked trigger = %+v, want its timing unchanged", got)
		}
		errs, err := h.s.ExecutionsComplete(h.ctx, &store.ExecutionsCompleteParams{Lease: l, Completions: []store.ExecutionCompletion{
			{ID: p.Firings[0].Execution.ID, State: store.ExecutionSucceeded, FinishedTime: at(5)},
			{ID: p.Firings[2].Execution.ID, State: store.ExecutionSucceeded, FinishedTime: at(5)},
		}})
		if err != nil || errs[0] != nil || errs[1] != nil {
			t.Fatalf("ExecutionsComplete = %v, %v", errs, err)
		}
		h.wantState(store.StateWaiting, key("t", "1"), key("t", "2"), key("t", "3"), waiting)
	}},
	{"CompleteSeveral", func(t *testing.T, h *harness) {
		oneShot := h.job(key("g", "one-shot"), nonDurable)
		data := h.job(key("g", "data"), withJobData(`{"n":1}`), func(j *store.JobRecord) { j.PersistData = true })
		single := h.job(key("g", "single"), nonConcurrent)
		free := h.job(key("g", "free"))
		h.simple(key("t", "a"), oneShot, at(1))
		h.simple(key("t", "b"), data, at(1))
		h.simple(key("t", "c"), single, at(1))
		h.simple(key("t", "d"), free, at(1))
		h.simple(key("t", "e"), free, at(1))
		blocked := h.simple(key("t", "f"), single, at(30)).Key
		l := h.node("n")
		ids := make(map[string]string)
		for _, tr := range h.acquire(l, at(1), 10) {
			next := at(60)
			if tr.Key.Name == "a" {
				next = time.Time{}
			}
			ids[tr.Key.Name] = h.mustFire(l, tr, next)
		}
		other := h.node("other")
		h.simple(key("t", "g"), free, at(2))
		foreign := h.acquireFire(other, key("t", "g"), at(60))
		h.wantState(store.StateBlocked, blocked)

		completions := []store.ExecutionCompletion{
			{ID: ids["a"], State: store.ExecutionSucceeded, FinishedTime: at(5), Instruction: store.InstructionDeleteTrigger},
			{ID: ids["b"], State: store.ExecutionSucceeded, FinishedTime: at(5), JobData: []byte(`{"n":2}`)},
			{ID: ids["c"], State: store.ExecutionFailed, Error: "boom", FinishedTime: at(5)},
			{ID: ids["d"], State: store.ExecutionVetoed, FinishedTime: at(5), Instruction: store.InstructionSetTriggerComplete},
			{ID: ids["e"], State: store.ExecutionSucceeded, FinishedTime: at(6)},
			{ID: "no-such-execution", State: store.ExecutionSucceeded},
			{ID: foreign, State: store.ExecutionSucceeded},
			{ID: ids["e"], State: store.ExecutionFailed},
			{ID: ids["d"], State: store.ExecutionExecuting},
		}
		errs, err := h.s.ExecutionsComplete(h.ctx, &store.ExecutionsCompleteParams{Lease: l, Completions: completions})
		if err != nil {
			t.Fatalf("ExecutionsComplete: %v", err)
		}
		if len(errs) != len(completions) {
			t.Fatalf("ExecutionsComplete returned %d errors, want %d", len(errs), len(completions))
		}
		for i := range 5 {
			if errs[i] != nil {
				t.Errorf("completion %d: %v", i, errs[i])
			}
		}
		wantErr(t, "completing an unknown execution", errs[5], store.ErrExecutionNotFound)
		wantErr(t, "completing another node's execution", errs[6], store.ErrExecutionNotFound)
		wantErr(t, "completing an execution twice in a batch", errs[7], store.ErrExecutionNotFound)
		if errs[8] == nil {
			t.Errorf("completing with state EXECUTING succeeded, want an error")
		}

		h.wantNoTrigger(key("t", "a"))
		if _, err := h.s.JobGet(h.ctx, oneShot); err == nil {
			t.Errorf("the non-durable job of a deleted last trigger still exists")
		}
		if got := h.getJob(data); string(got.Data) != `{"n":2}` {
			t.Errorf("job data after completion = %s, want {\"n\":2}", got.Data)
		}
		h.wantState(store.StateWaiting, key("t", "b"), key("t", "c"), key("t", "e"), blocked)
		h.wantState(store.StateComplete, key("t", "d"))
		for name, want := range map[string]store.ExecutionState{
			"a": store.ExecutionSucceeded, "b": store.ExecutionSucceeded, "c": store.ExecutionFailed,
			"d": store.ExecutionVetoed, "e": store.ExecutionSucceeded,
		} {
			e := h.execution(ids[name])
			if e.State != want || e.FinishedTime.IsZero() {
				t.Errorf("execution of %s = %s finished %s, want %s and a finished time", name, e.State, e.FinishedTime, want)
			}
		}
		if e := h.execution(ids["c"]); e.Error != "boom" || !e.FinishedTime.Equal(at(5)) {
			t.Errorf("failed execution = error %q finished %s, want boom at %s", e.Error, e.FinishedTime, at(5))
		}
		if e := h.execution(ids["e"]); !e.FinishedTime.Equal(at(6)) {
			t.Errorf("execution finished %s, want %s", e.FinishedTime, at(6))
		}
		if e := h.execution(foreign); e.State != store.ExecutionExecuting {
			t.Errorf("another node's execution is %s, want EXECUTING", e.State)
		}
	}},
	{"CompleteUnblocksAJobThatNowAllowsConcurrency", func(t *testing.T, h *harness) {
		jk := h.job(key("g", "j"), nonConcurrent)
		k := h.simple(key("t", "1"), jk, at(1)).Key
		sibling := h.simple(key("t", "2"), jk, at(30)).Key
		l := h.node("n")
		id := h.acquireFire(l, k, at(60))
		h.wantState(store.StateBlocked, k, sibling)
		if err := h.s.JobUpsert(h.ctx, &store.JobUpsertParams{Job: store.JobRecord{Key: jk, Type: "noop", Durable: true}, Replace: true}); err != nil {
			t.Fatalf("JobUpsert: %v", err)
		}
		errs, err := h.s.ExecutionsComplete(h.ctx, &store.ExecutionsCompleteParams{Lease: l,
			Completions: []store.ExecutionCompletion{{ID: id, State: store.ExecutionSucceeded}}})
		if err != nil || errs[0] != nil {
			t.Fatalf("ExecutionsComplete = %v, %v", errs, err)
		}
		h.wantState(store.StateWaiting, k, sibling)
	}},
	{"CompleteFenced", func(t *testing.T, h *harness) {
		k := h.simple(key("t", "1"), h.job(key("g", "j")), at(1)).Key
		l := h.node("n")
		id := h.acquireFire(l, k, at(2))
		_, err := h.s.ExecutionsComplete(h.ctx, &store.ExecutionsCompleteParams{Lease: store.Lease{NodeID: l.NodeID, Epoch: l.Epoch + 1},
			Completions: []store.ExecutionCompletion{{ID: id, State: store.ExecutionSucceeded}}})
		wantErr(t, "ExecutionsComplete with a stale epoch", err, store.ErrFenced)
		if e := h.execution(id); e.State != store.ExecutionExecuting {
			t.Errorf("execution after a fenced completion is %s, want EXECUTING", e.State)
		}
	}},
	{"Release", func(t *testing.T, h *harness) {
		free := h.job(key("g", "free"))
		single := h.job(key("g", "single"), nonConcurrent)
		h.simple(key("t", "waiting"), free, at(1))
		h.simple(key("t", "blocked"), single, at(1))
		h.simple(key("t", "runs"), single, at(2))
		h.simple(key("t", "other"), free, at(0))
		l, other := h.node("n"), h.node("other")
		h.acquireOne(other, key("t", "other"))
		acq := h.acquire(l, at(2), 10)
		wantEqual(t, "acquired keys", keysOf(acq), []store.Key{key("t", "blocked"), key("t", "waiting"), key("t", "runs")})
		// The non-concurrent job starts: the trigger claimed before must go
		// back BLOCKED.
		h.mustFire(l, acq[2], at(60))
		// "other" is another node's claim, "never" does not exist.
		keys := []store.Key{key("t", "blocked"), key("t", "waiting"), key("t", "other"), key("t", "never")}
		_, err := h.s.TriggersRelease(h.ctx, &store.TriggersReleaseParams{Lease: store.Lease{NodeID: l.NodeID, Epoch: l.Epoch + 1}, Keys: keys})
		wantErr(t, "TriggersRelease with a stale epoch", err, store.ErrFenced)
		h.wantState(store.StateAcquired, key("t", "blocked"), key("t", "waiting"))
		n, err := h.s.TriggersRelease(h.ctx, &store.TriggersReleaseParams{Lease: l, Keys: keys})
		if err != nil {
			t.Fatalf("TriggersRelease: %v", err)
		}
		if n != 2 {
			t.Errorf("TriggersRelease released %d triggers, want 2", n)
		}
		h.wantState(store.StateWaiting, key("t", "waiting"))
		h.wantState(store.StateBlocked, key("t", "blocked"))
		if got := h.get(key("t", "other")); got.State != store.StateAcquired || got.ClaimedBy != other.NodeID {
			t.Errorf("another node's claim after the release = %s by %q, want kept", got.State, got.ClaimedBy)
		}
		if got := h.get(key("t", "waiting")); got.ClaimedBy != "" || !got.NextFireTime.Equal(at(1)) {
			t.Errorf("released trigger = claimed by %q, next %s; want unclaimed, next %s", got.ClaimedBy, got.NextFireTime, at(1))
		}
		h.acquireOne(l, key("t", "waiting"))
	}},
}
