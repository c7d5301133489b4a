// Package engine fires triggers: it acquires due triggers from the store,
// waits until their instant, fires them on a bounded worker pool and records
// their completion. It reaches storage only through the store contract and
// knows nothing of the public API: the chime package hands it an Execute
// function that runs one job.
//
// # The loop
//
// One goroutine owns the loop and its state: a heap of acquired triggers
// ordered by fire time (then priority, highest first), one timer and a
// capacity-1 wake-up channel. Each pass:
//
//  1. When there are free worker slots and a reason to look (first pass, a
//     wake-up, a worker finished, or the idle wait elapsed), it claims up to
//     that many WAITING triggers due within the look-ahead window
//     (store.TriggersAcquire). Every claimed trigger reserves a worker slot,
//     so dispatching never blocks.
//  2. A claimed trigger whose fire time is older than the misfire threshold
//     gets its misfire instruction applied (pure schedule code) and is
//     released with its new timing; it comes back in a later acquisition
//     if it still fires.
//  3. Every trigger in the heap whose instant has come is fired: the engine
//     advances its timing (schedule.Trigger.Triggered with its calendar) and
//     calls store.TriggerFire, which checks the claim and the lease, inserts
//     the execution under its unique (trigger, scheduled time) key and stores
//     the advanced timing, all at once. The job then runs on a worker.
//  4. It sleeps until the earliest acquired instant, the idle wait, a wake-up
//     or a freed slot, whichever comes first.
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
// no execution is left EXECUTING with no job behind it. A claim the
// loop could not hand back is handed back once the store answers; an
// outcome is recorded as soon as the store answers again, however long
// that takes, unless Stop gives up waiting first.
//
// # Lease
//
// The loop claims and fires only while Config.LeaseValid holds. When the
// node registers again under a new epoch, the claims of the old one are
// dropped: the store returned them to the pool when the node re-registered.
//
// # Invariants
//
//   - The loop never blocks on a job: slots are reserved at acquisition.
//   - A trigger fires only after the store accepted its firing; a refused
//     firing (claim lost, already fired, lease fenced) runs nothing.
//   - Completion is recorded with a context that outlives Stop, so a job's
//     outcome is never lost to shutdown.
//   - Stop releases triggers acquired but not fired, so other nodes fire
//     them without waiting for recovery.
package engine
