package httpapi

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// TestBadInputNamesTheField sends wrong input to each route that takes
// input: each is refused with 400 naming the field, and nothing reaches
// the service.
func TestBadInputNamesTheField(t *testing.T) {
	t.Parallel()
	const (
		op    = "operator-token"
		admin = "admin-token"
	)
	tests := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		header []string
		field  string
	}{
		{"job unknown field", "POST", "/api/v1/jobs", op, `{"group":"g","name":"x","colour":"red"}`, nil, "colour"},
		{"job wrong type", "POST", "/api/v1/jobs", op, `{"group":"g","name":5}`, nil, "name"},
		{"job nested wrong type", "PUT", "/api/v1/jobs/g/n", op, `{"retry":{"max_attempts":"three"}}`, nil, "retry.max_attempts"},
		{"job group differs from path", "PUT", "/api/v1/jobs/g/n", op, `{"group":"other"}`, nil, "group"},
		{"job name differs from path", "PUT", "/api/v1/jobs/g/n", op, `{"name":"other"}`, nil, "name"},
		{"If-Match unquoted", "PUT", "/api/v1/jobs/g/n", op, `{}`, []string{"If-Match", "3"}, "If-Match"},
		{"If-Match weak", "PUT", "/api/v1/jobs/g/n", op, `{}`, []string{"If-Match", `W/"3"`}, "If-Match"},
		{"If-Match star", "PUT", "/api/v1/jobs/g/n", op, `{}`, []string{"If-Match", "*"}, "If-Match"},
		{"If-Match zero", "PUT", "/api/v1/jobs/g/n", op, `{}`, []string{"If-Match", `"0"`}, "If-Match"},
		{"If-Match not a number", "PUT", "/api/v1/jobs/g/n", op, `{}`, []string{"If-Match", `"abc"`}, "If-Match"},
		{"If-Match list", "PUT", "/api/v1/jobs/g/n", op, `{}`, []string{"If-Match", `"3", "4"`}, "If-Match"},
		{"If-Match twice", "PUT", "/api/v1/jobs/g/n", op, `{}`, []string{"If-Match", `"3"`, "If-Match", `"4"`}, "If-Match"},
		{"run params not an object", "POST", "/api/v1/jobs/g/n/run", op, `{"params":1}`, nil, "params"},
		{"backfill without from", "POST", "/api/v1/jobs/g/n/backfill", op, `{"to":"2025-01-02T00:00:00Z"}`, nil, "from"},
		{"backfill without to", "POST", "/api/v1/jobs/g/n/backfill", op, `{"from":"2025-01-01T00:00:00Z"}`, nil, "to"},
		{"backfill to before from", "POST", "/api/v1/jobs/g/n/backfill", op, `{"from":"2025-01-02T00:00:00Z","to":"2025-01-01T00:00:00Z"}`, nil, "to"},
		{"backfill unknown field", "POST", "/api/v1/jobs/g/n/backfill", op, `{"from":"2025-01-01T00:00:00Z","to":"2025-01-02T00:00:00Z","until":1}`, nil, "until"},
		{"limit zero", "GET", "/api/v1/jobs?limit=0", op, "", nil, "limit"},
		{"limit too large", "GET", "/api/v1/jobs?limit=501", op, "", nil, "limit"},
		{"limit not a number", "GET", "/api/v1/jobs?limit=ten", op, "", nil, "limit"},
		{"limit twice", "GET", "/api/v1/jobs?limit=1&limit=2", op, "", nil, "limit"},
		{"state unknown", "GET", "/api/v1/jobs?state=sleeping", op, "", nil, "state"},
		{"failing not a bool", "GET", "/api/v1/jobs?failing=maybe", op, "", nil, "failing"},
		{"unknown query parameter", "GET", "/api/v1/jobs?colour=red", op, "", nil, "colour"},
		{"parameter on a route without any", "GET", "/api/v1/nodes?verbose=1", op, "", nil, "verbose"},
		{"job without slash", "GET", "/api/v1/executions?job=nightly", op, "", nil, "job"},
		{"job without group", "GET", "/api/v1/executions?job=/nightly", op, "", nil, "job"},
		{"job without name", "GET", "/api/v1/executions?job=g/", op, "", nil, "job"},
		{"job with two slashes", "GET", "/api/v1/executions?job=a/b/c", op, "", nil, "job"},
		{"outcome unknown", "GET", "/api/v1/executions?outcome=failed&outcome=exploded", op, "", nil, "outcome"},
		{"from not a time", "GET", "/api/v1/executions?from=yesterday", op, "", nil, "from"},
		{"to with an unescaped plus", "GET", "/api/v1/executions?to=2025-01-01T00:00:00+02:00", op, "", nil, "to"},
		{"to before from", "GET", "/api/v1/executions?from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z", op, "", nil, "to"},
		{"audit limit negative", "GET", "/api/v1/audit?limit=-1", admin, "", nil, "limit"},
		{"explain without at", "GET", "/api/v1/jobs/g/n/explain", op, "", nil, "at"},
		{"explain at not a time", "GET", "/api/v1/jobs/g/n/explain?at=tomorrow", op, "", nil, "at"},
		{"explain at year 0", "GET", "/api/v1/jobs/g/n/explain?at=0000-01-01T00:00:00Z", op, "", nil, "at"},
		{"explain at year 9999", "GET", "/api/v1/jobs/g/n/explain?at=9999-12-31T23:59:59Z", op, "", nil, "at"},
		{"explain at 2200", "GET", "/api/v1/jobs/g/n/explain?at=2200-01-01T00:00:00Z", op, "", nil, "at"},
		{"executions from before 1970", "GET", "/api/v1/executions?from=1969-12-31T23:59:59Z", op, "", nil, "from"},
		{"query with a NUL", "GET", "/api/v1/executions?job=g/n%00", op, "", nil, "job"},
		{"query not UTF-8", "GET", "/api/v1/executions?job=g/n%ff", op, "", nil, "job"},
		{"path with a NUL", "GET", "/api/v1/jobs/g/n%00", op, "", nil, ""},
		{"path not UTF-8", "DELETE", "/api/v1/jobs/g%ff/n", op, "", nil, ""},
		{"body with a NUL", "PUT", "/api/v1/calendars/holidays", op, `{"name":"holidays","description":"a\u0000b","calendar":{}}`, nil, ""},
		{"body not UTF-8", "PUT", "/api/v1/calendars/holidays", op, "{\"name\":\"holi\xffdays\",\"calendar\":{}}", nil, ""},
		{"upcoming count zero", "GET", "/api/v1/jobs/g/n/upcoming?count=0", op, "", nil, "count"},
		{"upcoming count too large", "GET", "/api/v1/jobs/g/n/upcoming?count=1001", op, "", nil, "count"},
		{"cron without expression", "GET", "/api/v1/cron/explain?time_zone=UTC", op, "", nil, "expression"},
		{"calendar name differs from path", "PUT", "/api/v1/calendars/holidays", op, `{"name":"other","calendar":{}}`, nil, "name"},
		{"calendar unknown field", "PUT", "/api/v1/calendars/holidays", op, `{"calender":{}}`, nil, "calender"},
		{"alert settings wrong type", "PUT", "/api/v1/alerts", admin, `{"default_emails":"ops@example.com"}`, nil, "default_emails"},
		{"user name differs from path", "PUT", "/api/v1/users/vera", admin, `{"name":"ada"}`, nil, "name"},
		{"user unknown field", "POST", "/api/v1/users", admin, `{"name":"u","admin":true}`, nil, "admin"},
		{"token wrong type", "POST", "/api/v1/tokens", admin, `{"name":"ci","expires":5}`, nil, "expires"},
		{"login without username", "POST", "/api/v1/auth/login", "", `{"password":"pw"}`, nil, "username"},
		{"login without password", "POST", "/api/v1/auth/login", "", `{"username":"vera"}`, nil, "password"},
		{"login unknown field", "POST", "/api/v1/auth/login", "", `{"username":"vera","password":"pw","remember":true}`, nil, "remember"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			resp, raw := f.do(t, tt.method, tt.path, tt.token, tt.body, tt.header...)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", resp.StatusCode, raw)
			}
			e := decodeError(t, resp, raw)
			if e.Code != api.CodeInvalidArgument || e.Field != tt.field {
				t.Errorf("error = %+v, want invalid_argument naming %q", e, tt.field)
			}
			if calls := f.calls(); len(calls) != 0 {
				t.Errorf("a refused request reached %+v", calls)
			}
		})
	}
}

