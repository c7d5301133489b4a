package sqlstore

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// On PostgreSQL the statements that carry a batch of rows (the fire's
// INSERT of executions, the UPDATEs of fired triggers and of completed
// executions) pass one array a column and read the rows back with
// unnest, instead of one bind parameter a value in a VALUES list. The
// statement's text is then the same for every batch size, so each
// connection prepares it once rather than once a size, and the driver
// converts and encodes a few arrays instead of thousands of parameters
// (in W1b, 12 KB allocated by the node per firing, most of it for the
// parameters).

// pgArrayType is the array type a column of rows is cast to.
func pgArrayType(t ColumnType) string {
	switch t {
	case ColumnBigInt:
		return "BIGINT[]"
	case ColumnBool:
		return "BOOLEAN[]"
	}
	return "TEXT[]"
}

// ColumnArrays returns rows of values (one per column of cols, a nil value
// being NULL, but in a BOOLEAN column) as one array a column, the
// arguments of the PostgreSQL statement that reads them back with
// [Unnest]: pgtype.Text for text and JSON, pgtype.Int8 for BIGINT, bool
// for BOOLEAN. Text takes a string or []byte or a value of a string type;
// BIGINT an int64, int or int32.
func ColumnArrays(cols []Column, rows [][]any) ([]any, error) {
	out := make([]any, len(cols))
	for j, c := range cols {
		var err error
		switch c.Type {
		case ColumnBool:
			out[j], err = columnArray(rows, j, boolOf)
		case ColumnBigInt:
			out[j], err = columnArray(rows, j, int8Of)
		default:
			out[j], err = columnArray(rows, j, textOf)
		}
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	return out, nil
}

// columnArray converts the values of column j of rows with conv.
func columnArray[T any](rows [][]any, j int, conv func(any) (T, error)) ([]T, error) {
	a := make([]T, len(rows))
	for i, r := range rows {
		v, err := conv(r[j])
		if err != nil {
			return nil, err
		}
		a[i] = v
	}
	return a, nil
}

// boolOf converts a value of a BOOLEAN column, which has no NULL.
func boolOf(v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("%T is not a bool", v)
	}
	return b, nil
}

// textOf converts a value of a text column; nil is NULL.
func textOf(v any) (pgtype.Text, error) {
	switch x := v.(type) {
	case nil:
		return pgtype.Text{}, nil
	case string:
		return pgtype.Text{String: x, Valid: true}, nil
	case []byte:
		return pgtype.Text{String: string(x), Valid: true}, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.String {
		return pgtype.Text{String: rv.String(), Valid: true}, nil
	}
	return pgtype.Text{}, fmt.Errorf("%T is not text", v)
}

// int8Of converts a value of a BIGINT column; nil is NULL.
func int8Of(v any) (pgtype.Int8, error) {
	switch x := v.(type) {
	case nil:
		return pgtype.Int8{}, nil
	case int64:
		return pgtype.Int8{Int64: x, Valid: true}, nil
	case int:
		return pgtype.Int8{Int64: int64(x), Valid: true}, nil
	case int32:
		return pgtype.Int8{Int64: int64(x), Valid: true}, nil
	}
	return pgtype.Int8{}, fmt.Errorf("%T is not an integer", v)
}

// Unnest renders, for PostgreSQL, the FROM item that reads the columns
// cols back from their arrays (see [ColumnArrays]), aliased v:
// "unnest(CAST(? AS TEXT[]), …) AS v (name, …)". A statement built with it
// has the same text whatever the number of rows, so each connection
// prepares it once.
func Unnest(cols []Column) string {
	var b strings.Builder
	b.WriteString("unnest(")
	for j, c := range cols {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString("CAST(? AS " + pgArrayType(c.Type) + ")")
	}
	b.WriteString(") AS v (")
	for j, c := range cols {
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(c.Name)
	}
	b.WriteString(")")
	return b.String()
}
