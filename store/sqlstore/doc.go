// Package sqlstore is chime's SQL store: one implementation of
// [store.Store] shared by SQLite (the embedded default), PostgreSQL and
// MySQL 8 / MariaDB 10.6+. It passes the contract's suite (package
// storetest) on all three.
//
//	s, err := sqlstore.Open(ctx, "postgres://chime@db/chime", nil)
//
// [Open] takes a URL (sqlite:PATH, postgres://…, mysql://…) and owns its
// pool; [OpenDB] wraps a pool the caller owns. Both migrate the schema
// first.
//
// # Schema
//
// Six tables, each named with [Options.TablePrefix] (default "chime_"):
// jobs, triggers, calendars, paused_groups, executions and nodes, plus
// schema_migrations. Every row carries sched_name ([Options.SchedulerName])
// and every statement filters on it, so independent schedulers can share
// one set of tables; primary keys start with sched_name. Instants are
// BIGINT Unix nanoseconds (NULL for the zero time; instants between 1678
// and 2262 round-trip exactly), durations BIGINT nanoseconds, and job data,
// trigger data, schedules and calendars JSON text stored byte for byte
// (PostgreSQL json, not jsonb; MySQL LONGTEXT, not MySQL's normalizing
// JSON; SQLite TEXT). Names and keys compare byte-wise, trailing spaces
// included (COLLATE "C" on PostgreSQL; on MySQL the binary NO PAD
// collation, utf8mb4_0900_bin on MySQL 8 and utf8mb4_nopad_bin on MariaDB,
// to which tables an older version created in utf8mb4_bin are converted
// at start), so lists sort as Go sorts strings.
// The table definitions are in schemaV1 (migrate.go), and the later
// migrations there.
//
// The indexes that matter:
//   - triggers_claim (state, sched_name, next_fire_time, priority DESC,
//     trigger_group, trigger_name), ordered like the claiming query, so a
//     claim reads and locks no more rows than it returns;
//   - executions_fire_key, unique on (trigger_group, trigger_name,
//     scheduled_time, sched_name): the key that makes a second firing of
//     one instant impossible even if every lock failed. TriggerFire maps
//     its violation to [store.ErrAlreadyFired];
//   - triggers by job; executions by job and by node (migration 5),
//     with no column a completion changes (state, error, finished time),
//     so that completing an execution writes no index entry: a HOT update
//     on PostgreSQL, whose executions table keeps half of each page free
//     for it (fillfactor 50). Queries for running executions filter on
//     state after the index.
//
// On MySQL, the lookups correlated with each row of another table (a
// job's triggers in the completion's orphan-job DELETE, a job's
// executions in the busy check) name their index (FORCE INDEX, the
// {use:NAME} token): InnoDB plans them from index statistics, which for up
// to 10 s after a table is created and filled are those of the empty
// table, and MariaDB then read every row of the scheduler per outer row,
// share-locking each in the DELETE (see hintedIndexes in dialect.go).
//
// # Dialects
//
// Every statement is written once (queries.go, one named constant per
// step) with tokens each dialect renders: {p} the prefix, {now} the
// database clock, {share}/{update}/{skip} row locks, {wake} a PostgreSQL
// RETURNING clause, {use:NAME} a MySQL index hint, and ? Placeholders ($n
// on PostgreSQL). What differs:
//
//	                    PostgreSQL               MySQL / MariaDB            SQLite
//	clock ({now})       clock_timestamp()        UTC_TIMESTAMP(6)           unixepoch('subsec') (ms)
//	shared row lock     FOR SHARE                LOCK IN SHARE MODE         none: one writer
//	exclusive row lock  FOR UPDATE               FOR UPDATE                 none: one writer
//	claiming            one UPDATE … RETURNING   SELECT … SKIP LOCKED,      SELECT, then UPDATE
//	                                             then UPDATE
//	upsert              ON CONFLICT DO UPDATE    ON DUPLICATE KEY UPDATE    ON CONFLICT DO UPDATE
//	isolation           READ COMMITTED           READ COMMITTED             serialized writers
//	retried errors      40001, 40P01             1213, 1205                 SQLITE_BUSY/LOCKED
//	push notifications  LISTEN/NOTIFY            none (poll)                none (poll)
//
// SQLite write transactions begin with BEGIN IMMEDIATE (taking the write
// lock up front, so they never deadlock upgrading a read lock), wait up to
// 10 s for another process's write lock (busy_timeout), and run in WAL
// mode, where readers do not block the writer. Several processes may share
// one SQLite file. Its pool defaults to one connection per process. The
// process clock is the database clock of an embedded database; SQLite
// reads it in milliseconds.
//
// MySQL sessions run at READ COMMITTED (set per session by Open, per
// transaction for a pool given to OpenDB), which avoids gap locks; Open
// sets interpolateParams, so each statement is one round trip.
//
// Each dialect sorts its driver's errors in one function (classifyPostgres,
// classifyMySQL, classifySQLite), and Store.translate maps them to the
// store's sentinels: no rows to the method's NotFound error, a unique
// violation to its Exists error (or ErrAlreadyFired), anything after Close
// to [store.ErrClosed]. A transaction that lost a race (deadlock, lock wait
// timeout, serialization failure, SQLite busy) runs again, up to six times
// in all, after a short jittered pause.
//
// # Claiming
//
// TriggersAcquire claims row by row; no statement takes a lock wider than
// the rows it returns, so nodes do not queue behind each other. On
// PostgreSQL (sqlAcquirePostgres):
//
//	WITH due AS (SELECT sched_name, trigger_group, trigger_name FROM chime_triggers
//	    WHERE sched_name = $1 AND state = 'WAITING' AND next_fire_time <= $2
//	    ORDER BY next_fire_time, priority DESC, trigger_group, trigger_name
//	    LIMIT $3 FOR UPDATE SKIP LOCKED)
//	UPDATE chime_triggers AS t SET state = 'ACQUIRED', claimed_by = $4, claim_epoch = $5, version = t.version + 1
//	FROM due WHERE … RETURNING …
//
// On MySQL the same SELECT … FOR UPDATE SKIP LOCKED (sqlAcquireSelect)
// locks the rows and an UPDATE by their keys (acquireClaimSQL) claims them
// in the same transaction (MariaDB has no UPDATE … RETURNING); SQLite runs
// the same two statements inside its single write transaction. The
// returned triggers are sorted in Go.
//
// # Fencing
//
// Every write a node makes starts with its lease check (sqlNodeLeaseShare):
// the node's row read under a shared lock (FOR KEY SHARE on PostgreSQL,
// LOCK IN SHARE MODE on MySQL) and its epoch compared with the lease's, in
// the same transaction as the write. The shared lock is held until commit,
// so recovery, which takes the dead node's row FOR UPDATE
// (sqlNodeLockSilent) and bumps its epoch, waits for the node's writes in
// flight and fences every later one with [store.ErrFenced]. NodeRegister
// and NodeUnregister take the node's own row FOR UPDATE; NodeCheckIn takes
// it FOR NO KEY UPDATE on PostgreSQL, which the node's own writes in flight
// do not hold up. In normal operation a node only locks its own node row:
// there is no cluster-wide lock.
//
// # Firing
//
// TriggerFire runs in one transaction: the lease check; the trigger row
// FOR UPDATE, still ACQUIRED by this lease or [store.ErrNotClaimed]; the
// job; for a job that disallows concurrency, the job row FOR UPDATE and a
// look for a running execution (then the trigger becomes BLOCKED and
// nothing fires); the execution INSERT (sqlExecutionInsert), guarded by
// executions_fire_key; the advanced timing (sqlTriggerSetTiming); and for
// a non-concurrent job, its other triggers BLOCKED (sqlJobBlock).
//
// TriggersFire and ExecutionsComplete ([store.Batcher], batch.go) do the
// same for many triggers or executions in one transaction, with statements
// that do not grow with the batch: one locking read, one read of the jobs,
// a multi-row INSERT, and an UPDATE from rows of values (a WITH of VALUES
// and UPDATE … FROM on PostgreSQL and SQLite, a join to a UNION ALL on
// MySQL). Triggers of non-concurrent jobs, and completions with job data
// or an instruction other than deleting the trigger, take the
// one-at-a-time path inside the same transaction. On PostgreSQL these
// transactions plan every statement for its arguments (plan_cache_mode =
// force_custom_plan, set by the lease check's statement): generic plans
// of key lists ran ten times slower.
// Custom plans by key need statistics: a PostgreSQL store analyzes the
// tables PostgreSQL never analyzed once they hold work (analyze.go).
//
// TriggersAcquireFire (acquirefire.go) claims and fires the triggers that
// are due already in one transaction: the claiming read of
// sqlAcquireSelect (FOR UPDATE SKIP LOCKED where the database has it), the
// read of their jobs, then an UPDATE that marks ACQUIRED only those not
// fired, and the INSERT and UPDATE of TriggersFire for the others, which go
// from WAITING to their next state in one write, held by the claiming
// read's row locks until the commit.
//
// Every transaction that decides whether a non-concurrent job is busy (fire,
// completion, release, insert, recovery, reconciliation) holds that job's
// row lock, so no two see a stale view of its executions. Locks are taken
// trigger rows first, job row second where both are needed.
//
// # Pausing
//
// paused_groups holds one row per (sched_name, kind, group_name): kind
// TRIGGER or JOB with a trigger group or job group, or ALL with an empty
// group name. A row is created, unpaused, the first time a pause, resume
// or trigger insert needs it, and is never deleted; its paused column is
// the record, and PausedGroups lists the rows where it is set. The rows are
// lock points that make pausing and resuming serialize with inserting
// triggers, per group:
//
//   - TriggersPause and TriggersResume of everything write the ALL row
//     (an upsert, whose exclusive lock is held until commit) before they
//     update any trigger; resuming everything then clears every paused
//     row. Of a trigger group or job group, they read the ALL row under a
//     shared lock, then write the group's row likewise. Selecting a
//     trigger or a job records nothing and locks no such row.
//   - TriggerInsert (and replace) of a trigger with a next fire time reads
//     the ALL row, its job group's row and its trigger group's row under
//     shared locks (sqlPausedOfInsert), creating the missing ones, before
//     any other lock, and stores the trigger PAUSED when one is paused.
//
// At READ COMMITTED, if the insert holds its shared locks first, the pause
// (or resume) waits for the insert to commit, and its UPDATE of the
// triggers, a later statement, sees the new trigger; if the pause holds
// the exclusive lock first, the insert's locking read waits for it to
// commit and reads the committed value: PostgreSQL re-reads the latest
// version of a row it waited for, and InnoDB's locking reads read the
// latest committed version. Either way the outcome is that of running the
// two one after the other. Every transaction takes these locks in the
// order ALL, JOB, TRIGGER, and before the trigger and job rows.
//
// The cost: every insert of a trigger takes three shared row locks, on one
// row every insert shares (ALL) and on one its job group's inserts share.
// Shared locks do not conflict with each other, so inserts do not wait on
// each other; only a pause or resume waits for the inserts in flight into
// its group (all of them, for everything), and holds new ones back until
// it commits. On PostgreSQL a shared row lock is written into the row
// (several lockers make a MultiXact), so many concurrent inserts all write
// the ALL row's lock information; inserting triggers is not on the firing
// path, which never touches paused_groups.
//
// # Recovery and reconciliation
//
// NodesRecover finds the nodes whose last check-in is DeadAfter behind the
// database clock (sqlNodesSilent), then recovers each in its own
// transaction under its row lock: its claims return to WAITING
// (sqlReleaseClaimsOfNode), its executions become RECOVERABLE or FAILED
// "node lost", the failed jobs' triggers are unblocked, and its epoch is
// bumped with dead set. NodeRegister does the same for the previous
// incarnation of a restarting node, and NodeUnregister for a stopping one
// ("node stopped").
//
// Reconcile repairs what no sequence of calls leaves behind but a hand
// edit or a bug can: claims and executions under no live lease, and
// BLOCKED triggers of an idle job. Each repair locks the rows its check
// found, so the check and the repair are one atomic step; see
// [Store.Reconcile].
//
// # Clock
//
// Now, check-ins and dead-node detection read the database clock inside
// SQL ({now}); node clocks are never compared with each other.
//
// # Notifications
//
// On PostgreSQL, every transaction that leaves a trigger WAITING with a
// next fire time (insert, resume, release, TriggerFire, recovery,
// unblocking) ends with SELECT pg_notify(channel, <earliest such time, Unix
// ms>), which PostgreSQL delivers at commit. (TriggersFire does not: the
// node that fired the triggers claims them again itself.)
// [Store.WatchTriggers] LISTENs on one dedicated connection and hands the
// times to the engine, which wakes early instead of waiting for its next
// poll. SQLite and MySQL stores return an error wrapping
// [errors.ErrUnsupported] from WatchTriggers: the engine then polls only.
//
// # Migrations
//
// The schema is versioned (schema_migrations, one row per applied version)
// and migrated by Open and OpenDB, or [Store.Migrate], under a lock, so
// that nodes starting together on an empty database apply each migration
// once: pg_advisory_xact_lock with the DDL in the same transaction on
// PostgreSQL, the BEGIN IMMEDIATE write lock likewise on SQLite, and
// GET_LOCK on MySQL, whose DDL commits by itself (its statements are
// idempotent, so a migration interrupted halfway completes on the next
// start). Migrations only add, so an older binary runs on a newer schema
// during a rolling upgrade.
//
// The migrator is a small one of this package (migrate.go) rather than
// github.com/golang-migrate/migrate: its SQLite driver's lock is an
// in-process flag, so processes starting together on one file race; each
// driver's Close closes the *sql.DB it was given, which OpenDB must not do;
// a migration and its version record are separate transactions (a failure
// between them leaves a "dirty" schema to repair by hand); and it keeps
// one version row rather than a history.
package sqlstore
