package sqlstore

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// Dialect names a supported database.
type Dialect string

// Supported dialects.
const (
	// SQLite is an embedded SQLite file (pure-Go driver modernc.org/sqlite,
	// WAL journal). One writer at a time, any number of processes.
	SQLite Dialect = "sqlite"
	// Postgres is PostgreSQL 13 or later (driver pgx v5).
	Postgres Dialect = "postgres"
	// MySQL is MySQL 8.0 or MariaDB 10.6 or later (driver
	// go-sql-driver/mysql).
	MySQL Dialect = "mysql"
)

// dialect holds everything that differs between the databases. The rest of
// the package writes one SQL text per step, with these tokens that render()
// replaces:
//
//	{p}       the table prefix
//	{now}     the database clock, in Unix nanoseconds (a BIGINT expression)
//	{share}   a shared row lock on the rows a SELECT returns
//	{update}  an exclusive row lock on the rows a SELECT returns
//	{skip}    an exclusive row lock that skips rows other transactions hold
//	{leaseshare}   the shared lock of a lease check (FOR KEY SHARE on
//	               PostgreSQL: see sqlNodeLeaseShare)
//	{leaseupdate}  the lock a check-in takes (FOR NO KEY UPDATE on
//	               PostgreSQL, which lease checks do not conflict with)
//	{wake}    ends an UPDATE of triggers: on PostgreSQL, RETURNING the state
//	          and next fire time of the updated rows, for the notification
//	{use:NAME}  after a table (and its alias) in a FROM, makes MySQL read
//	            that table through the index NAME ({p}NAME): FORCE INDEX.
//	            Empty elsewhere. NAME is one of hintedIndexes.
//	?         a bind parameter (rewritten to $1, $2, … for PostgreSQL)
type dialect struct {
	name Dialect
	// now is an SQL expression for the database's clock in Unix nanoseconds.
	now string
	// share, update and skip are the row-locking clauses appended to a
	// SELECT; empty on SQLite, whose write transactions hold the database's
	// single write lock from BEGIN IMMEDIATE on.
	share, update, skip string
	// leaseShare and leaseUpdate lock a node row for a lease check and for
	// a check-in; see sqlNodeLeaseShare.
	leaseShare, leaseUpdate string
	// dollar makes bind parameters $1, $2, … instead of ?. It is set for
	// PostgreSQL only, which is also the only dialect with {wake}.
	dollar bool
	// ddlTypes replaces the column type tokens of the schema.
	ddlTypes *strings.Replacer
	// classify sorts a driver error into the classes the store handles.
	classify func(err error) errClass
	// replacers caches the token replacer of each table prefix.
	replacers sync.Map
}

// errClass is what the store needs to know about a driver error.
type errClass struct {
	// unique is set for a unique or primary key violation; constraint names
	// the violated index when the driver says.
	unique     bool
	constraint string
	// retry is set when the transaction lost a race (deadlock, lock wait
	// timeout, serialization failure, SQLite busy) and may be run again.
	retry bool
}

func dialectFor(name Dialect) (*dialect, error) {
	switch name {
	case SQLite:
		return &dialect{
			name: SQLite,
			// The process clock is the database clock of an embedded
			// database; SQLite reads it with millisecond precision.
			now: "(CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000)",
			ddlTypes: strings.NewReplacer(
				"{key}", "TEXT",
				"{text}", "TEXT",
				"{json}", "TEXT",
				"{bool}", "BOOLEAN",
				"{opts}", "",
			),
			classify: classifySQLite,
		}, nil
	case Postgres:
		return &dialect{
			name:        Postgres,
			now:         "((EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT * 1000)",
			share:       " FOR SHARE",
			update:      " FOR UPDATE",
			skip:        " FOR UPDATE SKIP LOCKED",
			leaseShare:  " FOR KEY SHARE",
			leaseUpdate: " FOR NO KEY UPDATE",
			dollar:      true,
			ddlTypes: strings.NewReplacer(
				"{key}", `VARCHAR(200) COLLATE "C"`,
				"{text}", "TEXT",
				"{json}", "JSON", // not JSONB: stored byte for byte
				"{bool}", "BOOLEAN",
				"{opts}", "",
			),
			classify: classifyPostgres,
		}, nil
	case MySQL:
		return &dialect{
			name: MySQL,
			// Independent of the session time zone.
			now:         "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) * 1000)",
			share:       " LOCK IN SHARE MODE", // MariaDB has no FOR SHARE
			update:      " FOR UPDATE",
			skip:        " FOR UPDATE SKIP LOCKED",
			leaseShare:  " LOCK IN SHARE MODE",
			leaseUpdate: " FOR UPDATE",
			ddlTypes:    mysqlTypes(padBinary),
			classify:    classifyMySQL,
		}, nil
	}
	return nil, fmt.Errorf("unknown dialect %q (supported: %s, %s, %s)", name, SQLite, Postgres, MySQL)
}

