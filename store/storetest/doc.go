// Package storetest is the conformance suite every chime store runs: the
// in-memory store, SQLite, PostgreSQL and MySQL/MariaDB.
//
// A store's test calls [Run] with a function that returns a new, empty
// store. Every sentence of the contract in package store has a subtest:
// jobs, calendars and triggers with their errors and stored states,
// pausing and resuming, acquisition order and limits, releasing, firing
// (claims, the (trigger, scheduled time) unique key, non-concurrent jobs),
// completion instructions, execution listing and pruning, node
// registration, check-ins, recovery of dead nodes, fencing of stale leases,
// and a race of several nodes firing the same triggers.
//
// Dead-node tests need the store's clock to move. A store built on an
// injected clock can expose it through [Advancer] (see [Clock]); a store on
// a real clock makes the suite wait about a second, in parallel, instead.
package storetest
