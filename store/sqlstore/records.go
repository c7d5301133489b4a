package sqlstore

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// nanos is the stored form of an instant: Unix nanoseconds, NULL for the
// zero time. Instants between the years 1678 and 2262 round-trip exactly;
// writes check others away with checkInstants.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// inRange reports whether t fits the schema's Unix nanoseconds in an int64.
func inRange(t time.Time) bool {
	return !t.Before(time.Unix(0, math.MinInt64)) && !t.After(time.Unix(0, math.MaxInt64))
}

// checkInstants refuses instants the schema cannot hold (before 1677-09-21
// or after 2262-04-11), which would otherwise wrap around silently.
func checkInstants(what string, ts ...time.Time) error {
	for _, t := range ts {
		if !t.IsZero() && !inRange(t) {
			return fmt.Errorf("%w: %s: instant %s is outside the years 1678 to 2262 the store can hold", errInvalid, what, t)
		}
	}
	return nil
}

// boundNanos is a query bound: t in Unix nanoseconds, clamped to what the
// schema can hold.
func boundNanos(t time.Time) int64 {
	switch {
	case inRange(t):
		return t.UnixNano()
	case t.Before(time.Unix(0, 0)):
		return math.MinInt64
	}
	return math.MaxInt64
}

// instant reads a stored instant back, in UTC.
func instant(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64).UTC()
}

