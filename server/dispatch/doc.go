// Package dispatch hands the runs of "executor" jobs to executors, the
// worker processes of the teams' own services, and fences what they send
// back. It keeps its own tables on the server's database:
//
//   - {p}dispatch_executors: one row per registered executor, with its
//     group, labels, handlers and lease (lease_until, on the database's
//     clock), and what the routing strategies read (last_used, use_count);
//   - {p}dispatch_groups: one row per group, locked by the lru, lfu and
//     busy_over hand-overs to the group so that they are serialized (its
//     rr_last, the round robin's turn until each node kept its own, is no
//     longer read);
//   - {p}dispatch_runs: one row per run: the execution it stands for, the
//     executor it is leased to, its fencing token, the node that handed
//     it over and waits for it, its state and its result.
//
// # Protocol
//
//  1. Hand-over (Service.Handover, by the node whose runner runs the
//     execution): in one transaction, lock the group's row, read its live
//     executors (lease_until > the database's now) that advertise the
//     handler and carry the labels, pick one by the job's routing, insert
//     the run as assigned with token 1, and record the use. No such
//     executor: a *NoExecutorError naming the group, handler and labels.
//  2. Take (Service.Take, the executor's long-poll): assigned runs of the
//     executor become running and are returned with their tokens; cancel
//     requests not yet told are returned too, in one transaction (on
//     PostgreSQL one statement while the executor's lease holds). While
//     there is none, Take reads the database every PollInterval, with a
//     read that locks nothing, and takes at once when it knows the
//     executor was handed a run: by this node, or, on PostgreSQL, by
//     another, which notifies the nodes. The runs it knows of it takes by
//     their keys, as long as the executor's cancel requests were read
//     within two PollIntervals; on PostgreSQL, the takes by key of the
//     node's Takes that wait while others commit go together, in one
//     statement (see commitTakes).
//  3. Result (Service.Report): accepted only from the executor the run is
//     leased to, under its current token, while the run is assigned,
//     running or cancel_requested; anything else is ErrStale and changes
//     nothing. The run becomes done, and a waiter of this node is told
//     at once.
//  4. Watch (Service.Watch, one goroutine per node): every PollInterval,
//     the runs this node awaits are read in one query; a done run's
//     result is delivered to its waiter, and a run whose executor's lease
//     lapsed becomes lost (fenced on its token) and its waiter told.
//  5. Recovery (Service.Rehandover): a lost run is handed over again to
//     another live executor with its token incremented, so that whatever
//     the lost executor still sends is refused.
//  6. Cancel (Service.RequestCancel): a killed or timed-out run becomes
//     cancel_requested; the executor learns it from its next poll or
//     heartbeat.
//
// Round robin hand-overs and results that arrive while others commit are
// committed together, in one transaction each batch (see package combine): the
// turns of a batch's runs take the group's lock once, and each result is
// fenced on its own. A run that ended with its executor's result is
// deleted by Watch's next pass (Service.Release), since the fence refuses
// whatever its executor sends about it already; any other run is deleted
// at once (Service.Close).
//
// An executor's lease covers all of its runs: one heartbeat extends it,
// and when it lapses every run of the executor is lost. A heartbeat after
// the lease lapsed is refused with ErrLeaseLost: the executor must cancel
// its runs and register again.
package dispatch
