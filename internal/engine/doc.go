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
