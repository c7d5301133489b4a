package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// outputFormat is the value of -o/--output: how a command prints what it
// got.
type outputFormat string

const (
	// formatTable prints aligned columns for people.
	formatTable outputFormat = "table"
	// formatJSON prints the API's JSON, indented, for scripts.
	formatJSON outputFormat = "json"
)

// String implements pflag.Value.
func (f *outputFormat) String() string { return string(*f) }

// Set implements pflag.Value, refusing formats other than table and json.
func (f *outputFormat) Set(s string) error {
	switch outputFormat(s) {
	case formatTable, formatJSON:
		*f = outputFormat(s)
		return nil
	}
	return fmt.Errorf("unknown output format %q: want table or json", s)
}

// Type implements pflag.Value.
func (f *outputFormat) Type() string { return "table|json" }

// addOutputFlag adds -o/--output to cmd's persistent flags.
func addOutputFlag(cmd *cobra.Command, f *outputFormat) {
	*f = formatTable
	cmd.PersistentFlags().VarP(f, "output", "o", "output format: table or json")
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// table writes rows as aligned columns. Call flush once all rows are
// written.
type table struct {
	w   io.Writer
	buf bytes.Buffer
	tw  *tabwriter.Writer
}

// newTable starts a table on w with the given column headings.
func newTable(w io.Writer, headings ...string) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	if len(headings) > 0 {
		t.row(headings...)
	}
	return t
}

// row writes one row. Tabs and newlines inside cells are replaced by
// spaces, so that a cell cannot break the layout.
func (t *table) row(cells ...string) {
	clean := make([]string, len(cells))
	for i, c := range cells {
		clean[i] = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return ' '
			}
			return r
		}, c)
	}
	fmt.Fprintln(t.tw, strings.Join(clean, "\t"))
}

// flush writes the aligned table out, without the padding that empty last
// cells leave at the end of lines.
func (t *table) flush() error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for line := range strings.Lines(t.buf.String()) {
		out.WriteString(strings.TrimRight(line, " \n"))
		out.WriteByte('\n')
	}
	t.buf.Reset()
	_, err := io.WriteString(t.w, out.String())
	return err
}

// timeLayout is how tables show instants: second precision, with the
// offset the instant carries.
const timeLayout = "2006-01-02 15:04:05Z07:00"

// formatTime formats an instant for a table; the zero time or nil is "-".
func formatTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Format(timeLayout)
}

// orDash returns s, or "-" when s is empty, so that empty cells stay
// visible.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
