package httpapi

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

func (h *handler) listJobs(w http.ResponseWriter, r *http.Request, c *call) error {
	list, err := h.svc.ListJobs(r.Context(), api.JobQuery{
		Group:   c.query.str("group"),
		Text:    c.query.str("q"),
		State:   c.query.str("state"),
		Failing: c.query.bool("failing"),
		Cursor:  c.query.str("cursor"),
		Limit:   c.query.int("limit"),
	})
	if err != nil {
		return err
	}
	if list.Jobs == nil {
		list.Jobs = []api.Job{}
	}
	for i := range list.Jobs {
		list.Jobs[i] = c.viewOf(list.Jobs[i])
	}
	httpjson.Write(w, http.StatusOK, list)
	return nil
}

func (h *handler) createJob(w http.ResponseWriter, r *http.Request, c *call) error {
	var job api.Job
	if err := h.decode(w, r, &job); err != nil {
		return err
	}
	created, err := h.svc.CreateJob(r.Context(), c.actor(), job)
	if err != nil {
		return err
	}
	w.Header().Set("Location", jobPath(created.Group, created.Name))
	writeJob(w, http.StatusCreated, created)
	return nil
}

func (h *handler) createJobs(w http.ResponseWriter, r *http.Request, c *call) error {
	var batch api.JobBatch
	if err := h.decode(w, r, &batch); err != nil {
		return err
	}
	res, err := h.svc.CreateJobs(r.Context(), c.actor(), batch.Jobs)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusCreated, res)
	return nil
}

func (h *handler) getJob(w http.ResponseWriter, r *http.Request, c *call) error {
	job, err := h.svc.GetJob(r.Context(), r.PathValue("group"), r.PathValue("name"))
	if err != nil {
		return err
	}
	view := c.viewOf(*job)
	writeJob(w, http.StatusOK, &view)
	return nil
}

func (h *handler) putJob(w http.ResponseWriter, r *http.Request, c *call) error {
	ifMatch, err := parseIfMatch(r.Header.Values("If-Match"))
	if err != nil {
		return err
	}
	var job api.Job
	keys, err := httpjson.DecodeKeys(w, r, h.maxBody, &job)
	if err != nil {
		return err
	}
	if job.Group, err = fromPath(r, "group", job.Group); err != nil {
		return err
	}
	if job.Name, err = fromPath(r, "name", job.Name); err != nil {
		return err
	}
	stored, created, err := h.svc.PutJob(r.Context(), c.actor(), job, ifMatch, absentFields(keys))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", jobPath(stored.Group, stored.Name))
	}
	writeJob(w, status, stored)
	return nil
}

func (h *handler) deleteJob(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.DeleteJob(r.Context(), c.actor(), r.PathValue("group"), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) pauseJob(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.PauseJob(r.Context(), c.actor(), r.PathValue("group"), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) resumeJob(w http.ResponseWriter, r *http.Request, c *call) error {
	if err := h.svc.ResumeJob(r.Context(), c.actor(), r.PathValue("group"), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) runJob(w http.ResponseWriter, r *http.Request, c *call) error {
	var req api.RunRequest
	if err := h.decodeOptional(w, r, &req); err != nil {
		return err
	}
	acc, err := h.svc.RunJob(r.Context(), c.actor(), r.PathValue("group"), r.PathValue("name"), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, acc)
	return nil
}

func (h *handler) backfillJob(w http.ResponseWriter, r *http.Request, c *call) error {
	var req api.BackfillRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	switch {
	case req.From.IsZero():
		return httpjson.Errorf(api.CodeInvalidArgument, "from", "is required")
	case req.To.IsZero():
		return httpjson.Errorf(api.CodeInvalidArgument, "to", "is required")
	}
	if err := timeRange(&req.From, &req.To, "to"); err != nil {
		return err
	}
	acc, err := h.svc.Backfill(r.Context(), c.actor(), r.PathValue("group"), r.PathValue("name"), req)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, acc)
	return nil
}

func (h *handler) upcoming(w http.ResponseWriter, r *http.Request, c *call) error {
	times, err := h.svc.UpcomingFireTimes(r.Context(), r.PathValue("group"), r.PathValue("name"), c.query.int("count"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, nonNil(times))
	return nil
}

func (h *handler) explain(w http.ResponseWriter, r *http.Request, c *call) error {
	exp, err := h.svc.Explain(r.Context(), r.PathValue("group"), r.PathValue("name"), *c.query.time("at"))
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, exp)
	return nil
}

func (h *handler) listJobVersions(w http.ResponseWriter, r *http.Request, c *call) error {
	list, err := h.svc.ListJobVersions(r.Context(), r.PathValue("group"), r.PathValue("name"), api.JobVersionQuery{
		Cursor: c.query.str("cursor"), Limit: c.query.int("limit"),
	})
	if err != nil {
		return err
	}
	list.Versions = nonNil(list.Versions)
	httpjson.Write(w, http.StatusOK, list)
	return nil
}

// versionNumber reads the {number} of a version's path.
func versionNumber(r *http.Request) (int64, error) {
	raw := r.PathValue("number")
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 1 {
		return 0, httpjson.Errorf(api.CodeInvalidArgument, "number", "%q is not a version number: want 1 or more", raw)
	}
	return n, nil
}

func (h *handler) getJobVersion(w http.ResponseWriter, r *http.Request, _ *call) error {
	n, err := versionNumber(r)
	if err != nil {
		return err
	}
	v, err := h.svc.GetJobVersion(r.Context(), r.PathValue("group"), r.PathValue("name"), n)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, v)
	return nil
}

func (h *handler) diffJobVersions(w http.ResponseWriter, r *http.Request, c *call) error {
	n, err := versionNumber(r)
	if err != nil {
		return err
	}
	d, err := h.svc.DiffJobVersions(r.Context(), r.PathValue("group"), r.PathValue("name"), int64(c.query.int("from")), n)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, d)
	return nil
}

