// Package cluster keeps a node's membership of a chime cluster: its lease
// and epoch, its check-ins, the estimate of its clock's offset from the
// store's clock, the recovery of dead nodes and the periodic reconciliation
// of the store.
//
// A *Member is the engine's engine.Membership: the engine asks it for the
// lease (Lease, LeaseHeld) and tells it of a lease the store refused
// (LeaseRefused). In the other direction the member tells its Observer
// what the engine must act on: nodes recovered, a reconciliation that
// repaired something, the lease lost or restored. The chime package wires
// the two.
//
// # Protocol
//
//  1. Start registers the node (store.NodeRegister). The store gives it an
//     epoch greater than any earlier one under the same ID. The lease is
//     (node ID, epoch); every write the engine makes carries it.
//  2. Every CheckInInterval the node renews its lease (store.NodeCheckIn),
//     which stamps it with the store's clock and returns that clock. The
//     round trip gives the offset estimate: store time minus the midpoint of
//     the local send and receive times. Time is never compared across
//     machines: only the store's clock decides who is dead.
//  3. After each check-in the node asks the store to recover every other
//     node not seen for DeadAfter (store.NodesRecover): in one step per dead
//     node the store bumps its epoch, which fences it, returns its claimed
//     triggers and marks its executions for re-run or failure. Any node may
//     do this; the epoch bump makes the second attempt a no-op.
//  4. At start, every ReconcileInterval and right after registering again,
//     the node asks the store to repair what no live lease explains
//     (store.Store's Reconcile): claims and executions held under dead or
//     stale leases, triggers blocked by no running execution. Each repair
//     is logged at Warn; Observer.Reconciled lets the engine act on them at once.
//  5. When a check-in is refused with store.ErrFenced, when the engine
//     reports a write refused under the current lease (LeaseRefused), or
//     when no check-in has succeeded for DeadAfter by the local clock (each
//     store call of the loop is bounded by the time left on the lease, so a
//     call that hangs, as behind a silent network partition, cannot delay
//     this), the
//     node must assume it has been declared dead: it reports the lease lost
//     once (the engine cancels its running jobs with ErrLeaseLost). After a
//     refusal it registers again under a new epoch at once. A lease that
//     only lapsed by the local clock is renewed at the next check-in if the
//     store accepts it (no node declared this one dead: recovery and
//     check-in lock the same node row), and replaced by registering again
//     if the store refuses it.
//  6. Stop unregisters the node, so its claims return at once.
//
// # Lease validity
//
// LeaseValid holds while the node is registered, no write was refused under
// its lease, and the last renewal that succeeded was sent less than
// DeadAfter ago by the local clock. The store stamps a renewal after the
// node sent it, so no other node can have declared this one dead while
// LeaseValid holds, as long as both clocks tick at the same rate (their
// readings may differ by any amount). The engine claims and fires nothing
// while LeaseValid does not hold. Fencing in the store stays the guarantee
// for writes; this keeps a cut-off node from doing work the store will
// refuse.
//
// Fencing cannot protect a job whose execution the store accepted while the
// lease was good, but which starts after it lapsed: a node starved of CPU or
// stopped (SIGSTOP) between the fire transaction and the job's start would
// run it while another node re-runs it. So the engine asks LeaseHeld, with
// the lease the job was fired under, right before the job starts. LeaseHeld
// compares the local monotonic clock with the expiry the node computed when
// the lease was last renewed (DeadAfter after that renewal was sent),
// together with the lease's identity, in one reading: it does not wait for
// the check-in loop to notice the lapse and set the lost flag, which a
// starved loop does late. A renewal whose answer comes after the lease
// lapsed, without a failure (the node was starved, the store slow),
// restores the lease under the same epoch: the store accepted it, so no
// node had declared this one dead, and Observer.LeaseRestored lets the engine
// start the jobs it held.
//
// # Logs
//
// A failing store makes every check-in fail. The first failure is logged
// at Warn, then one line every 30s while the outage lasts, and the first
// success after it at Info with the outage's duration. The clock offset is
// logged at Warn when it goes above OffsetWarning, again only when it moves
// by more than OffsetWarning since the last warning, and at Info when it
// comes back under.
package cluster
