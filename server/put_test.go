package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/server"
	"github.com/chime-scheduler/chime/server/servertest"
)

// rawCall sends a JSON body (nil for none) to the API of srv as its admin
// and returns the status, the decoded JSON object of the answer and its
// Warning headers.
func rawCall(t *testing.T, srv *servertest.Server, method, path string, body any) (int, map[string]any, []string) {
	t.Helper()
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, in)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil && err != io.EOF {
		t.Fatalf("%s %s: decoding the answer: %v", method, path, err)
	}
	return resp.StatusCode, out, resp.Header.Values("Warning")
}

// withoutStatus is a job's JSON without what the server computes anew on
// every read.
func withoutStatus(job map[string]any) map[string]any {
	out := maps.Clone(job)
	delete(out, "status")
	return out
}

// TestPutKeepsAbsentFields checks, for every field of api.Job, the rule of
// PUT /api/v1/jobs/{group}/{name}: a field the body leaves out keeps its
// stored value (the job does not change, not even its version), and a
// field given as null is cleared or refused where it cannot be.
func TestPutKeepsAbsentFields(t *testing.T) {
	t.Parallel()
	httpJob := map[string]any{
		"group": "keep", "description": "nightly report", "type": "http",
		"http":              map[string]any{"url": "http://127.0.0.1:9/report", "method": "POST"},
		"data":              map[string]any{"region": "eu"},
		"triggers":          []any{map[string]any{"schedule": map[string]any{"kind": "cron", "expression": "0 0 3 * * ?", "time_zone": "Europe/Berlin"}}},
		"timeout":           "30s",
		"retry":             map[string]any{"max_attempts": 3, "delay": "1s"},
		"overlap":           "skip",
		"pool":              "reports",
		"pool_max_wait":     "30s",
		"requests_recovery": true,
		"alerts":            map[string]any{"dead_man": "2h", "emails": []any{"ops@example.com"}},
		"paused":            true,
	}
	shellJob := maps.Clone(httpJob)
	delete(shellJob, "http")
	shellJob["type"] = "shell"
	shellJob["shell"] = map[string]any{"argv": []any{"true"}}
	executorJob := maps.Clone(httpJob)
	delete(executorJob, "http")
	executorJob["type"] = "executor"
	// No executor registers here: the job is saved before its executors,
	// as chime apply of a fresh cluster does.
	executorJob["executor"] = map[string]any{"group": "billing", "handler": "invoice.close", "routing": "lru", "labels": map[string]any{"region": "eu"},
		"allow_unregistered": true}
	// keep/group is the job of the first case, saved before.
	parentJob := maps.Clone(httpJob)
	parentJob["children"] = []any{map[string]any{"job": "keep/group", "on": "always"}}
	// A sharded job's overlap is allow.
	shardedJob := maps.Clone(httpJob)
	delete(shardedJob, "overlap")
	shardedJob["shards"] = 2
	shardParamsJob := maps.Clone(shardedJob)
	shardParamsJob["shard_params"] = []any{map[string]any{"region": "eu"}, map[string]any{"region": "us"}}

	// What a body that gives the field as null does: "clears" (the field
	// is gone from the job), "refused" (400 naming it) or "nothing" (the
	// job does not change: group and name are the path's, the rest is
	// read-only).
	tests := []struct {
		field string
		job   map[string]any
		null  string
	}{
		{"group", httpJob, "nothing"},
		{"name", httpJob, "nothing"},
		{"description", httpJob, "clears"},
		{"type", httpJob, "refused"},
		{"http", httpJob, "refused"},
		{"shell", shellJob, "refused"},
		{"executor", executorJob, "refused"},
		{"data", httpJob, "clears"},
		{"triggers", httpJob, "clears"},
		{"timeout", httpJob, "clears"},
		{"retry", httpJob, "clears"},
		{"overlap", httpJob, "clears"},
		{"pool", httpJob, "refused"}, // while pool_max_wait is given
		{"pool_max_wait", httpJob, "clears"},
		{"requests_recovery", httpJob, "clears"},
		{"alerts", httpJob, "clears"},
		{"children", parentJob, "clears"},
		{"shards", shardedJob, "clears"},
		{"shard_params", shardParamsJob, "clears"},
		{"paused", httpJob, "clears"},
		{"version", httpJob, "nothing"},
		{"status", httpJob, "nothing"},
		{"warnings", httpJob, "nothing"},
	}
	var covered, fields []string
	for _, tc := range tests {
		covered = append(covered, tc.field)
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[api.Job]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	if !slices.Equal(covered, fields) {
		t.Fatalf("the test covers fields %v; api.Job has %v", covered, fields)
	}

	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			srv := servertest.Start(t, &servertest.Options{Config: server.Config{DatabaseURL: db.URL(t), EnableShellJobs: true}})
			if _, _, err := srv.Client.PutPool(t.Context(), api.Pool{Name: "reports", Limit: 2}); err != nil {
				t.Fatalf("PutPool: %v", err)
			}
			for _, tc := range tests {
				t.Run(tc.field, func(t *testing.T) {
					path := api.Version + "/jobs/keep/" + tc.field
					if status, _, _ := rawCall(t, srv, http.MethodPut, path, tc.job); status != http.StatusCreated {
						t.Fatalf("creating the job: status %d", status)
					}
					_, before, _ := rawCall(t, srv, http.MethodGet, path, nil)

					// Left out, twice: nothing changes.
					body := maps.Clone(tc.job)
					delete(body, tc.field)
					for range 2 {
						if status, got, _ := rawCall(t, srv, http.MethodPut, path, body); status != http.StatusOK {
							t.Fatalf("PUT without %s: status %d: %v", tc.field, status, got)
						}
						_, after, _ := rawCall(t, srv, http.MethodGet, path, nil)
						if !reflect.DeepEqual(withoutStatus(after), withoutStatus(before)) {
							t.Fatalf("PUT without %s changed the job:\n got %v\nwant %v", tc.field, after, before)
						}
					}

					// Given as null.
					body = maps.Clone(tc.job)
					body[tc.field] = nil
					status, got, _ := rawCall(t, srv, http.MethodPut, path, body)
					_, after, _ := rawCall(t, srv, http.MethodGet, path, nil)
					switch tc.null {
					case "nothing":
						if status != http.StatusOK || !reflect.DeepEqual(withoutStatus(after), withoutStatus(before)) {
							t.Errorf("PUT with %s null: status %d; job\n got %v\nwant %v", tc.field, status, after, before)
						}
					case "refused":
						if status != http.StatusBadRequest || got["field"] != tc.field || after["version"] != before["version"] {
							t.Errorf("PUT with %s null: status %d, %v, version %v; want 400 naming %s, version %v unchanged",
								tc.field, status, got, after["version"], tc.field, before["version"])
						}
					case "clears":
						if _, ok := after[tc.field]; status != http.StatusOK || ok {
							t.Errorf("PUT with %s null: status %d; job has %s = %v; want it cleared", tc.field, status, tc.field, after[tc.field])
						}
					}
				})
			}
		})
	}
}