// TestPlusHint checks that an unescaped + in a time offset, which arrives
// as a space, is explained.
func TestPlusHint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	resp, raw := f.do(t, "GET", "/api/v1/executions?from=2025-01-01T00:00:00+02:00", "viewer-token", "")
	if e := decodeError(t, resp, raw); !strings.Contains(e.Message, "%2B") {
		t.Errorf("message %q does not explain the +", e.Message)
	}
}

// TestMalformedBodies covers bodies that are wrong as a whole, where no
// single field is to blame.
func TestMalformedBodies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, contentType string
	}{
		{"not JSON", `{"group":`, "application/json"},
		{"two values", `{} {}`, "application/json"},
		{"empty", ``, "application/json"},
		{"text content type", `{"group":"g","name":"x"}`, "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			resp, raw := f.do(t, "POST", "/api/v1/jobs", "operator-token", "", "Content-Type", tt.contentType)
			if tt.body != "" {
				resp, raw = f.do(t, "POST", "/api/v1/jobs", "operator-token", tt.body, "Content-Type", tt.contentType)
			}
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status = %d, want 400; body %s", resp.StatusCode, raw)
			}
			if e := decodeError(t, resp, raw); e.Code != api.CodeInvalidArgument {
				t.Errorf("code = %s, want invalid_argument", e.Code)
			}
			if calls := f.calls(); len(calls) != 0 {
				t.Errorf("a refused request reached %+v", calls)
			}
		})
	}
}

