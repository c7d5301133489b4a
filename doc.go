// Package chime is a persistent, clustered job scheduler with Quartz's
// semantics: jobs and triggers identified by (group, name) keys, cron,
// simple, calendar-interval and daily-time-interval schedules, exclusion
// calendars, misfire instructions, listeners, non-concurrent jobs and
// recovery of a dead node's work.
//
// # Jobs and job types
//
// A job type is Go code registered on a Scheduler under a stable name
// (Scheduler.Register). A job (JobDetail) names its type and carries a JSON
// data map; it is stored, so after a restart the stored job finds its code
// again by that name. There are no package-level registries.
//
// # Triggers and schedules
//
// A Trigger fires one job on a schedule from package schedule: a Quartz or
// standard cron expression (schedule.NewCron, see package
// schedule/cron), a simple repeat (schedule.Simple), a calendar interval or a
// daily time interval. Fire times are computed in the schedule's IANA time
// zone exactly as Quartz 2.3.2 computes them, across DST gaps and overlaps. A
// trigger may name an exclusion calendar (package calendar) added with
// Scheduler.AddCalendar; excluded instants are skipped.
//
// ScheduleJob writes a job with its triggers in one atomic step: with
// ScheduleJobOptions it also deletes triggers of the job (Unschedule) and
// pauses or resumes all of them (Pause) in that step, so a failure or a
// crash leaves the old job or the new one, never a mix. Values no store can
// keep are refused before anything is written, with a ValidationError
// naming the field: keys, job types, calendar names and node IDs longer than
// MaxKeyLength characters, text that is not UTF-8 or holds NUL, priorities
// outside MinPriority to MaxPriority and instants outside EarliestTime to
// LatestTime.
//
// ScheduleJobs creates many new jobs, each with its triggers, in one atomic
// step, all or none, as River's InsertMany does: a SQL store writes the
// whole batch in a few multi-row statements and one commit, which costs the
// database a fraction of one ScheduleJob per job. A ValidationError names
// the element ("jobs[3].triggers[0].Key.Name"). ScheduleTriggers does the
// same for triggers of stored jobs (say, one-shot triggers that fire many
// jobs now) in one commit, and with SkipExisting leaves the triggers whose
// keys are taken as they are, so that making them twice is harmless.
//
// Scheduler.JobsPage lists stored jobs a page at a time, each with its
// triggers, in two reads of the store whatever their number; pass a page's
// Next as the next query's After to walk them all. Scheduler.Jobs and
// Scheduler.Triggers read everything at once.
//
// # Firing
//
// Start joins the cluster and starts the firing loop: it claims triggers due
// soon, fires each at its instant on a bounded pool of workers, and records
// the outcome. A trigger added or changed while the loop sleeps wakes it. A
// trigger later than Config.MisfireThreshold gets its misfire instruction
// applied. Jobs see a JobContext and a context.Context cancelled on
// interrupt, timeout or stop. A job's error can ask to refire at once or to
// unschedule its triggers (RefireImmediately, UnscheduleFiringTrigger,
// UnscheduleAllTriggers); a panic is recovered and recorded as a failure.
//
// # Clusters
//
// Schedulers that share a store form a cluster with no further
// configuration. Each node holds a lease with an epoch on the store's clock;
// a node that stops checking in is declared dead by the others, its claimed
// triggers return to the pool, its jobs that request recovery re-run on a
// live node, and anything it still writes under its old epoch is refused.
// A unique key on (trigger, scheduled fire time) makes a second firing of one
// instant impossible. Nodes fire on the store's clock, corrected for their
// own clock's measured offset, so node clocks need not agree
// (Config.ClockOffsetWarning says when an offset is worth a warning).
//
// A node that cannot renew its lease for Config.DeadAfter stops claiming
// triggers, starts no job it fired, and cancels its running jobs
// (ErrLeaseLost) until the store renews its lease (no node declared it
// dead) or it joined again under a new lease. A job so cancelled that
// requests recovery is re-run once, with JobContext.Recovering set, by
// whichever node claims it: handed to recovery by its node, or recovered
// by the node that declared its node dead. A store outage delays work and loses none: the
// node retries with a backoff, logs the outage once when it starts and
// once when it ends, and fires what became due in between. Every
// Config.ReconcileInterval each node asks the store to repair what no live
// node explains; a healthy cluster never needs a repair. Stores that can
// push changes (store.TriggerWatcher) wake every node as soon as any node
// adds or resumes a trigger; the others are polled every Config.IdleWait.
//
// # Listeners
//
// JobListener and TriggerListener run on the worker that runs the job and
// may veto it; SchedulerListener receives every scheduler event on its own
// goroutine. No listener can stall the firing loop.
//
// # Stopping
//
// Standby pauses firing; Stop(ctx) stops claiming, waits for running jobs
// until ctx is done, then cancels them and leaves the cluster.
package chime
