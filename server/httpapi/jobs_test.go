package httpapi

import (
	"net/http"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestJobVersionRoundTrip follows the optimistic concurrency protocol: GET
// gives the version as the ETag, a PUT naming it in If-Match replaces the
// job, a second PUT naming the old version is refused with 412 and changes
// nothing.
func TestJobVersionRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const op = "operator-token"

	resp, raw := f.do(t, "GET", "/api/v1/jobs/g/n", "viewer-token", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"3"` {
		t.Fatalf("GET: status %d, ETag %q; want 200 and \"3\"; body %s", resp.StatusCode, resp.Header.Get("ETag"), raw)
	}
	var job api.Job
	decodeJSON(t, raw, &job)
	if job.Version != 3 || job.Description != "nightly" {
		t.Fatalf("GET body = %+v", job)
	}

	resp, raw = f.do(t, "PUT", "/api/v1/jobs/g/n", op, `{"type":"http","description":"first edit"}`, "If-Match", resp.Header.Get("ETag"))
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"4"` {
		t.Fatalf("PUT at the current version: status %d, ETag %q; want 200 and \"4\"; body %s", resp.StatusCode, resp.Header.Get("ETag"), raw)
	}
	if got := f.svc.Calls(); got[len(got)-1].Args[1] != int64(3) {
		t.Errorf("PutJob got ifMatch %v, want 3", got[len(got)-1].Args[1])
	}

	resp, raw = f.do(t, "PUT", "/api/v1/jobs/g/n", op, `{"type":"http","description":"stale edit"}`, "If-Match", `"3"`)
	if resp.StatusCode != http.StatusPreconditionFailed {
		t.Fatalf("PUT at an old version: status %d, want 412; body %s", resp.StatusCode, raw)
	}
	if e := decodeError(t, resp, raw); e.Code != api.CodeVersionMismatch {
		t.Errorf("code = %s, want version_mismatch", e.Code)
	}
	if j, _ := f.svc.job("g", "n"); j.Description != "first edit" || j.Version != 4 {
		t.Errorf("after a refused PUT the job is %+v", j)
	}

	resp, raw = f.do(t, "PUT", "/api/v1/jobs/g/n", op, `{"type":"http","description":"forced"}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != `"5"` {
		t.Fatalf("PUT without If-Match: status %d, ETag %q; body %s", resp.StatusCode, resp.Header.Get("ETag"), raw)
	}
	if got := f.svc.Calls(); got[len(got)-1].Args[1] != int64(0) {
		t.Errorf("PutJob without If-Match got ifMatch %v, want 0", got[len(got)-1].Args[1])
	}
}

// TestJobCreateStatuses checks 201 with Location and ETag for a new job,
// 200 for a replaced one, 409 for creating an existing key and 204 then
// 404 for a delete.
func TestJobCreateStatuses(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const op = "operator-token"

	resp, raw := f.do(t, "PUT", "/api/v1/jobs/etl/new%20one", op, `{"type":"http"}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT of a new key: status %d, want 201; body %s", resp.StatusCode, raw)
	}
	if got, want := resp.Header.Get("Location"), "/api/v1/jobs/etl/new%20one"; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	if got := resp.Header.Get("ETag"); got != `"1"` {
		t.Errorf("ETag = %q, want \"1\"", got)
	}
	if resp, raw := f.do(t, "PUT", "/api/v1/jobs/etl/new%20one", op, `{"type":"http"}`); resp.StatusCode != http.StatusOK || resp.Header.Get("Location") != "" {
		t.Errorf("PUT of an existing key: status %d, Location %q; want 200 and none; body %s", resp.StatusCode, resp.Header.Get("Location"), raw)
	}

	resp, raw = f.do(t, "POST", "/api/v1/jobs", op, `{"group":"etl","name":"posted","type":"http"}`)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("ETag") != `"1"` || resp.Header.Get("Location") != "/api/v1/jobs/etl/posted" {
		t.Fatalf("POST: status %d, ETag %q, Location %q; body %s", resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Location"), raw)
	}
	resp, raw = f.do(t, "POST", "/api/v1/jobs", op, `{"group":"etl","name":"posted","type":"http"}`)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("POST of an existing key: status %d, want 409; body %s", resp.StatusCode, raw)
	}

	if resp, raw := f.do(t, "DELETE", "/api/v1/jobs/etl/posted", op, ""); resp.StatusCode != http.StatusNoContent || len(raw) != 0 {
		t.Fatalf("DELETE: status %d, body %q; want 204 and none", resp.StatusCode, raw)
	}
	resp, raw = f.do(t, "GET", "/api/v1/jobs/etl/posted", op, "")
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET after DELETE: status %d, want 404; body %s", resp.StatusCode, raw)
	}
	if e := decodeError(t, resp, raw); e.Code != api.CodeNotFound {
		t.Errorf("code = %s, want not_found", e.Code)
	}
}
