// Package livelog keeps the log lines of running executions where every
// node of a chime server cluster can read them while the executions run:
// the "rolling log" that GET /api/v1/executions/{id}/logs/stream and the
// console's execution page show live.
//
// # Table
//
// [New] migrates one table through the store's migrator
// ([sqlstore.Store.MigrateComponent], component "livelog", versions in
// {prefix}livelog_schema_migrations):
//
//   - livelog_lines: one row per line, keyed by (sched_name,
//     execution_id, seq), with the line's time (BIGINT Unix nanoseconds),
//     level, message and attributes (JSON text).
//
// Seq numbers an execution's lines from 1, in the order the execution
// logged them; it is the same numbering as the execution's lines in the
// history once it ends, so a reader that switches from this table to the
// history knows which lines it has already shown.
//
// # Writing
//
// [Log.Append] stores lines of one execution. It is idempotent: a line
// whose (execution, seq) is stored already is left as it is, so that a
// writer may retry a batch whose answer it lost. It keeps at most
// [Options.MaxLines] lines per execution (seq 1 to MaxLines) and cuts a
// message or attributes longer than [Options.MaxLineBytes]. It is the one
// door for lines, whatever their source: a scheduler node's own runs
// through a [Buffer], executors through the server's API.
//
// A [Buffer] is what a node's runner writes through: its executions'
// lines are kept in memory and appended every [BufferOptions.Interval]
// (300ms by default) by one goroutine, in one multi-row INSERT for all of
// the node's executions. An execution that logs nothing costs no
// statement at all. [Buffer.End] drops an ended execution's pending lines
// and deletes its rows, once its history holds them.
//
// # Reading and retention
//
// [Log.Read] returns an execution's lines after a seq, in order. Rows
// are deleted when the execution's history records its end ([Log.Delete],
// through [Buffer.End]); the rows of an execution whose node died before
// it could end it are deleted by [Log.Prune] once older than the
// history's retention. Nothing grows without bound: MaxLines rows of
// MaxLineBytes per execution, each deleted at its end or by age.
package livelog