func (h *handler) rollbackJob(w http.ResponseWriter, r *http.Request, c *call) error {
	ifMatch, err := parseIfMatch(r.Header.Values("If-Match"))
	if err != nil {
		return err
	}
	n, err := versionNumber(r)
	if err != nil {
		return err
	}
	stored, err := h.svc.RollbackJob(r.Context(), c.actor(), r.PathValue("group"), r.PathValue("name"), n, ifMatch)
	if err != nil {
		return err
	}
	writeJob(w, http.StatusOK, stored)
	return nil
}

// writeJob writes a job with its version as the ETag.
func writeJob(w http.ResponseWriter, status int, job *api.Job) {
	w.Header().Set("ETag", etag(job.Version))
	addWarnings(w.Header(), job.Warnings)
	httpjson.Write(w, status, job)
}

// addWarnings adds one Warning header (RFC 9111's syntax, code 299) per
// warning of a response.
func addWarnings(h http.Header, warnings []string) {
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	for _, msg := range warnings {
		h.Add("Warning", `299 chime "`+quote.Replace(msg)+`"`)
	}
}

// absentFields lists the fields of api.Job, by JSON name, that a body
// whose fields are keys leaves out. Names match as encoding/json matches
// them, ignoring case.
func absentFields(keys []string) []string {
	var out []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[api.Job]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		if !slices.ContainsFunc(keys, func(k string) bool { return strings.EqualFold(k, name) }) {
			out = append(out, name)
		}
	}
	return out
}

// etag is the ETag of a job version: the version as a quoted string.
func etag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// parseIfMatch reads the If-Match header of a job update: absent is 0, no
// precondition; otherwise it must be one strong ETag as etag writes it.
// "*" and lists are refused, since the service checks one version.
func parseIfMatch(values []string) (int64, error) {
	if len(values) == 0 {
		return 0, nil
	}
	bad := func() error {
		return httpjson.Errorf(api.CodeInvalidArgument, "If-Match",
			`must be one ETag of this job as GET returned it, like "7"; got %s`, strings.Join(values, ", "))
	}
	if len(values) > 1 {
		return 0, bad()
	}
	inner, ok := strings.CutPrefix(values[0], `"`)
	if !ok {
		return 0, bad()
	}
	inner, ok = strings.CutSuffix(inner, `"`)
	if !ok {
		return 0, bad()
	}
	version, err := strconv.ParseInt(inner, 10, 64)
	if err != nil || version <= 0 {
		return 0, bad()
	}
	return version, nil
}

// jobPath is the URL path of a job.
func jobPath(group, name string) string {
	return api.Version + "/jobs/" + url.PathEscape(group) + "/" + url.PathEscape(name)
}

// fromPath reconciles a body field with the path wildcard of the same
// name: an empty body field takes the path's value, a different one is
// refused.
func fromPath(r *http.Request, field, body string) (string, error) {
	path := r.PathValue(field)
	if body != "" && body != path {
		return "", httpjson.Errorf(api.CodeInvalidArgument, field, "is %q but the path names %q", body, path)
	}
	return path, nil
}

// decode reads a JSON request body within the body limit.
func (h *handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	return httpjson.Decode(w, r, h.maxBody, v)
}

// decodeOptional is decode for a body that may be absent: an empty body
// leaves v as it is.
func (h *handler) decodeOptional(w http.ResponseWriter, r *http.Request, v any) error {
	body := bufio.NewReader(r.Body)
	if _, err := body.Peek(1); errors.Is(err, io.EOF) {
		return nil
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{body, r.Body}
	return h.decode(w, r, v)
}

// nonNil makes a nil list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
