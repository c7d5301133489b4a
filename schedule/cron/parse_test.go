package cron

import (
	"errors"
	"strings"
	"testing"
)

// TestParseQuartzRejects covers every way the strict parser differs from
// Quartz (README "Where chime deliberately differs", item 1 and 8), and
// the errors Quartz itself raises.
func TestParseQuartzRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		expr  string
		field string // "" for whole-expression errors
	}{
		{"field after the seventh", "0 0 12 * * ? 2024 extra", ""},
		{"too few fields", "0 0 12 * *", ""},
		{"empty", "", ""},
		{"blank", " \t ", ""},
		{"trailing bang after day name", "0 0 12 ? * MON!", "day-of-week"},
		{"long day name", "0 0 12 ? * MONDAY", "day-of-week"},
		{"long day name in range", "0 0 12 ? * MON-FRIDAY", "day-of-week"},
		{"decimal", "0 0 12 1.5 * ?", "day-of-month"},
		{"trailing letter", "0 0 12 5C * ?", "day-of-month"},
		{"star followed by digit", "*5 * * * * ?", "second"},
		{"exponent", "0 0 12 1e2 * ?", "day-of-month"},
		{"hex", "0 0 12 0x1 * ?", "day-of-month"},
		{"empty list item", "0 0 12 ? * MON,,FRI", "day-of-week"},
		{"trailing comma", "0 0 12 ? * MON,", "day-of-week"},
		{"leading empty item", "0,,5 * * * * ?", "second"},
		{"marker value 98", "0 0 12 98 * MON", "day-of-month"},
		{"marker value 99", "99 * * * * ?", "second"},
		{"zero step", "0/0 * * * * ?", "second"},
		{"zero step on star", "*/0 * * * * ?", "second"},
		{"negative step", "*/-5 * * * * ?", "second"},
		{"zero year step", "0 0 0 1 1 ? 2024/0", "year"},
		{"step larger than the field", "0-59/70 * * * * ?", "second"},
		{"step larger than the week", "0 0 12 ? * 1-7/8", "day-of-week"},
		{"step larger than the day", "0 0 0/25 * * ?", "hour"},
		{"huge step", "*/99999999999 * * * * ?", "second"},
		{"L in seconds", "L * * * * ?", "second"},
		{"L in hours", "0 0 L * * ?", "hour"},
		{"L in month", "0 0 12 ? L MON", "month"},
		{"L in year", "0 0 12 ? * * L", "year"},
		{"W in a list", "0 0 12 20,15W * ?", "day-of-month"},
		{"W in a range", "0 0 12 1-15W * ?", "day-of-month"},
		{"W with step", "0 0 12 */5W * ?", "day-of-month"},
		{"zero W never terminates in Quartz", "0 0 12 0W * ?", "day-of-month"},
		{"W beyond 31", "0 0 12 32W * ?", "day-of-month"},
		{"bare W", "0 0 12 W * ?", "day-of-month"},
		{"W in day-of-week", "0 0 12 ? * 5W", "day-of-week"},
		{"# in a list", "0 0 12 ? * 6#3,2#1", "day-of-week"},
		{"# with day 0", "0 0 12 ? * 0#1", "day-of-week"},
		{"# with day 8", "0 0 12 ? * 8#1", "day-of-week"},
		{"# zero", "0 0 12 ? * 6#0", "day-of-week"},
		{"# six", "0 0 12 ? * 6#6", "day-of-week"},
		{"# outside day-of-week", "0 0 #1 * * ?", "hour"},
		{"L-W", "0 0 12 L-W * ?", "day-of-month"},
		{"L offset beyond 30", "0 0 12 L-31 * ?", "day-of-month"},
		{"L in a list", "0 0 12 L,15 * ?", "day-of-month"},
		{"LW in a list", "0 0 12 LW,15 * ?", "day-of-month"},
		{"nL in a list", "0 0 12 ? * 5L,6", "day-of-week"},
		{"nL in a range", "0 0 12 ? * 2-6L", "day-of-week"},
		{"L after star", "0 0 12 ? * *L", "day-of-week"},
		{"L after a day of month", "0 0 12 1L * ?", "day-of-month"},
		{"name with step", "0 0 12 ? * MON/2", "day-of-week"},
		{"month name with step", "0 0 12 ? JAN/2 MON", "month"},
		{"mixed name and number range", "0 0 12 ? * 1-FRI", "day-of-week"},
		{"year before 1970", "0 0 0 1 1 ? 1969", "year"},
		{"year after 2199", "0 0 0 1 1 ? 2200", "year"},
		{"year 3000", "0 0 0 1 1 ? 3000", "year"},
		{"backward year range", "0 0 0 1 1 ? 2030-2025", "year"},
		{"bare slash", "/5 * * * * ?", "second"},
		{"slash without step", "5/ * * * * ?", "second"},
		{"two slashes", "1/2/3 * * * * ?", "second"},
		{"both day fields set", "0 0 12 * * *", "day-of-week"},
		{"both day fields set with a day", "0 0 12 * * MON", "day-of-week"},
		{"both day fields '?'", "0 0 12 ? * ?", "day-of-week"},
		{"question mark in minutes", "0 ? 12 * * ?", "minute"},
		{"double question mark", "0 0 12 ?? * MON", "day-of-month"},
		{"question mark in a list", "0 0 12 ?,5 * MON", "day-of-month"},
		{"second out of range", "60 * * * * ?", "second"},
		{"int overflow", "2147483648 * * * * ?", "second"},
		{"day of month 0", "0 0 12 0 * ?", "day-of-month"},
		{"month 13", "0 0 12 1 13 ?", "month"},
		{"day of week 0", "0 0 12 ? * 0", "day-of-week"},
		{"day of week 8", "0 0 12 ? * 8", "day-of-week"},
		{"name in the wrong field", "0 0 MON * * ?", "hour"},
		{"day name in month", "0 0 12 ? MON *", "month"},
		{"descriptor", "@daily", ""},
		{"line break inside", "0 0 12\n* * ?", ""},
		{"non-breaking space", "0 0 12 \u00a0* * ?", "day-of-month"},
		{"full-width question mark", "0 0 12 * * \uff1f", "day-of-week"},
		{"dangling range", "0 0 12 ? 1 SUN-", "day-of-week"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := ParseQuartz(tt.expr)
			if err == nil {
				t.Fatalf("ParseQuartz(%q) = %q, want an error", tt.expr, e)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseQuartz(%q) error %v is not a *ParseError", tt.expr, err)
			}
			if pe.Field != tt.field {
				t.Errorf("ParseQuartz(%q) field = %q, want %q (%v)", tt.expr, pe.Field, tt.field, err)
			}
			if pe.Expr != tt.expr {
				t.Errorf("ParseError.Expr = %q, want %q", pe.Expr, tt.expr)
			}
			if pe.Reason == "" {
				t.Errorf("ParseError.Reason is empty")
			}
		})
	}
}

func TestParseQuartzCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want string
	}{
		{"simple", "0 0 12 * * ?", "0 0 12 * * ?"},
		{"lower-case names", "0 0 12 ? * mon-fri", "0 0 12 ? * MON-FRI"},
		{"mixed-case names", "0 0 12 ? jAn-MaR fRi", "0 0 12 ? JAN-MAR FRI"},
		{"leading zeros", "00000000000000000005 * * * * ?", "5 * * * * ?"},
		{"blanks around and tabs", " 0\t0  12 * * ?\n", "0 0 12 * * ?"},
		{"star year is dropped", "0 0 12 * * ? *", "0 0 12 * * ?"},
		{"year kept", "0 0 12 * * ? 2024/2", "0 0 12 * * ? 2024/2"},
		{"wrapping range", "0 0 22-2 * * ?", "0 0 22-2 * * ?"},
		{"last day offset", "0 0 12 l-3w * ?", "0 0 12 L-3W * ?"},
		{"last day zero offset", "0 0 12 L-0 * ?", "0 0 12 L-0 * ?"},
		{"nearest weekday", "0 0 12 015W * ?", "0 0 12 15W * ?"},
		{"nth day", "0 0 12 ? * fri#3", "0 0 12 ? * FRI#3"},
		{"last friday", "0 0 12 ? * 6l", "0 0 12 ? * 6L"},
		{"lone L in day-of-week", "0 0 12 ? * L", "0 0 12 ? * L"},
		{"names and numbers in a list", "0 0 12 1 JAN,2,MAR ?", "0 0 12 1 JAN,2,MAR ?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := ParseQuartz(tt.expr)
			if err != nil {
				t.Fatalf("ParseQuartz(%q): %v", tt.expr, err)
			}
			if got := e.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want string
	}{
		{"field", "0 0 12 32 * ?", `cron: day-of-month "32": value out of range 1-31`},
		{"whole expression", "0 0 12", `cron: "0 0 12": expected 6 or 7 fields, got 3`},
		{"keeps the original case", "0 0 12 ? * Monday", `cron: day-of-week "Monday": unknown name "MONDAY"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseQuartz(tt.expr)
			if err == nil {
				t.Fatalf("ParseQuartz(%q) succeeded", tt.expr)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseDecidesDialect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		expr    string
		want    string // canonical form; "" when an error is expected
		wantErr string // substring of the error
	}{
		{"five fields are standard", "*/5 * * * *", "*/5 * * * *", ""},
		{"six fields are Quartz", "0 */5 * * * ?", "0 */5 * * * ?", ""},
		{"seven fields are Quartz", "0 */5 * * * ? 2030", "0 */5 * * * ? 2030", ""},
		{"descriptor", "  @Daily ", "@daily", ""},
		{"every", "@every 90m", "@every 1h30m0s", ""},
		{"four fields", "* * * *", "", "expected 5, 6 or 7 fields, got 4"},
		{"eight fields", "0 0 12 * * ? 2024 2025", "", "expected 5, 6 or 7 fields, got 8"},
		{"unknown descriptor", "@sometimes", "", "unknown descriptor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := Parse(tt.expr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want one containing %q", tt.expr, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.expr, err)
			}
			if got := e.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}
