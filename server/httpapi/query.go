package httpapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
)

// paramType is the type of a query parameter's value.
type paramType int

const (
	paramString paramType = iota
	paramInt
	paramBool
	paramTime // RFC 3339
)

// The range of instants a query parameter may name: the Unix epoch, and
// the year chime's schedules give up at (schedule math evaluates through
// 2199). Every stored instant lies between them.
var (
	minTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// param declares one query parameter of a route. The route wrapper
// validates the query string against these declarations before the
// handler runs, and the OpenAPI document describes them.
type param struct {
	name        string
	typ         paramType
	description string
	required    bool
	// repeated parameters may be given several times.
	repeated bool
	// enum lists the values a string parameter may take.
	enum []string
	// min, max and def bound an integer parameter and give its value when
	// absent.
	min, max, def int
}

// pageParams are the paging parameters of the list routes. An absent
// limit is 0, which leaves the default to the service.
func pageParams() []param {
	return []param{
		{name: "cursor", description: "Continues a previous page: the next value it returned."},
		{name: "limit", typ: paramInt, min: 1, max: 500, description: "Page size; defaults to 50."},
	}
}

// queryValues are a request's validated query parameters.
type queryValues struct {
	strs  map[string][]string
	ints  map[string]int
	bools map[string]bool
	times map[string]time.Time
}

// str returns a string parameter, "" when absent.
func (q queryValues) str(name string) string {
	if v := q.strs[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// all returns every value of a repeated string parameter.
func (q queryValues) all(name string) []string { return q.strs[name] }

// int returns an integer parameter, its default when absent.
func (q queryValues) int(name string) int { return q.ints[name] }

// bool returns a boolean parameter, false when absent.
func (q queryValues) bool(name string) bool { return q.bools[name] }

// time returns a time parameter, nil when absent.
func (q queryValues) time(name string) *time.Time {
	if t, ok := q.times[name]; ok {
		return &t
	}
	return nil
}

// parseQuery validates values against a route's declarations: unknown
// parameters, repeated single ones, missing required ones and values of
// the wrong type or range are refused with an invalid_argument error
// naming the parameter.
func parseQuery(values url.Values, params []param) (queryValues, error) {
	q := queryValues{
		strs:  make(map[string][]string),
		ints:  make(map[string]int),
		bools: make(map[string]bool),
		times: make(map[string]time.Time),
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.ContainsFunc(params, func(p param) bool { return p.name == name }) {
			return q, unknownParam(name, params)
		}
	}
	for _, p := range params {
		vs, ok := values[p.name]
		switch {
		case !ok && p.required:
			return q, httpjson.Errorf(api.CodeInvalidArgument, p.name, "query parameter is required")
		case !ok:
			if p.typ == paramInt {
				q.ints[p.name] = p.def
			}
			continue
		case len(vs) > 1 && !p.repeated:
			return q, httpjson.Errorf(api.CodeInvalidArgument, p.name, "query parameter is given %d times; give it once", len(vs))
		}
		for _, v := range vs {
			if err := httpjson.CheckText(p.name, "query parameter "+p.name, v); err != nil {
				return q, err
			}
			if err := q.add(p, v); err != nil {
				return q, err
			}
		}
	}
	return q, nil
}

// add validates one value of p and keeps it.
func (q queryValues) add(p param, v string) error {
	switch p.typ {
	case paramInt:
		n, err := strconv.Atoi(v)
		if err != nil || n < p.min || n > p.max {
			return httpjson.Errorf(api.CodeInvalidArgument, p.name, "must be an integer from %d to %d, got %q", p.min, p.max, v)
		}
		q.ints[p.name] = n
	case paramBool:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return httpjson.Errorf(api.CodeInvalidArgument, p.name, "must be true or false, got %q", v)
		}
		q.bools[p.name] = b
	case paramTime:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			hint := ""
			if strings.Contains(v, " ") {
				hint = " (a + in the offset must be sent as %2B)"
			}
			return httpjson.Errorf(api.CodeInvalidArgument, p.name, "must be an RFC 3339 time like 2025-01-02T15:04:05Z, got %q%s", v, hint)
		}
		if t.Before(minTime) || !t.Before(maxTime) {
			return httpjson.Errorf(api.CodeInvalidArgument, p.name, "%s is out of range: chime handles instants from %d to %d",
				v, minTime.Year(), maxTime.Year()-1)
		}
		q.times[p.name] = t
	default:
		if p.enum != nil && !slices.Contains(p.enum, v) {
			return httpjson.Errorf(api.CodeInvalidArgument, p.name, "must be one of %s, got %q", strings.Join(p.enum, ", "), v)
		}
		q.strs[p.name] = append(q.strs[p.name], v)
	}
	return nil
}

// unknownParam refuses a query parameter the route does not take, listing
// those it does.
func unknownParam(name string, params []param) error {
	if len(params) == 0 {
		return httpjson.Errorf(api.CodeInvalidArgument, name, "unknown query parameter; this route takes none")
	}
	known := make([]string, len(params))
	for i, p := range params {
		known[i] = p.name
	}
	return httpjson.Errorf(api.CodeInvalidArgument, name, "unknown query parameter; this route takes %s", strings.Join(known, ", "))
}

// jobKey splits a "group/name" job key, as ?job= gives it.
func jobKey(field, key string) (group, name string, err error) {
	group, name, ok := strings.Cut(key, "/")
	if !ok || group == "" || name == "" || strings.Contains(name, "/") {
		return "", "", httpjson.Errorf(api.CodeInvalidArgument, field, "must be a job key like group/name, got %q", key)
	}
	return group, name, nil
}

// timeRange checks that from, when both are given, is before to.
func timeRange(from, to *time.Time, toField string) error {
	if from != nil && to != nil && !from.Before(*to) {
		return httpjson.Errorf(api.CodeInvalidArgument, toField, "must be after from (%s), got %s",
			from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))
	}
	return nil
}
