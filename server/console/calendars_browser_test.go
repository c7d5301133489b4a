package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/browsertest"
	"github.com/chime-scheduler/chime/server/servertest"
)

// holidaysICS is a small holidays file: a yearly event and a two-day one.
const holidaysICS = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//chime//test//EN\r\nX-WR-CALNAME:Test holidays\r\n" +
	"BEGIN:VEVENT\r\nUID:newyear@test\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260101\r\nRRULE:FREQ=YEARLY;COUNT=3\r\nSUMMARY:New Year\r\nEND:VEVENT\r\n" +
	"BEGIN:VEVENT\r\nUID:xmas@test\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20261225\r\nDTEND;VALUE=DATE:20261227\r\nSUMMARY:Christmas\r\nEND:VEVENT\r\n" +
	"END:VCALENDAR\r\n"

// excludedDates reads a holiday calendar's dates through the API.
func excludedDates(t *testing.T, srv *servertest.Server, name string) []string {
	t.Helper()
	cal, err := srv.Client.GetCalendar(context.Background(), name)
	if err != nil {
		t.Fatalf("reading calendar %s: %v", name, err)
	}
	var def struct {
		Type          string   `json:"type"`
		ExcludedDates []string `json:"excluded_dates"`
	}
	if err := json.Unmarshal(cal.Calendar, &def); err != nil {
		t.Fatal(err)
	}
	return def.ExcludedDates
}

