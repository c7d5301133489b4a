// Package pool keeps chime server's concurrency pools: named limits on
// how many executions of the jobs that name a pool run at once, across
// the cluster ("at most 4 report jobs at once, whichever nodes"). It
// keeps its own tables on the server's database:
//
//   - {p}pool_pools: one row per pool, with its limit; every grant of a
//     pool locks its row, so grants to one pool are serialized;
//   - {p}pool_slots: one row per firing that waits for a slot of a pool
//     (state waiting) or holds one (state running), with the node that
//     runs it and a lease on the database's clock.
//
// # Protocol
//
//  1. Queue (Service.Enqueue, by the node whose runner runs the firing):
//     the firing's row is inserted, waiting, if the pool exists.
//  2. Grant (Service.Grant): in one transaction holding the pool's row
//     lock, the rows whose lease lapsed are deleted, the running rows
//     counted, and the first limit − running waiting rows, in the order
//     of their scheduled times and then their execution IDs, become
//     running. Any node grants for any node: the queue is the cluster's.
//  3. Wait (Service.Wait and Service.Run, one loop per node): while
//     firings of the node wait, the loop grants for their pools every
//     PollInterval, and at once when a firing starts waiting or a slot
//     is released, then reads the node's rows in one query and tells
//     each waiter whose row became running.
//  4. Leave: a firing that waited long enough withdraws its row
//     (Service.Withdraw, only while it is still waiting: a row granted
//     meanwhile is the caller's to use); an execution that ends, however
//     it ends, deletes its row and hands the slot to the head of the
//     queue (Service.Release).
//  5. Lease: the loop renews the lease of every row of its node every
//     third of Lease. A node that dies, or loses the database, stops
//     renewing them, and the next grant takes them back once the lease
//     lapsed. No slot is held forever. The lease is the only way a
//     slot goes back while its node lives: a node merely presumed dead
//     keeps its slots as long as it renews them. A node whose renewals
//     fail for two thirds of Lease tells the holders of its slots
//     (Service.Hold, ErrLeaseLost), a third of Lease before any grant
//     may take them back; a waiter whose place lapsed queues again.
//     Service.ForgetNode frees a node's rows at once, for a node known
//     to be gone for good.
//
// The limit holds because a grant counts the running rows after taking
// the pool's row lock (READ COMMITTED: it sees every grant committed
// before it) and only grants decide that a row runs. Lowering a limit
// takes no slot back: the pool grants nothing until fewer run.
package pool