// jsonArg is the stored form of JSON data: the text as given, NULL when
// empty.
func jsonArg(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// checkJSON refuses data that is not JSON, the same way on every dialect
// (PostgreSQL's json type would refuse it with a less helpful error).
func checkJSON(what string, b []byte) error {
	if len(b) > 0 && !json.Valid(b) {
		return fmt.Errorf("%w: %s is not valid JSON", errInvalid, what)
	}
	return nil
}

// bytesOrNil returns nil for an empty slice.
func bytesOrNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func scanJob(sc scanner) (store.JobRecord, error) {
	var j store.JobRecord
	var timeout int64
	err := sc.Scan(&j.Key.Group, &j.Key.Name, &j.Type, &j.Description, &j.Durable, &j.RequestsRecovery,
		&j.DisallowConcurrent, &j.PersistData, &timeout, &j.Data, &j.Meta, &j.Version)
	j.Timeout = time.Duration(timeout)
	j.Data = bytesOrNil(j.Data)
	j.Meta = bytesOrNil(j.Meta)
	return j, err
}

func scanTrigger(sc scanner) (store.TriggerRecord, error) {
	var (
		t                          store.TriggerRecord
		start, end, next, prev     sql.NullInt64
		state                      string
		timesTriggered, claimEpoch int64
		rearmMs                    int64
	)
	err := sc.Scan(&t.Key.Group, &t.Key.Name, &t.JobKey.Group, &t.JobKey.Name, &t.Description, &t.Priority,
		&t.Kind, &t.Schedule, &t.CalendarName, &t.MisfireInstruction, &t.Data, &t.Origin, &t.Meta, &rearmMs, &start, &end, &next, &prev,
		&timesTriggered, &state, &t.ClaimedBy, &claimEpoch, &t.Version)
	t.StartTime, t.EndTime, t.NextFireTime, t.PreviousFireTime = instant(start), instant(end), instant(next), instant(prev)
	t.TimesTriggered = int(timesTriggered)
	t.RearmDelay = time.Duration(rearmMs) * time.Millisecond
	t.ClaimEpoch = claimEpoch
	t.State = store.TriggerState(state)
	t.Schedule = bytesOrNil(t.Schedule)
	t.Data = bytesOrNil(t.Data)
	t.Meta = bytesOrNil(t.Meta)
	return t, err
}

func scanExecution(sc scanner) (store.ExecutionRecord, error) {
	var (
		e                         store.ExecutionRecord
		scheduled, fired, finshed sql.NullInt64
		state                     string
	)
	err := sc.Scan(&e.ID, &e.TriggerKey.Group, &e.TriggerKey.Name, &e.JobKey.Group, &e.JobKey.Name,
		&scheduled, &fired, &finshed, &e.NodeID, &e.Epoch, &state, &e.Recovering, &e.RequestsRecovery,
		&e.Priority, &e.Error)
	e.ScheduledTime, e.FiredTime, e.FinishedTime = instant(scheduled), instant(fired), instant(finshed)
	e.State = store.ExecutionState(state)
	return e, err
}

func scanCalendar(sc scanner) (store.CalendarRecord, error) {
	var c store.CalendarRecord
	err := sc.Scan(&c.Name, &c.Data, &c.Version)
	c.Data = bytesOrNil(c.Data)
	return c, err
}

func scanNode(sc scanner) (store.NodeRecord, error) {
	var n store.NodeRecord
	var checkIn sql.NullInt64
	err := sc.Scan(&n.ID, &n.Epoch, &checkIn, &n.Dead)
	n.LastCheckIn = instant(checkIn)
	return n, err
}

// collect scans every row with scan.
func collect[T any](rows *sql.Rows, err error, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanKey reads a (group, name) pair.
func scanKey(sc scanner) (store.Key, error) {
	var k store.Key
	err := sc.Scan(&k.Group, &k.Name)
	return k, err
}

func keyCompare(a, b store.Key) int {
	if c := strings.Compare(a.Group, b.Group); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// dueOrder is the order of claiming: earliest first, then highest
// priority, then by key.
func dueOrder(a, b store.TriggerRecord) int {
	if c := a.NextFireTime.Compare(b.NextFireTime); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	return keyCompare(a.Key, b.Key)
}

// keysWhere is KeysWhere for the store's own keys, with each group's
// names as d.in renders them: on PostgreSQL one array (name = ANY(…)), so
// that the statement's text depends on the number of groups only (see
// arrays.go).
func (d *dialect) keysWhere(groupCol, nameCol string, keys []store.Key, args []any) (string, []any) {
	return keysWhereWith(groupCol, nameCol, len(keys), func(i int) (string, string) { return keys[i].Group, keys[i].Name }, args, d.in)
}

// in renders "col IN (?, …)" for n values, or on PostgreSQL
// "col = ANY(CAST(? AS TEXT[]))" for one array of them, and appends the
// values to args as its arguments.
func (d *dialect) in(col string, values []string, args []any) (string, []any) {
	if d.name == Postgres {
		return col + " = ANY(CAST(? AS TEXT[]))", append(args, values)
	}
	return inList(col, values, args)
}

// inList renders "col IN (?, …)" for the values and appends them to args.
func inList(col string, values []string, args []any) (string, []any) {
	for _, v := range values {
		args = append(args, v)
	}
	return col + " IN (" + Placeholders(len(values)) + ")", args
}

// KeysWhere renders "((group = ? AND name IN (?, …)) OR …)" for the n
// keys key(0) to key(n-1), a group and a name each, grouping names by
// group so that every dialect uses an index that starts with the two
// columns (the store's primary keys, a component's job indexes), and
// appends the arguments to args.
func KeysWhere(groupCol, nameCol string, n int, key func(i int) (group, name string), args []any) (string, []any) {
	return keysWhereWith(groupCol, nameCol, n, key, args, inList)
}

// keysWhereWith is KeysWhere with each group's names rendered by in.
func keysWhereWith(groupCol, nameCol string, n int, key func(i int) (group, name string), args []any,
	in func(col string, values []string, args []any) (string, []any)) (string, []any) {
	byGroup := make(map[string][]string)
	var groups []string
	for i := range n {
		g, name := key(i)
		if _, ok := byGroup[g]; !ok {
			groups = append(groups, g)
		}
		byGroup[g] = append(byGroup[g], name)
	}
	terms := make([]string, len(groups))
	for i, g := range groups {
		var names string
		names, args = in(nameCol, byGroup[g], append(args, g))
		terms[i] = "(" + groupCol + " = ? AND " + names + ")"
	}
	return "(" + strings.Join(terms, " OR ") + ")", args
}