// TestBodyLimit refuses bodies over the limit with 413, on an
// authenticated route and on the public login, and changes nothing.
func TestBodyLimit(t *testing.T) {
	t.Parallel()
	big := `{"group":"g","name":"n","description":"` + strings.Repeat("x", 300) + `"}`
	tests := []struct {
		name, method, path, token string
	}{
		{"create job", "POST", "/api/v1/jobs", "operator-token"},
		{"put job", "PUT", "/api/v1/jobs/g/n", "operator-token"},
		{"login", "POST", "/api/v1/auth/login", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixtureWith(t, newRecordingService(seededJob()), &Options{MaxBodyBytes: 256}, false)
			resp, raw := f.do(t, tt.method, tt.path, tt.token, big)
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status = %d, want 413; body %s", resp.StatusCode, raw)
			}
			if e := decodeError(t, resp, raw); e.Code != api.CodeTooLarge {
				t.Errorf("code = %s, want %s", e.Code, api.CodeTooLarge)
			}
			if calls := f.calls(); len(calls) != 0 {
				t.Errorf("a refused request reached %+v", calls)
			}
		})
	}
	t.Run("default limit", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		over := `{"description":"` + strings.Repeat("x", 1<<20) + `"}`
		resp, raw := f.do(t, "PUT", "/api/v1/jobs/g/n", "operator-token", over)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status = %d, want 413; body %.200s", resp.StatusCode, raw)
		}
		under := `{"description":"` + strings.Repeat("x", 1<<19) + `"}`
		if resp, raw := f.do(t, "PUT", "/api/v1/jobs/g/n", "operator-token", under); resp.StatusCode != http.StatusOK {
			t.Fatalf("status = %d for a body under the limit; body %.200s", resp.StatusCode, raw)
		}
	})
}

