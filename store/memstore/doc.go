// Package memstore is an in-memory implementation of the chime store
// contract ([store.Store]).
//
// It keeps every record in maps guarded by one mutex, so each method is one
// atomic step, exactly as the contract asks of every store. Records are deep
// copied on the way in and on the way out: callers never share memory with
// the store.
//
// It suits tests, single-process schedulers whose jobs need not survive a
// restart, and as the reference the SQL stores are checked against: it runs
// the same conformance suite (package storetest).
//
// # Complexity
//
// WAITING triggers that have a next fire time are kept in a binary heap
// ordered by next fire time, then priority (highest first), then key.
// TriggersAcquire therefore costs O(k log n) for k claimed triggers out of n
// waiting ones, and every state change of a trigger costs O(log n). Running
// executions and the count of running executions per job are indexed too, so
// firing, completing and blocking checks never scan the history of finished
// executions. Administrative operations (listing, pausing or resuming a
// group, recovering a node, pruning) scan the records they may touch.
//
// # Clock
//
// The store's clock is [Options.Now], which tests replace with a manual
// clock to exercise check-ins and dead-node detection without waiting.
package memstore
