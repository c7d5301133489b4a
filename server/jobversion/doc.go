// Package jobversion keeps the versions of chime server's jobs: every
// successful create, update, delete and rollback of a job stores the job's
// spec as the API shows it, who made the change, when, and what kind of
// change it was, so that the history of a job can be listed, two of its
// versions compared, and the job rolled back to one of them.
//
// # Storage
//
// Versions live in one table of the store's database,
// {prefix}versions_jobs (component "versions", see
// [sqlstore.Store.MigrateComponent]); every row carries the store's
// scheduler name. A job's versions are numbered from 1 in the order they
// were recorded, by [Versions.Record], which takes the next number in a
// transaction of its own. The numbers go on across a delete and a new job
// of the same key, so that a deleted job's versions stay readable and
// restorable. Each row also holds the job's own version counter after the
// write (0 for a delete).
//
// Record is idempotent: each call names an ID, and a call with an ID
// already stored returns that version instead of recording another, so
// that a write retried after a lost answer records one version.
//
// # Repairs
//
// The server writes a job and then its version, in two transactions; a
// node that dies between them leaves a change without a version, which
// the server repairs later with a version whose actor is [RepairActor].
// A version recorded afterwards for the same job version by another
// actor (the change's own, which was on its way) takes the repair's
// place, at its number, instead of following it.
//
// # Retention
//
// Only the newest [Options.Keep] versions of each job are kept: Record
// deletes the older ones of the same job in the statement after its
// insert, a range delete on the table's primary key.
//
// # Secrets
//
// A spec must never hold a secret in clear. The caller stores specs masked
// as the API masks them for viewers (package secret's MaskJob) and lists,
// in [Version.Masked], the JSON pointers (RFC 6901) of the values masking
// replaced, so that a rollback knows which values it cannot restore from
// the version.
package jobversion
