package sqlstore_test

import (
	"fmt"

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
