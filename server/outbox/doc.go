// Package outbox keeps messages that must go out in a table of the
// server's database, and hands each to one node at a time under a lease,
// until it is sent: the durable outbox of chime server's alerts. A node
// that dies holding a message does not lose it: its lease lapses and
// another node sends it.
//
// # Table
//
// [New] migrates one table through the store's migrator
// ([sqlstore.Store.MigrateComponent], component "outbox", versions in
// {prefix}outbox_schema_migrations):
//
//   - outbox_messages: one row per message to send, keyed by (sched_name,
//     id), with its delivery key, its payload (opaque to this package),
//     when it was added, how many times it was claimed (attempts), the node
//     that holds it (owner, empty when none) and due, an instant of the
//     database's clock in Unix nanoseconds: while the message is held, when
//     its lease ends; otherwise when it may be tried (again).
//
// # Protocol
//
//  1. Add: the messages of one decision (one alert to each of its
//     recipients) are inserted in one transaction, due at once. A try whose
//     answer was lost after it committed finds its rows there and
//     succeeds: adding is idempotent by id.
//  2. Claim: a node reads up to a batch of messages due by the database's
//     clock, and takes each with a conditional UPDATE that sets the owner,
//     adds one to attempts and moves due to the database's now plus the
//     lease, only if attempts and due are still what it read. Of the nodes
//     that race for a message one sees its UPDATE change the row; the
//     others pass. The claim's attempt number is its fencing token.
//  3. Send, then settle, each conditional on the claim's owner and attempt
//     number: Done deletes the message (sent messages are pruned at once),
//     Retry gives it back with no owner, due after a backoff, and Drop
//     deletes a message given up on. A node whose lease lapsed, and whose
//     message another node claimed meanwhile, changes nothing: it gets
//     [ErrLeaseLost].
//  4. A node that dies holding a message settles nothing: its lease lapses
//     and the message is due again, for any node.
//
// Delivery is therefore at least once: a node that sent a message and died
// before Done, or whose send outlasted its lease, leaves it to be sent
// again, under the same delivery key, which receivers use to drop the
// copy. [Outbox.Deliver] runs steps 2 and 3 in a loop with bounded
// attempts and a doubling backoff; the batch it claims is small enough to
// be sent within one lease.
package outbox
