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
// So at its first firing a store analyzes its jobs and triggers tables,
// and after analyzeExecutionsAfter firings its executions table (which
// holds rows only once triggers fire), each only when PostgreSQL never
// analyzed it. It does so once per table, after the transaction that
// fired committed, on a goroutine of its own that Close stops and waits
// for; a failure (a user without the right to analyze) is only logged.
type statsCheck struct {
	mu                   sync.Mutex
	seen                 int
	tablesDone, execDone bool
}

// sawFirings counts n firings the store recorded, and analyzes the tables
// that lack statistics when it is time to.
func (s *Store) sawFirings(n int) {
	if s.d.name != Postgres || n == 0 {
		return
	}
	c := &s.stats
	c.mu.Lock()
	var tables []string
	if !c.tablesDone {
		c.tablesDone = true
		tables = append(tables, "jobs", "triggers")
	}
	c.seen += n
	if !c.execDone && c.seen >= analyzeExecutionsAfter {
		c.execDone = true
		tables = append(tables, "executions")
	}
	c.mu.Unlock()
	if len(tables) > 0 {
		// On its own goroutine, so that the batch that fired is not held
		// up; Close cancels it and waits for it.
		s.background.Go(func() { s.analyzeNeverAnalyzed(s.stop, tables) })
	}
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
