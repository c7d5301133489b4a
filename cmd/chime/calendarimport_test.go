package main

import (
	"os"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/server/servertest"
)

// TestCalendarsImport imports a holidays file through the CLI: a dry run
// that stores nothing, the import, a malformed file refused with its line.
func TestCalendarsImport(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, nil)
	token := cliLogin(t, srv.URL, srv.AdminPassword)
	flags := []string{"--server", srv.URL, "--token", token}
	ics, err := os.ReadFile("../../server/internal/ics/testdata/google-holidays.ics")
	if err != nil {
		t.Fatal(err)
	}
	file := writeFile(t, "holidays.ics", string(ics))
	dates := trimLines("2026-04-06", "2026-05-25", "2026-10-03", "2026-12-25", "2026-12-26", "2026-12-31")

	out, _, err := execChime(t, "", append([]string{"calendars", "import", "de", file, "--dry-run"}, flags...)...)
	if want := "Calendar de would be created (dry run, nothing stored): 6 dates from 5 events.\n" + dates; err != nil || out != want {
		t.Errorf("dry run: %v\n%s\nwant\n%s", err, out, want)
	}
	if _, err := srv.Client.GetCalendar(t.Context(), "de"); err == nil {
		t.Errorf("the dry run stored calendar de")
	}

	// From standard input, with a description.
	out, _, err = execChime(t, string(ics), append([]string{"calendars", "import", "de", "-", "--description", "Feiertage"}, flags...)...)
	if want := "Calendar de created: 6 dates from 5 events.\n" + dates; err != nil || out != want {
		t.Errorf("import: %v\n%s\nwant\n%s", err, out, want)
	}
	cal, err := srv.Client.GetCalendar(t.Context(), "de")
	if err != nil || !strings.Contains(string(cal.Calendar), `"description":"Feiertage","excluded_dates":["2026-04-06",`) {
		t.Errorf("stored calendar: %v, %v", cal, err)
	}
	// In UTC the ceremony, 23:00 to 01:00 UTC, covers two dates.
	out, _, err = execChime(t, "", append([]string{"calendars", "import", "de", file, "--time-zone", "UTC"}, flags...)...)
	if err != nil || !strings.HasPrefix(out, "Calendar de replaced: 7 dates from 5 events.\n") || !strings.Contains(out, "2026-10-02\n2026-10-03\n") {
		t.Errorf("second import: %v\n%s", err, out)
	}

	bad := writeFile(t, "bad.ics", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE20261225\nEND:VEVENT\nEND:VCALENDAR\n")
	_, _, err = execChime(t, "", append([]string{"calendars", "import", "broken", bad}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "line 3: DTSTART: no ':' after the parameters") {
		t.Errorf("malformed file: %v, want the line and property named", err)
	}
	_, _, err = execChime(t, "", append([]string{"calendars", "import", "broken", "/nonexistent.ics"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "reading the iCalendar file") {
		t.Errorf("missing file: %v", err)
	}
}
