package httpapi

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// The stand-in's answers for the dashboard routes and the import.

func (s *recordingService) Activity(_ context.Context, q api.ActivityQuery) (*api.Activity, error) {
	s.call("Activity", "", q)
	return &api.Activity{BucketSeconds: 60}, nil
}

func (s *recordingService) Upcoming(_ context.Context, group string, count int) ([]api.UpcomingFiring, error) {
	s.call("Upcoming", "", group, count)
	return nil, nil
}

// ImportCalendar creates every calendar but "existing", which it
// replaces.
func (s *recordingService) ImportCalendar(_ context.Context, actor, name string, req api.CalendarImport) (*api.CalendarImportResult, error) {
	s.call("ImportCalendar", actor, name, req)
	return &api.CalendarImportResult{Calendar: api.Calendar{Name: name}, Created: name != "existing", DryRun: req.DryRun}, nil
}

// TestDashboardBadInput refuses wrong query parameters and bodies of the
// dashboard routes and the import with 400 naming the field, before the
// service.
func TestDashboardBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, method, path, body, field string
	}{
		{"activity since not a time", "GET", "/api/v1/activity?since=yesterday", "", "since"},
		{"activity until not a time", "GET", "/api/v1/activity?until=now", "", "until"},
		{"activity until before since", "GET", "/api/v1/activity?since=2025-01-02T00:00:00Z&until=2025-01-01T00:00:00Z", "", "until"},
		{"activity bucket twice", "GET", "/api/v1/activity?bucket=60s&bucket=5m", "", "bucket"},
		{"activity unknown parameter", "GET", "/api/v1/activity?from=2025-01-01T00:00:00Z", "", "from"},
		{"upcoming count zero", "GET", "/api/v1/upcoming?count=0", "", "count"},
		{"upcoming count too large", "GET", "/api/v1/upcoming?count=201", "", "count"},
		{"upcoming count not a number", "GET", "/api/v1/upcoming?count=all", "", "count"},
		{"upcoming unknown parameter", "GET", "/api/v1/upcoming?job=g/n", "", "job"},
		{"import unknown field", "POST", "/api/v1/calendars/holidays/import", `{"ics":"x","file":"a.ics"}`, "file"},
		{"import ics not a string", "POST", "/api/v1/calendars/holidays/import", `{"ics":["BEGIN:VCALENDAR"]}`, "ics"},
		{"import years not a number", "POST", "/api/v1/calendars/holidays/import", `{"ics":"x","years":"five"}`, "years"},
		{"import dry_run not a bool", "POST", "/api/v1/calendars/holidays/import", `{"ics":"x","dry_run":"yes"}`, "dry_run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			resp, raw := f.do(t, tt.method, tt.path, "operator-token", tt.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", resp.StatusCode, raw)
			}
			if e := decodeError(t, resp, raw); e.Code != api.CodeInvalidArgument || e.Field != tt.field {
				t.Errorf("error = %+v, want invalid_argument naming %q", e, tt.field)
			}
			if calls := f.calls(); len(calls) != 0 {
				t.Errorf("a refused request reached %+v", calls)
			}
		})
	}
}

// TestDashboardReachesService checks what the routes hand the service,
// and the import's statuses.
func TestDashboardReachesService(t *testing.T) {
	t.Parallel()
	since := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	until := time.Date(2025, 1, 1, 6, 0, 0, 0, time.FixedZone("", 3600))
	tests := []struct {
		name, method, path, token, body string
		status                          int
		want                            recordedCall
	}{
		{"activity, none", "GET", "/api/v1/activity", "viewer-token", "", http.StatusOK,
			recordedCall{Method: "Activity", Args: []any{api.ActivityQuery{}}}},
		{"activity, all", "GET", "/api/v1/activity?since=2025-01-01T00:00:00Z&until=2025-01-01T06:00:00%2B01:00&bucket=5m", "viewer-token", "", http.StatusOK,
			recordedCall{Method: "Activity", Args: []any{api.ActivityQuery{Since: &since, Until: &until, Bucket: "5m"}}}},
		{"upcoming, defaults", "GET", "/api/v1/upcoming", "viewer-token", "", http.StatusOK,
			recordedCall{Method: "Upcoming", Args: []any{"", 20}}},
		{"upcoming, all", "GET", "/api/v1/upcoming?count=200&group=etl", "viewer-token", "", http.StatusOK,
			recordedCall{Method: "Upcoming", Args: []any{"etl", 200}}},
		{"import creates", "POST", "/api/v1/calendars/holidays/import", "operator-token",
			`{"ics":"BEGIN:VCALENDAR","description":"Holidays","time_zone":"Europe/Berlin","years":3}`, http.StatusCreated,
			recordedCall{Method: "ImportCalendar", Actor: "otto", Args: []any{"holidays", api.CalendarImport{
				ICS: "BEGIN:VCALENDAR", Description: "Holidays", TimeZone: "Europe/Berlin", Years: 3,
			}}}},
		{"import replaces", "POST", "/api/v1/calendars/existing/import", "operator-token", `{"ics":"x"}`, http.StatusOK,
			recordedCall{Method: "ImportCalendar", Actor: "otto", Args: []any{"existing", api.CalendarImport{ICS: "x"}}}},
		{"import dry run", "POST", "/api/v1/calendars/holidays/import", "operator-token", `{"ics":"x","dry_run":true}`, http.StatusOK,
			recordedCall{Method: "ImportCalendar", Actor: "otto", Args: []any{"holidays", api.CalendarImport{ICS: "x", DryRun: true}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			resp, raw := f.do(t, tt.method, tt.path, tt.token, tt.body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.status, raw)
			}
			if calls := f.calls(); len(calls) != 1 || !reflect.DeepEqual(calls[0], tt.want) {
				t.Errorf("calls = %#v\nwant [%#v]", calls, tt.want)
			}
		})
	}
}

// TestDashboardEmptyLists checks that empty lists are JSON arrays, which
// a chart can use without a check.
func TestDashboardEmptyLists(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for path, want := range map[string]string{
		"/api/v1/upcoming": "[]\n",
		"/api/v1/activity": `{"from":"0001-01-01T00:00:00Z","to":"0001-01-01T00:00:00Z","bucket_seconds":60,"buckets":[],` +
			`"lag_p50_ms":0,"lag_p95_ms":0,"lag_p99_ms":0,"lag_sampled":0,"running":0}` + "\n",
	} {
		resp, raw := f.do(t, "GET", path, "viewer-token", "")
		if resp.StatusCode != http.StatusOK || string(raw) != want {
			t.Errorf("GET %s: %d %s, want 200 %s", path, resp.StatusCode, raw, want)
		}
	}
}