// setText sets the value of the textarea (or input) matching sel as if
// typed: an input event follows. (browsertest's Fill cannot clear a
// textarea whose value was set from script.)
func setText(p *browsertest.Page, sel, v string) {
	p.Do("filling "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); })()`, sel, v)))
}

// TestCalendarsCreateEditImportDelete creates a holiday calendar in the
// console, edits its dates, imports another from an .ics file after a
// preview, sees the API refuse to delete a calendar in use, deletes an
// unused one, and checks that a viewer gets no button.
func TestCalendarsCreateEditImportDelete(t *testing.T) {
	srv := servertest.Start(t, nil)
	ctx := context.Background()
	if _, err := srv.Client.PutCalendar(ctx, api.Calendar{Name: "holidays",
		Calendar: json.RawMessage(`{"type":"holiday","time_zone":"UTC","description":"Company holidays","excluded_dates":["2026-12-25","2027-01-01"],"base":null}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.PutCalendar(ctx, api.Calendar{Name: "weekends",
		Calendar: json.RawMessage(`{"type":"weekly","time_zone":"Europe/Berlin","excluded_days_of_week":[1,7],"base":null}`)}); err != nil {
		t.Fatal(err)
	}
	job := cronJob(t, "etl", "nightly", "http://127.0.0.1:9/", "0 0 2 * * ?")
	job.Triggers[0].Calendar = "holidays"
	if _, err := srv.Client.CreateJob(ctx, job); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Client.CreateUser(ctx, api.User{Name: "vera", Role: api.RoleViewer, Password: "viewer-password-1"}); err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t)
	p := b.NewPage(t)
	p.Login(srv.URL, "/calendars", servertest.AdminName, srv.AdminPassword)
	row := p.WaitText(`tr[data-calendar="holidays"]`, "etl/nightly")
	for _, want := range []string{"holiday", "Company holidays", "2 dates"} {
		if !strings.Contains(row, want) {
			t.Errorf("the holidays row %q lacks %q", row, want)
		}
	}
	p.WaitText(`tr[data-calendar="weekends"]`, "every Sun, Sat")
	if n := p.Count(`tr[data-calendar="holidays"] a[href="#/jobs/etl/nightly"]`); n != 1 {
		t.Errorf("the holidays row links its job %d times, want 1", n)
	}

	// Create a holiday calendar with two dates.
	p.ClickText("button", "New calendar")
	p.Fill(`dialog input[name="name"]`, "office-closed")
	setText(p, `dialog textarea[name="calendar.excluded_dates"]`, "2026-12-24, 2026-12-31")
	p.Fill(`dialog input[name="calendar.description"]`, "Office closed")
	p.ClickText("dialog button", "Create")
	p.WaitText("main h1", "office-closed")
	p.WaitText(`[data-testid="dates"]`, "2026-12-31")
	if got := excludedDates(t, srv, "office-closed"); !slices.Equal(got, []string{"2026-12-24", "2026-12-31"}) {
		t.Errorf("created with dates %v", got)
	}

	// A bad pasted date is refused next to the field; good ones are added,
	// one is removed, and Save stores the result.
	setText(p, `textarea[name="paste"]`, "2027-01-01 2026-13-01")
	p.ClickText("button", "Add these")
	p.WaitText(`.field[data-field="paste"] .error`, "2026-13-01")
	setText(p, `textarea[name="paste"]`, "2027-01-01, 2027-01-02")
	p.ClickText("button", "Add these")
	p.WaitText(`[data-testid="dates"]`, "2027-01-02")
	setText(p, `input[name="add"]`, "2027-03-01")
	p.ClickText("button", "Add")
	p.WaitText(`[data-testid="dates"]`, "2027-03-01")
	p.Click(`button[aria-label="Remove 2026-12-24"]`)
	p.Click(`button[aria-label="Remove 2027-03-01"]`)
	p.ClickText("button", "Save changes")
	p.WaitText("#toasts", "saved")
	if got := excludedDates(t, srv, "office-closed"); !slices.Equal(got, []string{"2026-12-31", "2027-01-01", "2027-01-02"}) {
		t.Errorf("saved dates %v", got)
	}
	p.WaitText("main", "unused") // (the "Used by" panel)
	p.Do("scrolling to the top", chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	p.Screenshot("calendar-detail")

	// The list shows it; deleting a calendar in use is refused with the API's reason.
	p.Route("/calendars")
	p.WaitText(`tr[data-calendar="office-closed"]`, "3 dates")
	p.Screenshot("calendars")
	p.Click(`button[aria-label="Delete calendar holidays"]`)
	p.ClickText("dialog button", "Delete")
	p.WaitText(".toast.error", "used by")
	if _, err := srv.Client.GetCalendar(ctx, "holidays"); err != nil {
		t.Errorf("the calendar in use was deleted: %v", err)
	}
	p.Click(`button[aria-label="Delete calendar office-closed"]`)
	p.ClickText("dialog button", "Delete")
	poll(p, "the deleted calendar's row to go", `!document.querySelector('tr[data-calendar="office-closed"]') && !!document.querySelector('tr[data-calendar="holidays"]')`)
	if _, err := srv.Client.GetCalendar(ctx, "office-closed"); err == nil {
		t.Error("office-closed still exists after its deletion")
	}

	// Import an .ics file: the preview shows its dates, nothing is stored
	// until Import.
	ics := filepath.Join(t.TempDir(), "holidays.ics")
	if err := os.WriteFile(ics, []byte(holidaysICS), 0o644); err != nil {
		t.Fatal(err)
	}
	p.ClickText("button", "Import .ics")
	p.Fill(`dialog input[name="name"]`, "de-holidays")
	p.Fill(`dialog input[name="time_zone"]`, "Europe/Berlin")
	p.Do("choosing the .ics file", chromedp.SetUploadFiles(chromedp.CSS(`dialog input[type="file"]`), []string{ics}))
	summary := p.WaitText(`[data-testid="import-summary"]`, "2 events")
	if !strings.Contains(summary, "5 dates") || !strings.Contains(summary, "Europe/Berlin") {
		t.Errorf("import preview says %q, want 2 events, 5 dates in Europe/Berlin", summary)
	}
	p.WaitText(`[data-testid="import-preview"]`, "2026-12-26")
	p.Screenshot("calendar-import-preview")
	if _, err := srv.Client.GetCalendar(ctx, "de-holidays"); err == nil {
		t.Error("the preview stored the calendar")
	}
	p.ClickText("dialog button", "Import")
	p.WaitText("main h1", "de-holidays")
	p.WaitText(`[data-testid="dates"]`, "2028-01-01")
	if got := excludedDates(t, srv, "de-holidays"); !slices.Equal(got, []string{"2026-01-01", "2026-12-25", "2026-12-26", "2027-01-01", "2028-01-01"}) {
		t.Errorf("imported dates %v", got)
	}

	// A bad file is refused next to the file input, naming the line.
	p.Route("/calendars")
	p.ClickText("button", "Import .ics")
	p.Fill(`dialog input[name="name"]`, "broken")
	bad := filepath.Join(t.TempDir(), "bad.ics")
	if err := os.WriteFile(bad, []byte("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nDTSTART;VALUE=DATE\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.Do("choosing a broken .ics file", chromedp.SetUploadFiles(chromedp.CSS(`dialog input[type="file"]`), []string{bad}))
	p.WaitText(`dialog .field[data-field="ics"] .error`, "line")
	p.ClickText("dialog button", "Cancel")

	// On a phone the pages fit the screen (tables scroll inside their box).
	p.SetViewport(390, 844, true)
	for _, rt := range []struct{ route, title string }{{"/calendars", "Calendars"}, {"/calendars/de-holidays", "de-holidays"}} {
		route := rt.route
		p.Route(route)
		p.WaitText("main h1", rt.title)
		if w := browsertest.Get(p, "measuring "+route, chromedp.Evaluate[int](`document.documentElement.scrollWidth`)); w > 390 {
			t.Errorf("%s is %d px wide on a 390 px phone", route, w)
		}
	}
	poll(p, "the toasts to go before the screenshot", `!document.querySelector('.toast')`)
	p.Screenshot("calendar-detail-phone")

	// A viewer sees the calendars and who uses them, and no button.
	v := b.NewPage(t)
	v.Login(srv.URL, "/calendars", "vera", "viewer-password-1")
	v.WaitText(`tr[data-calendar="holidays"]`, "etl/nightly")
	if n := v.Count("main button"); n != 0 {
		t.Errorf("a viewer sees %d buttons on the calendars page", n)
	}
	v.Route("/calendars/holidays")
	v.WaitText(`[data-testid="dates"]`, "2026-12-25")
	if n := v.Count("main button, main input, main textarea"); n != 0 {
		t.Errorf("a viewer sees %d buttons or inputs on a calendar page", n)
	}
	v.Route("/calendars/weekends")
	v.WaitText("main pre", "excluded_days_of_week")
	if n := v.Count("main button, main textarea"); n != 0 {
		t.Errorf("a viewer sees %d buttons or editors on a weekly calendar's page", n)
	}
}
