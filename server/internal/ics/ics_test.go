package ics_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/internal/ics"
)

// now is the tests' current instant: Years 2 keeps 2026's and 2027's
// recurrences.
var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func berlin(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dates(r *ics.Result) []string {
	var out []string
	for _, d := range r.Dates {
		out = append(out, d.String())
	}
	return out
}

func TestDatesGoogle(t *testing.T) {
	t.Parallel()
	// No Location: the file's X-WR-TIMEZONE, Europe/Berlin.
	r, err := ics.Dates(t.Context(), read(t, "google-holidays.ics"), ics.Options{Now: now, Years: 2})
	if err != nil {
		t.Fatalf("Dates: %v", err)
	}
	want := []string{
		"2026-04-06", // no DTEND: one day
		"2026-05-25", // DTEND is exclusive
		// The cancelled 2026-05-01 is left out.
		"2026-10-03",               // 23:00Z to 01:00Z: 01:00 to 03:00 in Berlin
		"2026-12-25", "2026-12-26", // two days
		"2026-12-31", // floating time, in Berlin
	}
	if got := dates(r); !reflect.DeepEqual(got, want) {
		t.Errorf("dates:\n got  %v\n want %v", got, want)
	}
	if r.Events != 5 || r.Name != "Holidays in Germany" || r.Location.String() != "Europe/Berlin" {
		t.Errorf("Events %d, Name %q, Location %s; want 5, Holidays in Germany, Europe/Berlin", r.Events, r.Name, r.Location)
	}
}

func TestDatesThunderbird(t *testing.T) {
	t.Parallel()
	r, err := ics.Dates(t.Context(), read(t, "thunderbird-holidays.ics"), ics.Options{Location: berlin(t), Now: now, Years: 2})
	if err != nil {
		t.Fatalf("Dates: %v", err)
	}
	want := []string{
		"2025-01-01",                             // yearly from 2025
		"2025-09-02",                             // RECURRENCE-ID moved 2025-09-01 here
		"2025-12-29", "2025-12-30", "2025-12-31", // DURATION:P3D, COUNT=2
		"2026-01-01",
		"2026-01-15", "2026-02-15", "2026-03-15", "2026-04-15", // monthly UNTIL 2026-04-15
		"2026-06-01", "2026-06-15", "2026-06-29", // every two weeks, COUNT=3
		"2026-07-05", // 20:00 to 02:00 in New York: 02:00 to 08:00 on the 5th in Berlin
		"2026-08-01", // daily COUNT=3 less a two-date EXDATE
		"2026-12-29", "2026-12-30", "2026-12-31",
		"2027-01-01", // 2028's is past the two-year horizon
		"2027-09-06", // first Monday of September; 2026-09-07 is an EXDATE
	}
	if got := dates(r); !reflect.DeepEqual(got, want) {
		t.Errorf("dates:\n got  %v\n want %v", got, want)
	}
	if r.Events != 8 || r.Name != "" {
		t.Errorf("Events %d, Name %q; want 8 and none", r.Events, r.Name)
	}

	// In New York the fireworks start on the 4th and end at 02:00 on the
	// 5th: both dates.
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	r, err = ics.Dates(t.Context(), read(t, "thunderbird-holidays.ics"), ics.Options{Location: ny, Now: now, Years: 1})
	if err != nil {
		t.Fatalf("Dates in New York: %v", err)
	}
	got := strings.Join(dates(r), " ")
	if !strings.Contains(got, "2026-07-04 2026-07-05") || strings.Contains(got, "2027-") {
		t.Errorf("dates in New York, one year: %s; want 2026-07-04 and 2026-07-05, nothing in 2027", got)
	}
}

func TestDatesMalformed(t *testing.T) {
	t.Parallel()
	event := func(lines ...string) string {
		return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:x\r\n" + strings.Join(lines, "\r\n") + "\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
	}
	tests := []struct {
		name string
		text string
		want string // the error's text, exactly
	}{
		{"FixtureNoColon", read(t, "malformed.ics"), "line 7: DTSTART: no ':' after the parameters, before the value"},
		{"Empty", "", "the file is empty"},
		{"NotICS", "hello world\n", `line 1: "hello world" has no ':' between a property name and its value`},
		{"NotCalendar", "BEGIN:VCARD\nEND:VCARD\n", "line 1: the file does not start with BEGIN:VCALENDAR: it is not an iCalendar file"},
		{"NeverClosed", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20260101\n", "line 2: BEGIN: BEGIN:VEVENT is never closed (no END:VEVENT)"},
		{"WrongEnd", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nEND:VTODO\nEND:VCALENDAR\n", "line 3: END: END:VTODO does not close BEGIN:VEVENT of line 2"},
		{"UnclosedQuote", event(`DTSTART;TZID="Europe/Berlin:20260101T100000`), `line 5: DTSTART: parameter TZID: a quoted value is not closed`},
		{"BadName", event("DT START:20260101"), `line 5: "DT START" is not a property name (letters, digits and '-')`},
		{"NoEvents", "BEGIN:VCALENDAR\nVERSION:2.0\nEND:VCALENDAR\n", "the file has no events (no VEVENT that is not cancelled)"},
		{"OnlyCancelled", event("DTSTART;VALUE=DATE:20260101", "STATUS:CANCELLED"), "the file has no events (no VEVENT that is not cancelled)"},
		{"NoStart", event("SUMMARY:Nothing"), `line 3: VEVENT: event "Nothing" at line 3 has no DTSTART`},
		{"BadDate", event("DTSTART;VALUE=DATE:2026-12-25"), `line 5: DTSTART: "2026-12-25" is not a date like 20241225`},
		{"BadDateTime", event("DTSTART:20261225T25"), `line 5: DTSTART: "20261225T25" is not a date-time like 20241225T090000Z`},
		{"UnknownZone", event("DTSTART;TZID=Mars/Olympus:20260101T100000"), `line 5: DTSTART: TZID "Mars/Olympus" is not a known IANA time zone`},
		{"EndBeforeStart", event("DTSTART;VALUE=DATE:20260105", "DTEND;VALUE=DATE:20260101"), "line 6: DTEND: 20260101 is before DTSTART 20260105"},
		{"EndKind", event("DTSTART;VALUE=DATE:20260105", "DTEND:20260106T100000Z"), "line 6: DTEND: is a date and DTSTART a date-time, or the reverse; both must be of one kind"},
		{"BadDuration", event("DTSTART;VALUE=DATE:20260105", "DURATION:3 days"), `line 6: DURATION: "3 days": invalid duration: expected 'P'`},
		{"BadRule", event("DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=SOMETIMES"), `line 6: RRULE: "FREQ=SOMETIMES": undefined frequency: SOMETIMES`},
		{"BadExdate", event("DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=DAILY;COUNT=2", "EXDATE;VALUE=DATE:20260106,tomorrow"), `line 7: EXDATE: "tomorrow" is not a date like 20241225`},
		{"SubDaily", event("DTSTART;VALUE=DATE:20260105", "RRULE:FREQ=HOURLY;COUNT=2"), `line 6: RRULE: "FREQ=HOURLY;COUNT=2": FREQ=HOURLY repeats within a day; a holiday calendar takes YEARLY, MONTHLY, WEEKLY or DAILY rules`},
		{"TooLong", event("DTSTART;VALUE=DATE:20260101", "DTEND;VALUE=DATE:20280101"), `line 6: DTEND: event at line 3 lasts 730 days; at most 366 are allowed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ics.Dates(t.Context(), tc.text, ics.Options{Now: now, Years: 5})
			var ie *ics.Error
			if !errors.As(err, &ie) || err.Error() != tc.want {
				t.Errorf("error %v\n want *ics.Error %q", err, tc.want)
			}
		})
	}
}

func TestDatesTooMany(t *testing.T) {
	t.Parallel()
	text := "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:19700101\nRRULE:FREQ=DAILY\nEND:VEVENT\nEND:VCALENDAR\n"
	_, err := ics.Dates(t.Context(), text, ics.Options{Now: now, Years: 50})
	if err == nil || !strings.Contains(err.Error(), "more than 20000 dates") {
		t.Errorf("error %v, want one about more than 20000 dates", err)
	}
}

// FuzzDates checks that no text makes Dates panic, and that what it
// accepts yields dates in order, each once.
func FuzzDates(f *testing.F) {
	for _, name := range []string{"google-holidays.ics", "thunderbird-holidays.ics", "malformed.ics"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;X=\"a\"b:20260101\nEND:VEVENT\nEND:VCALENDAR\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ics.Dates(t.Context(), text, ics.Options{Now: now, Years: 1})
		if err != nil {
			var ie *ics.Error
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *ics.Error", err)
			}
			return
		}
		for i := 1; i < len(r.Dates); i++ {
			if a, b := r.Dates[i-1].String(), r.Dates[i].String(); a >= b {
				t.Fatalf("dates out of order: %s then %s", a, b)
			}
		}
	})
}

func TestDatesContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := ics.Dates(ctx, read(t, "thunderbird-holidays.ics"), ics.Options{Now: now, Years: 2})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestDatesLongFoldedLines reads a file whose lines are folded tens of
// thousands of times: it is read whole (unfolding is linear, see
// BenchmarkDatesFolded), and an error quoting such a line stays short.
func TestDatesLongFoldedLines(t *testing.T) {
	t.Parallel()
	const folds = 170_000
	ok := foldedEvent("DTSTART;VALUE=DATE:20260101\r\nDESCRIPTION:x", folds)
	r, err := ics.Dates(t.Context(), ok, ics.Options{Now: now, Years: 1})
	if err != nil || len(r.Dates) != 1 || r.Dates[0].String() != "2026-01-01" {
		t.Fatalf("Dates = %v, %v; want 2026-01-01", r, err)
	}
	bad := foldedEvent("DTSTART;VALUE=DATE:2026", folds)
	_, err = ics.Dates(t.Context(), bad, ics.Options{Now: now, Years: 1})
	var ie *ics.Error
	if !errors.As(err, &ie) || ie.Line != 3 || ie.Property != "DTSTART" {
		t.Fatalf("error %v, want an *ics.Error on line 3, DTSTART", err)
	}
	if msg := err.Error(); len(msg) > 300 || !strings.HasSuffix(msg, "…") {
		t.Errorf("error is %d bytes long (%.80q…); want at most 300, clipped with …", len(msg), msg)
	}
}

// foldedEvent is a calendar with one event holding prop, whose last line
// is continued folds times.
func foldedEvent(prop string, folds int) string {
	var b strings.Builder
	b.WriteString("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\n" + prop)
	for range folds {
		b.WriteString("\r\n x")
	}
	b.WriteString("\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
	return b.String()
}

// BenchmarkDatesFolded reads files with ever more folded lines: the time
// per fold stays flat when unfolding is linear.
func BenchmarkDatesFolded(b *testing.B) {
	for _, folds := range []int{10_000, 100_000} {
		text := foldedEvent("DTSTART;VALUE=DATE:20260101\r\nDESCRIPTION:x", folds)
		b.Run(fmt.Sprintf("folds=%d", folds), func(b *testing.B) {
			for b.Loop() {
				if _, err := ics.Dates(b.Context(), text, ics.Options{Now: now, Years: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*folds), "ns/fold")
		})
	}
}