// MySQL's binary collations of utf8mb4. Keys must compare byte for byte,
// trailing spaces included: a PAD SPACE collation (utf8mb4_bin) makes "a"
// and "a " one key. MySQL 8 names its NO PAD binary collation
// utf8mb4_0900_bin, MariaDB utf8mb4_nopad_bin.
const (
	padBinary        = "utf8mb4_bin"
	mysqlNoPadBinary = "utf8mb4_0900_bin"
	mariaNoPadBinary = "utf8mb4_nopad_bin"
)

// mysqlTypes is the MySQL dialect's column type tokens, its tables in
// collation.
func mysqlTypes(collation string) *strings.Replacer {
	return strings.NewReplacer(
		"{key}", "VARCHAR(200)",
		"{text}", "LONGTEXT",
		"{json}", "LONGTEXT", // not MySQL's JSON, which normalizes
		"{bool}", "BOOLEAN",
		"{opts}", " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE="+collation,
	)
}

// render replaces the tokens of an SQL text for this dialect and prefix.
func (d *dialect) render(prefix, q string) string {
	q = d.replacer(prefix).Replace(q)
	if !d.dollar {
		return strings.ReplaceAll(q, "{wake}", "")
	}
	q = strings.ReplaceAll(q, "{wake}", " RETURNING state, next_fire_time")
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// replacer returns the replacer of the tokens other than {wake} and ?,
// built once per prefix: statements built for each batch are rendered
// each time.
func (d *dialect) replacer(prefix string) *strings.Replacer {
	if r, ok := d.replacers.Load(prefix); ok {
		return r.(*strings.Replacer)
	}
	pairs := []string{
		"{p}", prefix,
		"{now}", d.now,
		"{share}", d.share,
		"{update}", d.update,
		"{skip}", d.skip,
		"{leaseshare}", d.leaseShare,
		"{leaseupdate}", d.leaseUpdate,
		"{intdiv}", d.intDiv(),
	}
	for _, ix := range hintedIndexes {
		hint := ""
		if d.name == MySQL {
			hint = " FORCE INDEX (" + prefix + ix + ")"
		}
		pairs = append(pairs, "{use:"+ix+"}", hint)
	}
	r := strings.NewReplacer(pairs...)
	d.replacers.Store(prefix, r)
	return r
}

// hintedIndexes are the indexes statements name with {use:NAME}: those
// that correlated lookups (a subquery per row of the outer table) must
// read. InnoDB estimates such a lookup from the index's statistics, which
// are those of the empty table until its background recalculation, at
// most every 10 s, catches up with the rows inserted since: a table
// created and filled moments ago (a fresh install, a bulk insert of jobs)
// has an index on (job_group, job_name, sched_name) that looks no more
// selective than the primary key's sched_name, and MariaDB then reads
// every row of the scheduler for each outer row. In a locking statement it
// share-locks each of those rows in turn, so it waits for every other
// node's firing in flight and holds up the next ones: a completion's
// orphan-job DELETE on 50,000 triggers read 31 million rows in 18 s. The
// hint makes the plan independent of statistics. Migrations must never
// drop an index listed here, or older binaries would fail on a newer
// schema.
var hintedIndexes = []string{"triggers_job", "executions_by_job"}

// intDiv is the operator that divides two integers into an integer: MySQL's
// / gives a decimal.
func (d *dialect) intDiv() string {
	if d.name == MySQL {
		return "DIV"
	}
	return "/"
}

// insertIgnore returns the clause that makes an INSERT into a table with the
// given primary key a no-op when the key is taken.
func (d *dialect) insertIgnore(keyCols, anyCol string) string {
	if d.name == MySQL {
		return " ON DUPLICATE KEY UPDATE " + anyCol + " = " + anyCol
	}
	return " ON CONFLICT (" + keyCols + ") DO NOTHING"
}

// upsert returns the clause that makes an INSERT into table ({p}name)
// replace the row with the given primary key, setting cols from the inserted values and counting the
// write in the version column.
func (d *dialect) upsert(table, keyCols string, cols []string) string {
	var b strings.Builder
	if d.name == MySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE ")
		for _, c := range cols {
			b.WriteString(c + " = VALUES(" + c + "), ")
		}
	} else {
		b.WriteString(" ON CONFLICT (" + keyCols + ") DO UPDATE SET ")
		for _, c := range cols {
			b.WriteString(c + " = excluded." + c + ", ")
		}
	}
	if d.name == MySQL {
		b.WriteString("version = version + 1")
	} else {
		b.WriteString("version = " + table + ".version + 1")
	}
	return b.String()
}

// ColumnType is the type of a [Column].
type ColumnType int

// Types of a [Column].
const (
	// ColumnText is text: TEXT, VARCHAR or a {key}.
	ColumnText ColumnType = iota
	// ColumnBigInt is a BIGINT (or an INTEGER column's value).
	ColumnBigInt
	// ColumnJSON is JSON text, passed as text; a statement casts it to
	// its JSON column on PostgreSQL.
	ColumnJSON
	// ColumnBool is a BOOLEAN.
	ColumnBool
)

// Column is a column of rows of values that a statement passes as bind
// parameters: one parameter a value in a VALUES list, or on PostgreSQL one
// array a column (see [Unnest]).
type Column struct {
	Name string
	Type ColumnType
}

