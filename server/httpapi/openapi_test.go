package httpapi

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// openAPI fetches and decodes the document the server serves.
func openAPI(t *testing.T, f *fixture) map[string]any {
	t.Helper()
	resp, raw := f.do(t, "GET", "/api/openapi.json", "", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d; body %.300s", resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return doc
}

// documentedRoutes lists the document's operations as ServeMux patterns.
func documentedRoutes(t *testing.T, doc map[string]any) []string {
	t.Helper()
	var out []string
	for path, item := range doc["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// sameSet reports the differences between two sets of patterns, in both
// directions.
func sameSet(t *testing.T, aName string, a []string, bName string, b []string) {
	t.Helper()
	for _, p := range a {
		if !slices.Contains(b, p) {
			t.Errorf("%s is in %s but not in %s", p, aName, bName)
		}
	}
	for _, p := range b {
		if !slices.Contains(a, p) {
			t.Errorf("%s is in %s but not in %s", p, bName, aName)
		}
	}
}

func TestOpenAPIDocumentIsOpenAPI30(t *testing.T) {
	t.Parallel()
	doc := openAPI(t, newFixture(t))
	if v, _ := doc["openapi"].(string); !regexp.MustCompile(`^3\.0\.\d+$`).MatchString(v) {
		t.Errorf("openapi = %q, want 3.0.x", v)
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == "" || info["version"] != "v1" {
		t.Errorf("info = %v", info)
	}

	// Every $ref points at something the document defines.
	components := doc["components"].(map[string]any)
	var refs []string
	walkJSON(doc, func(key string, v any) {
		if key == "$ref" {
			refs = append(refs, v.(string))
		}
	})
	if len(refs) == 0 {
		t.Fatal("no $ref in the document")
	}
	for _, ref := range refs {
		kind, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
		section, _ := components[kind].(map[string]any)
		if !ok || section[name] == nil {
			t.Errorf("$ref %q resolves to nothing", ref)
		}
	}

	ids := make(map[string]string)
	for path, item := range doc["paths"].(map[string]any) {
		for method, raw := range item.(map[string]any) {
			op := raw.(map[string]any)
			where := strings.ToUpper(method) + " " + path
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] != "" {
				t.Errorf("%s: operationId %q missing or also used by %s", where, id, ids[id])
			}
			ids[id] = where
			responses, _ := op["responses"].(map[string]any)
			if !slices.ContainsFunc(slices.Collect(maps.Keys(responses)), func(s string) bool { return s[0] == '2' }) {
				t.Errorf("%s: no success response in %v", where, slices.Collect(maps.Keys(responses)))
			}
			security, _ := op["security"].([]any)
			if role, _ := op["x-chime-role"].(string); role != "" {
				if len(security) == 0 || responses["401"] == nil || responses["403"] == nil {
					t.Errorf("%s: needs role %s but documents no security, 401 or 403", where, role)
				}
			} else if security == nil || len(security) != 0 {
				t.Errorf("%s: public, but its security is %v rather than []", where, op["security"])
			}
			// Every path wildcard is a documented path parameter.
			var declared []string
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				if p["in"] == "path" {
					if p["required"] != true {
						t.Errorf("%s: path parameter %v not required", where, p["name"])
					}
					declared = append(declared, p["name"].(string))
				}
			}
			if want := pathWildcards(path); !slices.Equal(declared, want) {
				t.Errorf("%s: path parameters %v, want %v", where, declared, want)
			}
		}
	}
}

// TestOpenAPISchemas spot-checks schemas generated from the api types.
func TestOpenAPISchemas(t *testing.T) {
	t.Parallel()
	doc := openAPI(t, newFixture(t))
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	get := func(path ...string) any {
		var v any = schemas
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[p]
		}
		return v
	}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"Job", "properties", "triggers", "items", "$ref"}, "#/components/schemas/Trigger"},
		{[]string{"Job", "properties", "version", "type"}, "integer"},
		{[]string{"Job", "properties", "overlap", "enum"}, []any{"allow", "skip", "queue", "cancel"}},
		{[]string{"Job", "properties", "data", "type"}, "object"},
		{[]string{"Trigger", "properties", "start_time", "format"}, "date-time"},
		{[]string{"JobAlerts", "properties", "pagerduty", "items", "$ref"}, "#/components/schemas/PagerDutyTarget"},
		{[]string{"JobAlerts", "properties", "after_failures", "type"}, "integer"},
		{[]string{"JobAlerts", "properties", "running_longer_than", "type"}, "string"},
		{[]string{"AlertSettings", "properties", "default_slack", "items", "type"}, "string"},
		{[]string{"User", "properties", "role", "enum"}, []any{"viewer", "operator", "admin"}},
		{[]string{"Error", "required"}, []any{"code", "message"}},
		{[]string{"ExecutionList", "properties", "executions", "items", "$ref"}, "#/components/schemas/Execution"},
		{[]string{"Trigger", "properties", "schedule", "$ref"}, "#/components/schemas/Schedule"},
		{[]string{"Schedule", "discriminator"}, map[string]any{"propertyName": "kind", "mapping": map[string]any{
			"calendar_interval":   "#/components/schemas/CalendarIntervalSchedule",
			"cron":                "#/components/schemas/CronSchedule",
			"daily_time_interval": "#/components/schemas/DailyTimeIntervalSchedule",
			"fixed_delay":         "#/components/schemas/FixedDelaySchedule",
			"once":                "#/components/schemas/OnceSchedule",
			"simple":              "#/components/schemas/SimpleSchedule",
		}}},
		{[]string{"SimpleSchedule", "required"}, []any{"kind", "interval"}},
		{[]string{"SimpleSchedule", "properties", "interval", "type"}, "string"},
		{[]string{"SimpleSchedule", "additionalProperties"}, false},
		{[]string{"CalendarIntervalSchedule", "properties", "unit", "enum"}, []any{"second", "minute", "hour", "day", "week", "month", "year"}},
		{[]string{"Calendar", "properties", "calendar", "$ref"}, "#/components/schemas/CalendarDefinition"},
		{[]string{"CalendarDefinition", "discriminator", "propertyName"}, "type"},
		{[]string{"WeeklyCalendar", "required"}, []any{"type", "time_zone"}},
		{[]string{"HolidayCalendar", "properties", "base", "allOf"}, []any{map[string]any{"$ref": "#/components/schemas/CalendarDefinition"}}},
	}
	for _, c := range checks {
		got, _ := json.Marshal(get(c.path...))
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%s = %s, want %s", strings.Join(c.path, "."), got, want)
		}
	}
	ops := doc["paths"].(map[string]any)["/api/v1/jobs/{group}/{name}"].(map[string]any)
	put, _ := json.Marshal(ops["put"])
	for _, want := range []string{`"If-Match"`, `"412"`, `"ETag"`, `"201"`, `"200"`, `"x-chime-role":"operator"`} {
		if !strings.Contains(string(put), want) {
			t.Errorf("PUT job operation lacks %s: %s", want, put)
		}
	}
}

