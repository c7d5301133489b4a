// Package engine fires triggers: it acquires due triggers from the store,
// waits until their instant, fires them on a bounded worker pool and records
// their completion. It reaches storage only through the store contract and
// knows nothing of the public API. It consumes three small interfaces,
// defined here where they are used: Membership (the lease, which
// *cluster.Member implements), Runner (which runs one job: the chime
// package's registered job types and listeners) and Observer (which hears
// of misfires, finalized triggers and store failures and turns them into
// listener events).
//
// # The loop
//
// One goroutine owns the loop and its state: a heap of acquired triggers
// ordered by fire time (then priority, highest first), one timer and a
// capacity-1 wake-up channel. Each pass:
//
//  1. When there is a reason to look (first pass, a wake-up, the idle wait
//     elapsed, a trigger it fired is due again before the next idle look,
//     or its last claim was cut short and an eighth of its room is free), it
//     claims WAITING triggers due within the look-ahead window
//     (store.TriggersAcquireFire), holding at most as many as it has the
//     capacity to fire (see below) and at most BatchSize, leaving out the
//     triggers of jobs whose type is in Config.ExcludeJobTypes (a node
//     that cannot run a type never claims its firings; the store filters,
//     so they stay WAITING for the nodes that can, and recoverable
//     executions are claimed the same way). A trigger that is due
//     already, by the node's clock, is fired by the claim itself, in the
//     same store call (acquire.go, dueNow), unless it misfired, has a
//     calendar, or no worker is free: it is never ACQUIRED, and its job
//     joins the workers' queue when the call returns. The claim runs on
//     its own goroutine, one at a time, while the loop goes on firing; the
//     triggers it claimed without firing join the heap when it returns.
//  2. A claimed trigger whose fire time is older than the misfire threshold
//     gets its misfire instruction applied (pure schedule code) and is
//     released with its new timing; it comes back in a later acquisition
//     if it still fires.
//  3. The triggers in the heap whose instant has come are fired, as many
//     as the capacity allows, in one store call: the engine advances each
//     one's timing (schedule.Trigger.Triggered with its calendar) and the
//     store checks the claims and the lease, inserts the executions under
//     their unique (trigger, scheduled time) key and stores the advanced
//     timing, all at once (the store's TriggersFire). The jobs join the
//     workers' queue and start in firing order.
//  4. It sleeps until the earliest acquired instant, the idle wait, a
//     wake-up or, when it left due triggers or claims for want of a
//     worker, a freed worker, whichever comes first.
//
// # Capacity and batches
//
// Workers bounds the jobs that run at once. The capacity is one trigger
// per free worker, plus, once jobs have run, as many as the workers are
// expected to start within queueWait (10ms) judging by the moving average
// of the jobs' run times: a node whose jobs take microseconds claims and
// fires up to BatchSize (1,024) triggers per store call with ten workers,
// while a node whose jobs run for seconds claims no more than it has free
// workers, and leaves the rest to nodes that have room. A due trigger that still found
// no worker after starvedRelease (1s) is handed back to the cluster.
//
// A worker is free as soon as its job returns. Outcomes are queued and
// recorded by one goroutine at a time, up to 1,024 per store call
// (the store's ExecutionsComplete), so that outcomes that finish together
// are recorded together. A runner that records the run somewhere of its
// own (chime server's history) first returns Outcome.RecordAfter: the
// outcome waits for it, on a goroutine of its own, and the worker does
// not. Until then the store holds the execution as running, so a node that
// dies before the runner's record leaves it to recovery, never ended in
// the store with no record of it elsewhere.
//
// # Fixed-delay triggers
//
// A fixed-delay trigger (schedule.FixedDelay, store.TriggerRecord's
// RearmDelay) has no next fire time once fired: the store keeps it BLOCKED
// while its run lasts. The run's outcome is recorded with Rearm set and
// the instruction NOOP (not DELETE_TRIGGER, despite the zero next fire
// time), and the store re-arms the trigger at the recorded end plus the
// delay in the same transaction; recovery does the same for a lost node's
// run. The store does not read calendars, so when the loop claims such a
// trigger whose fire time its calendar excludes, it releases it moved to
// the calendar's next included instant (misfire.go, rearmExcluded).
//
// # Push wake-ups
//
// When the store implements store.TriggerWatcher, a second goroutine,
// started and stopped with the loop, watches the fire times other nodes
// make due. One within the look-ahead window wakes the loop at once; a
// later one is remembered and the loop looks at the store when it enters
// the window, unless it looks earlier anyway. A store that cannot watch
// (errors.ErrUnsupported) leaves the loop polling every idle wait; a watch
// that ends while the engine runs is opened again with a backoff (1s
// doubling to 1 minute). Polling stays the fallback: a lost notification
// costs latency, never a firing.
//
// # Store outages
//
// A pass that fails to reach the store stops there; nothing is claimed
// while the store fails. The next attempt waits 100ms, doubling to 5s
// (spread by Config.Jitter), and the first pass that goes through ends the
// outage. The first failure is logged at Warn ("store unreachable;
// retrying"), then one line every 30s while it lasts, and the end at Info
// ("store reachable again") with its duration. A trigger whose firing
// failed keeps its slot and is fired on a later attempt, or gets its
// misfire instruction when the outage outlasted the threshold. As the
// failure may have hidden a firing the store did make (the connection
// broke during COMMIT), the next attempt first looks for the execution of
// that instant under the node's lease and runs the job if it finds it, so
// no execution is left EXECUTING with no job behind it. A claim that
// fired due triggers and failed without an answer is settled the same
// way, by the execution IDs the engine gave its firings, before the loop
// claims anything again (settleUnsettled): a firing the store made runs,
// the others were not made. The triggers such a claim may have claimed
// without firing are ACQUIRED under the node's lease, where no other node
// and no reconciliation takes them, so the loop then lists what its lease
// holds and takes the claims it did not know of (adoptLostClaims). A claim the
// loop could not hand back is handed back once the store answers; an
// outcome is recorded as soon as the store answers again, however long
// that takes, unless Stop gives up waiting first.
//
// # Lease
//
// Membership.LeaseHeld tells whether a lease is the node's current one and is
// known to be valid now, judged on the node's monotonic clock against the
// expiry the node computed when it last renewed the lease. The engine asks
// it at each step where the node could act on a lease that lapsed:
//
//  1. At the start of each pass: the loop claims and fires nothing while
//     the current lease is not valid.
//  2. Right before the fire transaction: a pass that was slow (a starved
//     node, a calendar read that waited on the store) fires nothing once
//     the lease lapsed; the claims wait in the heap.
//  3. Right before a job starts, on its worker, with the lease the job was
//     fired or claimed for re-running under: before Runner.Execute, and again
//     inside Execute (Firing.LeaseValid) after the listeners it runs first
//     and right before the job itself. This is the check that counts:
//     a node can be starved or stopped at any point between the fire
//     transaction's commit and the job's start (reading the store's
//     answer, waiting in the workers' queue), and meanwhile another node
//     may have declared it dead, re-run the execution, or fired the next
//     run of a non-concurrent job. The store's fencing cannot catch this:
//     the execution was written while the lease was good. A job refused
//     here is held, not run and not recorded. When the same lease is valid
//     again (a renewal the store accepted proves that no node declared this
//     one dead meanwhile), the loop starts it; when the node registered
//     again under a new epoch, the loop drops it, since registering again
//     made the store recover the old lease's executions (re-run when the
//     job requests recovery, FAILED "node lost" otherwise) and the loop
//     then looks for recoverable executions at once. Stop drops held jobs
//     too: unregistering the node recovers their executions ("node
//     stopped").
//
// What remains is the instant between the last check and the job's first
// instruction: a node stopped exactly there starts the job late, with its
// context cancelled with ErrLeaseLost once the node notices the lapse. And
// the expiry is only as good as the node's monotonic clock: a host
// suspended (rather than a process stopped) does not advance it.
//
// When the node registers again under a new epoch, the claims of the old
// one are dropped: the store returned them to the pool when the node
// re-registered.
//
// A job that was running when the node noticed the lapse has its context
// cancelled with ErrLeaseLost. When it then fails and its job requests
// recovery, it did not run to its end, and its execution is not recorded:
// the queue of outcomes hands it back to the cluster instead
// (store.ExecutionsRelease), retried like an outcome until the store
// answers, and wakes the loop's recovery. This is the case of a store down
// for longer than DeadAfter: every node's lease lapses, no node can declare
// another dead, and each renews the same lease when the store returns.
// The store takes the hand-off only under the lease the execution was
// fired under, so it is exactly once: when another node did declare this
// one dead meanwhile, that recovery made the execution RECOVERABLE already,
// the store refuses the lease (ErrFenced) and the hand-off does nothing.
// Either way one node claims the execution and re-runs it with Recovering
// set. A job that does not request recovery, or that succeeded although
// cancelled, is recorded as it ended.
//
// # Reading the code
//
// A firing reads one way down, each file calling only those after it or
// the helpers beside the path: engine.go (Config, the interfaces, Start,
// Stop), loop.go (the loop and its passes), acquire.go (claiming due
// triggers, and firing those due already), fire.go (the fire transaction), run.go (the workers, which
// call Runner.Execute) and complete.go (recording the outcome, or handing
// an execution cancelled for a lapsed lease to recovery). The
// helpers: capacity.go (free workers, run-time estimate), lease.go (jobs
// held for their lease), misfire.go, release.go (handing claims back),
// recovery.go (re-running executions of lost nodes), prune.go, outage.go
// (store failures, backoff), watch.go (push wake-ups), timing.go (trigger
// record to schedule math), cache.go (decoded schedules) and heap.go (the
// claimed triggers).
//
// # Invariants
//
//   - The loop never blocks on a job or on recording an outcome: jobs run on
//     workers fed by a queue, outcomes are recorded by their own goroutine.
//   - A trigger fires only after the store accepted its firing; a refused
//     firing (claim lost, already fired, lease fenced) runs nothing.
//   - A job starts only while the lease it was fired under is valid by the
//     node's monotonic clock; otherwise it is held until that lease is
//     renewed, or dropped for the store to recover once it is replaced.
//   - An execution of a job that requests recovery, whose run failed after
//     it was cancelled for a lapsed lease, is handed to recovery, never
//     recorded as failed.
//   - Completion is recorded with a context that outlives Stop, and Stop
//     waits for it as for the jobs, so a job's outcome is never lost to
//     shutdown.
//   - Stop releases triggers acquired but not fired, so other nodes fire
//     them without waiting for recovery.
package engine
