package sqlstore

import (
	"context"
	"sync"
)

// analyzeExecutionsAfter is how many firings a PostgreSQL store records
// before it makes sure that its executions table has statistics (see
// statsCheck).
const analyzeExecutionsAfter = 100

// statsCheck makes sure, once per store, that PostgreSQL has statistics
// for the store's tables once they hold work.
//
// Every statement of a batch selects the rows of its keys within the
// scheduler (sched_name = ? AND the keys). Until PostgreSQL has analyzed a
// table it estimates the rows of any one scheduler at a handful, and plans
// these statements as a read of every row of the scheduler filtered by
// key: each batch then costs as much as the table is large, not as the
// batch is. Autovacuum analyzes a table only once it changed by 50 rows
// and a tenth, and at most every minute (autovacuum_naptime), so a table
// created or filled a moment ago (a new deployment, a bulk of new jobs,
// every benchmark run) is planned that way for up to a minute or more:
// a PostgreSQL backend then spent, per batch of 20 completions, 14 ms of
// CPU on a table of 10,000 executions. Once analyzed, the statistics say
// that sched_name is one value for all rows, whatever the table grows to,
// and the same statements read their keys through the primary key.
//
// So at its first claim a store analyzes its jobs and triggers tables,
// and after analyzeExecutionsAfter firings its executions table (which
// holds rows only once triggers fire), each only when PostgreSQL never
// analyzed it. It does so once per table, after the transaction that
// claimed or fired committed, on a goroutine of its own that Close stops
// and waits for; a failure (a user without the right to analyze) is only
// logged. The first claim, not the first firing: a node claims triggers
// up to its look-ahead (2s) before they are due, so the statistics are
// there when they fire. Analyzing at the first firing left the firings
// that came due while ANALYZE read the tables (tens of milliseconds for
// 20,000 rows) to the plans that scan.
type statsCheck struct {
	mu                   sync.Mutex
	seen                 int
	tablesDone, execDone bool
	// components are the components' tables AnalyzeOnce was asked for.
	components map[string]bool
}

// AnalyzeOnce makes sure, once per store and table, that PostgreSQL has
// statistics for a component's tables, named without the prefix: a
// component calls it once the tables hold work, for the reason statsCheck
// tells. A queue-like table (rows that live seconds) is where it matters
// most: until it is analyzed, PostgreSQL plans a read by primary key as a
// read of every row of the scheduler, or by any secondary index whose
// columns the statement also names. It returns at once: the ANALYZE runs
// on a goroutine that Close stops and waits for, and only for a table
// PostgreSQL never analyzed; a failure is only logged. It does nothing on
// the other databases, which plan by key without statistics.
func (s *Store) AnalyzeOnce(names ...string) {
	if s.d.name != Postgres {
		return
	}
	c := &s.stats
	c.mu.Lock()
	defer c.mu.Unlock()
	var todo []string
	for _, name := range names {
		if !c.components[name] {
			if c.components == nil {
				c.components = make(map[string]bool)
			}
			c.components[name] = true
			todo = append(todo, name)
		}
	}
	if len(todo) > 0 {
		s.analyzeLater(todo)
	}
}

// sawClaims notes that the store claimed or fired n triggers, and analyzes
// its jobs and triggers tables at the first, when they lack statistics.
func (s *Store) sawClaims(n int) {
	if s.d.name != Postgres || n == 0 {
		return
	}
	c := &s.stats
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.tablesDone {
		c.tablesDone = true
		s.analyzeLater([]string{"jobs", "triggers"})
	}
}

// sawFirings counts n firings the store recorded (each also a claim), and
// analyzes the tables that lack statistics when it is time to.
func (s *Store) sawFirings(n int) {
	if s.d.name != Postgres || n == 0 {
		return
	}
	s.sawClaims(n)
	c := &s.stats
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen += n
	if !c.execDone && c.seen >= analyzeExecutionsAfter {
		c.execDone = true
		s.analyzeLater([]string{"executions"})
	}
}

// analyzeLater analyzes those of tables that PostgreSQL never analyzed on
// a goroutine of its own, so that the caller is not held up; Close cancels
// it and waits for it. The caller holds s.stats.mu, which Close takes
// before it waits: a store closed by then starts nothing.
func (s *Store) analyzeLater(tables []string) {
	if s.closed.Load() {
		return
	}
	s.background.Go(func() { s.analyzeNeverAnalyzed(s.stop, tables) })
}

// analyzeNeverAnalyzed runs ANALYZE on those of the store's tables named
// (without the prefix) that PostgreSQL has not analyzed yet.
func (s *Store) analyzeNeverAnalyzed(ctx context.Context, names []string) {
	for _, name := range names {
		// The prefix is [a-z0-9_]* (see Options.TablePrefix): the name
		// needs no quoting.
		table := s.prefix + name
		var never bool
		err := s.db.QueryRowContext(ctx, `SELECT last_analyze IS NULL AND last_autoanalyze IS NULL `+
			`FROM pg_stat_user_tables WHERE relid = to_regclass($1)`, table).Scan(&never)
		if err != nil {
			s.log.Warn("cannot tell whether a table of the store has statistics", "table", table, "error", err)
			continue
		}
		if !never {
			continue
		}
		if _, err := s.db.ExecContext(ctx, "ANALYZE "+table); err != nil {
			s.log.Warn("cannot analyze a table of the store; its batches may be planned as scans until autovacuum analyzes it", "table", table, "error", err)
			continue
		}
		s.log.Debug("analyzed a table that had no statistics", "table", table)
	}
}