// rowsUpdate is an UPDATE of one table from rows of values given as bind
// parameters: each row names the row to update and gives its new values.
type rowsUpdate struct {
	table string   // the table, without prefix; aliased t
	cols  []Column // the columns of the rows; aliased v
	match string   // the condition that joins t and v
	// set assigns the updated columns (unqualified); {json:v.x} stores
	// v.x in a JSON column.
	set string
}

// updateFromRows renders u for rows of values, one per element of u.cols,
// for the scheduler sched, and returns its text (with the tokens render
// replaces) and arguments. It is one statement whatever the number of
// rows: an UPDATE … FROM unnest of one array a column on PostgreSQL (see
// arrays.go), a WITH of VALUES and UPDATE … FROM on SQLite, a
// multiple-table UPDATE joined to a UNION ALL on MySQL.
func (d *dialect) updateFromRows(u rowsUpdate, rows [][]any, sched string) (string, []any, error) {
	set := u.set
	for _, c := range u.cols {
		if c.Type == ColumnJSON {
			json := "v." + c.Name
			if d.name == Postgres {
				json = "CAST(v." + c.Name + " AS JSON)"
			}
			set = strings.ReplaceAll(set, "{json:v."+c.Name+"}", json)
		}
	}
	if d.name == Postgres {
		// One array a column (see arrays.go).
		arrays, err := ColumnArrays(u.cols, rows)
		if err != nil {
			return "", nil, fmt.Errorf("updating %s: %w", u.table, err)
		}
		return "UPDATE {p}" + u.table + " AS t SET " + set + " FROM " + Unnest(u.cols) +
			" WHERE t.sched_name = ? AND " + u.match, append(arrays, sched), nil
	}
	args := make([]any, 0, len(rows)*len(u.cols)+1)
	for _, r := range rows {
		args = append(args, r...)
	}
	args = append(args, sched)
	var b strings.Builder
	if d.name == MySQL {
		b.WriteString("UPDATE {p}" + u.table + " AS t JOIN (")
		for i := range rows {
			if i > 0 {
				b.WriteString(" UNION ALL ")
			}
			b.WriteString("SELECT ")
			for j, c := range u.cols {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString("?")
				if i == 0 {
					b.WriteString(" AS " + c.Name)
				}
			}
		}
		b.WriteString(") AS v ON " + u.match + " SET " + set + " WHERE t.sched_name = ?")
		return b.String(), args, nil
	}
	b.WriteString("WITH v (")
	for j, c := range u.cols {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name)
	}
	b.WriteString(") AS (VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?" + strings.Repeat(", ?", len(u.cols)-1) + ")")
	}
	b.WriteString(") UPDATE {p}" + u.table + " AS t SET " + set + " FROM v WHERE t.sched_name = ? AND " + u.match)
	return b.String(), args, nil
}

// classifyPostgres reads PostgreSQL's SQLSTATE.
func classifyPostgres(err error) errClass {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return errClass{}
	}
	switch pgErr.Code {
	case "23505": // unique_violation
		return errClass{unique: true, constraint: pgErr.ConstraintName}
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return errClass{retry: true}
	}
	return errClass{}
}

// mysqlDupKey finds the index name in MySQL's and MariaDB's duplicate entry
// message, the only place either reports it: "Duplicate entry '…' for key
// 'name'" (MySQL 8 qualifies it as 'table.name').
var mysqlDupKey = regexp.MustCompile(`for key '(?:[^']*\.)?([^'.]*)'$`)

// classifyMySQL reads MySQL's and MariaDB's error numbers.
func classifyMySQL(err error) errClass {
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) {
		return errClass{}
	}
	switch myErr.Number {
	case 1062: // ER_DUP_ENTRY
		c := errClass{unique: true}
		if m := mysqlDupKey.FindStringSubmatch(myErr.Message); m != nil {
			c.constraint = m[1]
		}
		return c
	case 1213, 1205: // ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT
		return errClass{retry: true}
	}
	return errClass{}
}

// SQLite result codes (sqlite3.h).
const (
	sqliteBusy                 = 5
	sqliteLocked               = 6
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

// classifySQLite reads SQLite's extended result codes. SQLite names no
// index; a primary key violation is reported as the constraint "pkey".
func classifySQLite(err error) errClass {
	var sqErr *sqlite.Error
	if !errors.As(err, &sqErr) {
		return errClass{}
	}
	switch sqErr.Code() {
	case sqliteConstraintPrimaryKey:
		return errClass{unique: true, constraint: "pkey"}
	case sqliteConstraintUnique:
		return errClass{unique: true, constraint: sqliteUniqueIndex(sqErr.Error())}
	}
	switch sqErr.Code() & 0xff {
	case sqliteBusy, sqliteLocked:
		return errClass{retry: true}
	}
	return errClass{}
}

// sqliteUniqueIndex tells the unique indexes of the schema apart by the
// columns SQLite lists in its message.
func sqliteUniqueIndex(msg string) string {
	if strings.Contains(msg, ".scheduled_time") {
		return "executions_fire_key"
	}
	return ""
}
