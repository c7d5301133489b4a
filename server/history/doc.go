// Package history is chime server's record of what happened: executions
// with their outcome, output and logs; the scheduler's decisions about
// firings ("why did job X not run at 02:00?"); and the audit log of
// changes made through the server. It lives in the scheduler store's
// database (SQLite, PostgreSQL or MySQL/MariaDB), next to the store's
// tables, and works the same on each.
//
//	h, err := history.New(ctx, st, nil) // st is a *sqlstore.Store
//
// # Tables
//
// [New] migrates three tables through the store's migrator
// ([sqlstore.Store.MigrateComponent], component "server", versions in
// {prefix}server_schema_migrations), each named with the store's table
// prefix (default "chime_"):
//
//   - server_executions: one row per attempt, keyed by the chime
//     execution ID, with first_id linking the attempts of one firing.
//     Indexed by start time, by job and start time, by job, outcome and
//     finish time (LastSuccess), by outcome, by node (MarkNodeLost) and by
//     first_id (Attempts).
//   - server_decisions: one row per decision, indexed by job and time and
//     by time.
//   - server_audit: one row per change, indexed by time, by actor and by
//     target.
//
// Every row carries the store's scheduler name and every statement filters
// on it, so several schedulers can share one database. Instants are BIGINT
// Unix nanoseconds, data (parameters, log lines, audit details) JSON text.
//
// # Executions
//
// [History.Start] records an execution when its job starts and
// [History.Finish] when it ends; only a running execution can finish,
// once. [History.RecordBatch] writes many starts and ends in one
// transaction (one multi-row INSERT per 50 starts, an UPDATE per end; an
// execution whose end comes with its start is inserted once, finished),
// each record checked and answered on its own: the server records its
// executions this way, a batch per commit. Output beyond
// [Options.MaxOutputBytes] and log lines beyond [Options.MaxLogLines] are
// cut in the middle, keeping the beginning and the end, and the cut is
// marked. When a node dies, [History.MarkNodeLost] ends its running
// executions as node_lost, so that nothing stays running forever. A retry
// or recovery is a new execution with the next Attempt and the first
// attempt's ID as FirstID; [History.Attempts] lists them.
//
// # Lists and cursors
//
// [History.List] and [History.ListAudit] return pages newest first, by
// start time (audit time) and then ID. A page's Next is an opaque cursor:
// the time and ID of its last row, base64-encoded; the next page holds
// the rows strictly after that position. Rows recorded between calls are
// newer than the cursor, so they appear on no later page and do not shift
// it: paging never repeats or skips a row. Lists leave out the output and
// logs of executions; [History.Get] returns them. List filters by job,
// outcomes, node and a [From, To) range of start times.
//
// # Activity
//
// [History.Activity] counts every job's executions per time bucket of a
// window (fires, successes, failures, mean and largest lag) in one query
// grouped by the integer bucket of the start time, (started_time - From)
// divided by the bucket width: "/" on SQLite and PostgreSQL, whose
// integer division truncates, and "DIV" on MySQL, whose "/" gives a
// decimal. It fills in empty buckets, reads lag percentiles from the
// window's newest executions and counts those running now.
//
// # Retention
//
// [History.Prune] deletes executions beyond a job's newest MaxPerJob (the
// cap), and old executions beyond its newest KeepPerJob (the floor);
// running executions are never deleted. Decisions go by age alone; the
// audit log is never pruned. Prune's doc states the rule exactly. Deletes
// run in batches of 500 rows. A [Pruner] runs Prune every interval
// (defaults: 30 days, at least 100 and at most 10000 per job, hourly),
// against the database's clock.
package history
