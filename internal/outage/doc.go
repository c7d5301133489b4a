// Package outage follows a run of consecutive failures of one dependency,
// in practice the store, for the loops that call it over and over (the
// engine's firing loop, the cluster member's check-ins).
//
// A Tracker answers two questions after each failure: how long to wait
// before the next attempt (an exponential backoff between a minimum and a
// maximum), and whether this failure deserves a log line. The answer to the
// second is yes for the failure that starts an outage and then at most once
// per LogEvery while it lasts, so that a database down for an hour costs a
// few dozen log lines instead of one per attempt. The first success after
// failures ends the outage and reports how long it lasted.
//
// A Tracker reads no clock: callers pass the current time, so tests decide
// it. It is not safe for concurrent use; each loop owns its own.
package outage