// TestQueryReachesService checks that query strings are parsed into the
// api query types and arguments exactly.
func TestQueryReachesService(t *testing.T) {
	t.Parallel()
	from := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	to := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.FixedZone("", 2*3600))
	at := time.Date(2025, 3, 30, 2, 30, 0, 0, time.UTC)
	tests := []struct {
		name  string
		path  string
		token string
		want  recordedCall
	}{
		{"jobs, all parameters", "/api/v1/jobs?group=etl&q=Night&state=paused&failing=true&cursor=c1&limit=20", "viewer-token",
			recordedCall{Method: "ListJobs", Args: []any{api.JobQuery{Group: "etl", Text: "Night", State: "paused", Failing: true, Cursor: "c1", Limit: 20}}}},
		{"jobs, none", "/api/v1/jobs", "viewer-token",
			recordedCall{Method: "ListJobs", Args: []any{api.JobQuery{}}}},
		{"executions, all parameters", "/api/v1/executions?job=etl/nightly&outcome=failed&outcome=timed_out&from=2025-01-01T00:00:00Z&to=2025-01-02T03:04:05.6%2B02:00&node=a&cursor=c2&limit=5", "viewer-token",
			recordedCall{Method: "ListExecutions", Args: []any{api.ExecutionQuery{
				JobGroup: "etl", JobName: "nightly", Outcomes: []string{"failed", "timed_out"},
				From: &from, To: &to, NodeID: "a", Cursor: "c2", Limit: 5,
			}}}},
		{"executions, none", "/api/v1/executions", "viewer-token",
			recordedCall{Method: "ListExecutions", Args: []any{api.ExecutionQuery{}}}},
		{"audit", "/api/v1/audit?actor=ada&target=job%3Aetl%2Fnightly&limit=500", "admin-token",
			recordedCall{Method: "ListAudit", Args: []any{api.AuditQuery{Actor: "ada", Target: "job:etl/nightly", Limit: 500}}}},
		{"upcoming, default count", "/api/v1/jobs/etl/nightly/upcoming", "viewer-token",
			recordedCall{Method: "UpcomingFireTimes", Args: []any{"etl", "nightly", 10}}},
		{"upcoming, count", "/api/v1/jobs/etl/nightly/upcoming?count=3", "viewer-token",
			recordedCall{Method: "UpcomingFireTimes", Args: []any{"etl", "nightly", 3}}},
		{"explain", "/api/v1/jobs/etl/nightly/explain?at=2025-03-30T02:30:00Z", "viewer-token",
			recordedCall{Method: "Explain", Args: []any{"etl", "nightly", at}}},
		{"cron explain", "/api/v1/cron/explain?expression=0+30+2+%3F+*+MON-FRI&time_zone=Europe%2FBerlin&count=4", "viewer-token",
			recordedCall{Method: "ExplainCron", Args: []any{"0 30 2 ? * MON-FRI", "Europe/Berlin", 4}}},
		{"escaped path segments", "/api/v1/jobs/my%20group/a%2Fb", "viewer-token",
			recordedCall{Method: "GetJob", Args: []any{"my group", "a/b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			resp, raw := f.do(t, "GET", tt.path, tt.token, "")
			if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
				t.Fatalf("status = %d; body %s", resp.StatusCode, raw)
			}
			calls := f.svc.Calls()
			if len(calls) != 1 || !reflect.DeepEqual(calls[0], tt.want) {
				t.Errorf("calls = %+v\nwant [%+v]", calls, tt.want)
			}
		})
	}
}

// TestRequestBodiesReachService checks that bodies, path keys and the
// actor reach the service as sent.
func TestRequestBodiesReachService(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		path   string
		token  string
		body   string
		want   recordedCall
	}{
		{"put job takes its key from the path", "PUT", "/api/v1/jobs/etl/nightly", "operator-token", `{"type":"http","http":{"url":"https://example.com"},"timeout":"30s"}`,
			recordedCall{Method: "PutJob", Actor: "otto", Args: []any{
				api.Job{Group: "etl", Name: "nightly", Type: "http", HTTP: []byte(`{"url":"https://example.com"}`), Timeout: "30s"}, int64(0),
			}}},
		{"run without a body", "POST", "/api/v1/jobs/etl/nightly/run", "operator-token", "",
			recordedCall{Method: "RunJob", Actor: "otto", Args: []any{"etl", "nightly", api.RunRequest{}}}},
		{"run with params", "POST", "/api/v1/jobs/etl/nightly/run", "operator-token", `{"params":{"day":"2025-01-01"}}`,
			recordedCall{Method: "RunJob", Actor: "otto", Args: []any{"etl", "nightly", api.RunRequest{Params: map[string]any{"day": "2025-01-01"}}}}},
		{"put calendar takes its name from the path", "PUT", "/api/v1/calendars/holidays", "operator-token", `{"calendar":{"kind":"annual"},"used_by":["x.y"]}`,
			recordedCall{Method: "PutCalendar", Actor: "otto", Args: []any{api.Calendar{Name: "holidays", Calendar: []byte(`{"kind":"annual"}`)}}}},
		{"update user takes the name from the path", "PUT", "/api/v1/users/vera", "admin-token", `{"role":"operator","password":"new-pw"}`,
			recordedCall{Method: "UpdateUser", Actor: "ada", Args: []any{api.User{Name: "vera", Role: api.RoleOperator, Password: "new-pw"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			resp, raw := f.do(t, tt.method, tt.path, tt.token, tt.body)
			if resp.StatusCode/100 != 2 {
				t.Fatalf("status = %d; body %s", resp.StatusCode, raw)
			}
			calls := f.calls()
			if len(calls) != 1 || !reflect.DeepEqual(calls[0], tt.want) {
				t.Errorf("calls = %#v\nwant [%#v]", calls, tt.want)
			}
		})
	}
}
