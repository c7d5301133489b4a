// Package cluster keeps a node's membership of a chime cluster: its lease
// and epoch, its check-ins, the estimate of its clock's offset from the
// store's clock, and the recovery of dead nodes.
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
//  4. When a check-in is refused with store.ErrFenced, or no check-in has
//     succeeded for DeadAfter by the local clock, the node must assume it has
//     been declared dead: it reports the lease lost (the engine cancels its
//     running jobs) and registers again under a new epoch.
//  5. Stop unregisters the node, so its claims return at once.
package cluster
