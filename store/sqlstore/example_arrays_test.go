package sqlstore_test

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// A component that inserts a batch of rows passes them on PostgreSQL as
// one array a column (when Store.Arrays reports true): Unnest renders the
// FROM item that reads them back, ColumnArrays converts the rows to its
// arguments, and the statement's text is the same for any number of rows.
func ExampleUnnest() {
	cols := []sqlstore.Column{
		{Name: "id", Type: sqlstore.ColumnText},
		{Name: "attempt", Type: sqlstore.ColumnBigInt},
		{Name: "manual", Type: sqlstore.ColumnBool},
	}
	stmt := "INSERT INTO {p}notes (sched_name, id, attempt, manual) SELECT ?, v.id, v.attempt, v.manual FROM " +
		sqlstore.Unnest(cols)
	arrays, err := sqlstore.ColumnArrays(cols, [][]any{{"a", 1, false}, {"b", nil, true}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(stmt)
	fmt.Printf("%d arrays of %d rows; attempt of b is NULL: %v\n", len(arrays), 2, !arrays[1].([]pgtype.Int8)[1].Valid)
	// Output:
	// INSERT INTO {p}notes (sched_name, id, attempt, manual) SELECT ?, v.id, v.attempt, v.manual FROM unnest(CAST(? AS TEXT[]), CAST(? AS BIGINT[]), CAST(? AS BOOLEAN[])) AS v (id, attempt, manual)
	// 3 arrays of 2 rows; attempt of b is NULL: true
}

// TestColumnArraysNamesTheColumnOfABadValue converts rows whose value
// does not fit its column's type: the error names the column and the
// value's type, and no arrays come back.
func TestColumnArraysNamesTheColumnOfABadValue(t *testing.T) {
	t.Parallel()
	cols := []sqlstore.Column{
		{Name: "id", Type: sqlstore.ColumnText},
		{Name: "attempt", Type: sqlstore.ColumnBigInt},
		{Name: "manual", Type: sqlstore.ColumnBool},
	}
	for _, tc := range []struct {
		row  []any
		want string
	}{
		{[]any{1.5, 1, true}, "column id: float64 is not text"},
		{[]any{"a", "1", true}, "column attempt: string is not an integer"},
		{[]any{"a", 1, nil}, "column manual: <nil> is not a bool"},
	} {
		arrays, err := sqlstore.ColumnArrays(cols, [][]any{{"ok", 2, false}, tc.row})
		if err == nil || err.Error() != tc.want || arrays != nil {
			t.Errorf("ColumnArrays(%v) = %v, %v; want no arrays and %q", tc.row, arrays, err, tc.want)
		}
	}
}