// TestOpenAPIMatchesMux checks the document against the routes registered
// on the mux, both ways, and that the mux really routes each documented
// operation to the pattern of the same name.
func TestOpenAPIMatchesMux(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	doc := openAPI(t, f)
	h := New(newRecordingService(), newRecordingAuthenticator(), nil).(*handler)

	documented := documentedRoutes(t, doc)
	sameSet(t, "the OpenAPI document", documented, "the mux", h.patterns)

	for _, p := range append(slices.Clone(h.patterns), documented...) {
		method, path, _ := strings.Cut(p, " ")
		concrete := regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "x")
		req := httptest.NewRequest(method, concrete, nil)
		if _, got := h.mux.Handler(req); got != p {
			t.Errorf("%s %s is routed to %q, want %q", method, concrete, got, p)
		}
	}
}

// TestOpenAPIMatchesDocs checks the document against docs/api.md's table.
func TestOpenAPIMatchesDocs(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	var inDocs []string
	for _, m := range regexp.MustCompile("`(GET|POST|PUT|DELETE|PATCH) (/[^`?]*)").FindAllStringSubmatch(string(md), -1) {
		if p := m[1] + " " + m[2]; !slices.Contains(inDocs, p) {
			inDocs = append(inDocs, p)
		}
	}
	if len(inDocs) < 30 {
		t.Fatalf("found only %d routes in docs/api.md: %v", len(inDocs), inDocs)
	}
	sameSet(t, "docs/api.md", inDocs, "the OpenAPI document", documentedRoutes(t, openAPI(t, newFixture(t))))
}

// walkJSON calls fn for every key and value of a decoded JSON document.
func walkJSON(v any, fn func(key string, v any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			fn(k, e)
			walkJSON(e, fn)
		}
	case []any:
		for _, e := range v {
			walkJSON(e, fn)
		}
	}
}
