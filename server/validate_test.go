package server_test

import (
	"maps"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
)

// TestPutNamesTheRefusedFieldOfTheThirdTrigger checks that a PUT whose
// third trigger is refused answers 400 naming triggers[2] and the field
// in the API's names, whether the server refuses it while decoding (a
// cron expression that does not parse) or the scheduler does when the
// job is written (a cron that never fires, a priority out of range, a
// misfire instruction cron schedules do not have). The first two
// triggers are unchanged, so the scheduler is handed the third alone:
// the field still names its index in the request. Nothing is written.
func TestPutNamesTheRefusedFieldOfTheThirdTrigger(t *testing.T) {
	t.Parallel()
	cron := func(name, expr string) map[string]any {
		return map[string]any{"name": name, "schedule": map[string]any{"kind": "cron", "expression": expr}}
	}
	job := func(third map[string]any) map[string]any {
		return map[string]any{
			"type":        "http",
			"description": "nightly report",
			"http":        map[string]any{"url": "http://127.0.0.1:9/report"},
			"triggers":    []any{cron("a", "0 0 1 * * ?"), cron("b", "0 0 2 * * ?"), third},
		}
	}
	with := func(m map[string]any, k string, v any) map[string]any {
		m = maps.Clone(m)
		m[k] = v
		return m
	}
	tests := []struct {
		name  string
		third map[string]any
		field string
		text  string
	}{
		{"cron that does not parse", cron("c", "0 0 25 * * ?"), "triggers[2].schedule.expression", "cannot parse"},
		{"cron that never fires", cron("c", "0 0 0 30 2 ?"), "triggers[2].schedule", "never fires"},
		{"priority out of range", with(cron("c", "0 0 3 * * ?"), "priority", 1<<31), "triggers[2].priority", "out of range"},
		{"misfire of another kind", with(cron("c", "0 0 3 * * ?"), "misfire", "FIRE_NOW"), "triggers[2].misfire", "not defined for cron"},
		{"end before start", with(with(cron("c", "0 0 3 * * ?"), "start_time", "2030-01-02T00:00:00Z"), "end_time", "2030-01-01T00:00:00Z"),
			"triggers[2].end_time", "before the start time"},
	}
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, &servertest.Options{Config: server.Config{DatabaseURL: db.URL(t)}})
			path := api.Version + "/jobs/reports/nightly"
			if status, got, _ := rawCall(t, srv, http.MethodPut, path, job(cron("c", "0 0 3 * * ?"))); status != http.StatusCreated {
				t.Fatalf("creating the job: status %d: %v", status, got)
			}
			_, before, _ := rawCall(t, srv, http.MethodGet, path, nil)
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					body := with(job(tc.third), "description", "changed")
					status, got, _ := rawCall(t, srv, http.MethodPut, path, body)
					msg, _ := got["message"].(string)
					if status != http.StatusBadRequest || got["field"] != tc.field || !strings.Contains(msg, tc.text) {
						t.Fatalf("PUT: status %d, answer %v; want 400 naming %s with a message saying %q", status, got, tc.field, tc.text)
					}
					_, after, _ := rawCall(t, srv, http.MethodGet, path, nil)
					if !reflect.DeepEqual(withoutStatus(after), withoutStatus(before)) {
						t.Fatalf("the refused PUT changed the job:\n got %v\nwant %v", after, before)
					}
				})
			}
		})
	}
}
