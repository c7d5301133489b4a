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
	// formatYAML prints the API's JSON form as block-style YAML.
	formatYAML outputFormat = "yaml"
)

// String implements pflag.Value.
func (f *outputFormat) String() string { return string(*f) }

// Set implements pflag.Value, refusing formats other than table, json and
// yaml.
func (f *outputFormat) Set(s string) error {
	switch outputFormat(s) {
	case formatTable, formatJSON, formatYAML:
		*f = outputFormat(s)
		return nil
	}
	return fmt.Errorf("unknown output format %q: want table, json or yaml", s)
}

// Type implements pflag.Value.
func (f *outputFormat) Type() string { return "table|json|yaml" }

// addOutputFlag adds -o/--output to cmd's persistent flags.
func addOutputFlag(cmd *cobra.Command, f *outputFormat) {
	*f = formatTable
	cmd.PersistentFlags().VarP(f, "output", "o", "output format: table, json or yaml")
}

// writeStructured writes v for scripts in format: indented JSON, or the
// same fields as YAML.
func writeStructured(w io.Writer, format outputFormat, v any) error {
	if format != formatYAML {
		return writeJSON(w, v)
	}
	out, err := marshalYAML(v)
	if err != nil {
		return fmt.Errorf("writing YAML: %w", err)
	}
	_, err = w.Write(out)
	return err
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
	// rows counts the rows written after the headings; empty is what
	// flush writes instead of the headings when there are none.
	rows  int
	empty string
}

// newTable starts a table on w with the given column headings.
func newTable(w io.Writer, headings ...string) *table {
	t := &table{w: w}
	t.tw = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', 0)
	if len(headings) > 0 {
		t.writeRow(headings)
	}
	return t
}

// ifEmpty makes flush write msg, such as "no jobs", instead of the
// headings alone when the table has no row, so that an empty list says it
// is empty.
func (t *table) ifEmpty(msg string) *table {
	t.empty = msg
	return t
}

// row writes one row. Tabs and newlines inside cells are replaced by
// spaces, so that a cell cannot break the layout.
func (t *table) row(cells ...string) {
	t.rows++
	t.writeRow(cells)
}

// writeRow writes the cells of a row or of the headings.
func (t *table) writeRow(cells []string) {
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
	if t.rows == 0 && t.empty != "" {
		_, err := fmt.Fprintln(t.w, t.empty)
		return err
	}
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

// formatDuration rounds d for people: "0 ms", "4 ms", "−4 ms", "1.5 s",
// "2 min 5 s", "3 h 20 min". A duration that rounds to zero has no sign.
// It uses the minus sign U+2212, as the console does.
func formatDuration(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign = "−"
		d = -d
	}
	var s string
	switch ms := d.Round(time.Millisecond); {
	case ms == 0:
		return "0 ms"
	case ms < time.Second:
		s = fmt.Sprintf("%d ms", ms.Milliseconds())
	case d < 10*time.Second:
		s = strings.TrimSuffix(fmt.Sprintf("%.1f", d.Round(100*time.Millisecond).Seconds()), ".0") + " s"
	case d.Round(time.Second) < time.Minute:
		s = fmt.Sprintf("%d s", int64(d.Round(time.Second).Seconds()))
	case d.Round(time.Second) < time.Hour:
		d = d.Round(time.Second)
		s = fmt.Sprintf("%d min %d s", int64(d/time.Minute), int64(d%time.Minute/time.Second))
	default:
		d = d.Round(time.Minute)
		s = fmt.Sprintf("%d h %d min", int64(d/time.Hour), int64(d%time.Hour/time.Minute))
	}
	return sign + s
}

// formatOffset formats a duration the API gives as Go text, such as a
// node's clock offset "-3.828253ms", with formatDuration; text that is not
// a duration is shown as it is, and "" as "-".
func formatOffset(s string) string {
	d, err := time.ParseDuration(s)
	if err != nil {
		return orDash(s)
	}
	return formatDuration(d)
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
