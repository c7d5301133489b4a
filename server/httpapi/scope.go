package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// groupsFunc returns the job groups a request changes, for the scope
// check of a caller whose role is limited to some job groups. all is true
// when the request changes more than job groups can bound (every job, or
// something that belongs to no group).
type groupsFunc func(h *handler, r *http.Request) (groups []string, all bool, err error)

// authorizeScope is the one place that enforces job-group scopes
// (api.User.Scopes): a scoped caller of a route above viewer may go on only
// when every job group the request changes matches one of its patterns.
// Routes that name no job group (calendars, maintenance of every job)
// are refused to it, as is a request whose groups cannot be read. Reads
// are not checked here: a scoped operator reads every job, those outside
// its scopes masked as a viewer reads them (call.viewOf).
func (h *handler) authorizeScope(r *http.Request, rt *route, user *api.User) error {
	if !user.Scoped() || rt.role == api.RoleViewer {
		return nil
	}
	refuse := func(what string) error {
		return httpjson.Errorf(api.CodePermissionDenied, "",
			"%s %s: %s is %s only of job groups %s, and %s", rt.method, rt.path, user.Name, user.Role, user.ScopeList(), what)
	}
	if rt.groups == nil {
		return refuse("this route is not limited to a job group")
	}
	groups, all, err := rt.groups(h, r)
	if err != nil {
		return err
	}
	if all {
		return refuse("this request changes every job group")
	}
	for _, g := range groups {
		if !user.MayChangeGroup(g) {
			return refuse("job group " + quote(g) + " matches none of them")
		}
	}
	return nil
}

// quote is strconv.Quote without the import in every message.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pathGroup is the {group} of the route's path.
func pathGroup(_ *handler, r *http.Request) ([]string, bool, error) {
	return []string{r.PathValue("group")}, false, nil
}

// executionGroup is the job group of the execution {id} of the path.
func executionGroup(h *handler, r *http.Request) ([]string, bool, error) {
	e, err := h.svc.GetExecution(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, false, err
	}
	return []string{e.JobGroup}, false, nil
}

// maintenanceGroup is the job group of the maintenance window in force,
// all when it pauses every job; none when no window is on (the request
// then changes nothing).
func maintenanceGroup(h *handler, r *http.Request) ([]string, bool, error) {
	m, err := h.svc.Maintenance(r.Context())
	if err != nil {
		return nil, false, err
	}
	if !m.Active {
		return nil, false, nil
	}
	return []string{m.Group}, m.Group == "", nil
}

// bodyGroups returns a groupsFunc that reads the job groups a request's
// body names with groups, leaving the body for the handler to read.
func bodyGroups[T any](groups func(*T) ([]string, bool)) groupsFunc {
	return func(h *handler, r *http.Request) ([]string, bool, error) {
		b, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
		if err != nil {
			return nil, false, err
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
		var v T
		if int64(len(b)) > h.maxBody || json.Unmarshal(b, &v) != nil {
			return nil, false, httpjson.Errorf(api.CodePermissionDenied, "",
				"the job groups of this request cannot be read from its body, so a caller limited to job groups may not send it")
		}
		g, all := groups(&v)
		return g, all, nil
	}
}

// jobBodyGroup is the group of the job a body holds.
var jobBodyGroup = bodyGroups(func(j *api.Job) ([]string, bool) { return []string{j.Group}, false })

// batchBodyGroups are the groups of the jobs a batch holds.
var batchBodyGroups = bodyGroups(func(b *api.JobBatch) ([]string, bool) {
	groups := make([]string, len(b.Jobs))
	for i, j := range b.Jobs {
		groups[i] = j.Group
	}
	return groups, false
})

// maintenanceBodyGroup is the group a maintenance request pauses, all
// when it names none.
var maintenanceBodyGroup = bodyGroups(func(m *api.MaintenanceRequest) ([]string, bool) {
	return []string{m.Group}, m.Group == ""
})
