// Package wire translates the JSON form of schedules and calendars in chime
// server's API to and from the library's values of packages schedule and
// calendar. The server decodes request bodies with it and the CLI checks
// and compares its manifests with it, so both read one form.
//
// The form, documented with an example per kind in docs/api.md: field
// names are snake_case, enumerations lower case ("day", "monday"),
// durations Go duration strings ("90s", "1h30m"), times of day "HH:MM:SS",
// and time zones IANA names under "time_zone". Unknown fields, and fields
// of another kind, are refused with an *api.Error naming the field by its
// JSON path ("triggers[0].schedule.interval").
//
// The spellings of the previous release (repeat_interval_ms, upper-case
// units and capitalised days, a calendar's tz and camelCase fields) are
// still accepted, with their old meaning, and reported as a [Warning];
// they will be refused in the next release. Stored schedules and
// calendars are kept in the library's own encoding, so nothing already
// stored changes: it is read back and served in the current form.
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chime-scheduler/chime/api"
)

// Warning reports input accepted in a deprecated spelling.
type Warning struct {
	// Field is the JSON path of the object that used the old spelling.
	Field string
	// Message says what was deprecated and what to write instead.
	Message string
}

// String formats the warning as "field: message".
func (w Warning) String() string {
	if w.Field == "" {
		return w.Message
	}
	return w.Field + ": " + w.Message
}

// invalidf returns the invalid_argument error of field.
func invalidf(field, format string, args ...any) *api.Error {
	return &api.Error{Code: api.CodeInvalidArgument, Field: field, Message: fmt.Sprintf(format, args...)}
}

// join appends name to the JSON path path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// object is one JSON object of the input, read field by field. A field
// whose value is null counts as absent.
type object struct {
	path   string
	fields map[string]json.RawMessage
}

// readObject reads the JSON object data, found at path.
func readObject(data []byte, path string) (*object, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, invalidf(path, "must be a JSON object, got %s", jsonKind(data))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, invalidf(path, "is not valid JSON: %v", err)
	}
	for k, v := range fields {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(fields, k)
		}
	}
	return &object{path: path, fields: fields}, nil
}

// jsonKind names the kind of JSON value data holds, for messages.
func jsonKind(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string " + string(data)
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number " + string(data)
}

func (o *object) has(name string) bool {
	_, ok := o.fields[name]
	return ok
}

func (o *object) field(name string) string { return join(o.path, name) }

// only refuses every field of o not in allowed, naming the first in
// order; what names the object ("a simple schedule").
func (o *object) only(what string, allowed ...string) error {
	for _, k := range slices.Sorted(maps.Keys(o.fields)) {
		if !slices.Contains(allowed, k) {
			return invalidf(o.field(k), "is not a field of %s; its fields are %s", what, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// str reads a string field; hint describes a valid value for messages.
func (o *object) str(name, hint string) (string, bool, error) {
	raw, ok := o.fields[name]
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, invalidf(o.field(name), "must be a string, %s; got %s", hint, jsonKind(raw))
	}
	return s, true, nil
}

// int reads a whole-number field; hint describes a valid value.
func (o *object) int(name, hint string) (int, bool, error) {
	raw, ok := o.fields[name]
	if !ok {
		return 0, false, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, true, invalidf(o.field(name), "must be a whole number, %s; got %s", hint, jsonKind(raw))
	}
	return n, true, nil
}

// bool reads a boolean field; absent is false.
func (o *object) bool(name string) (bool, error) {
	raw, ok := o.fields[name]
	if !ok {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, invalidf(o.field(name), "must be true or false; got %s", jsonKind(raw))
	}
	return b, nil
}

// strings reads a field holding an array of strings.
func (o *object) strings(name, hint string) ([]string, bool, error) {
	raw, ok := o.fields[name]
	if !ok {
		return nil, false, nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, true, invalidf(o.field(name), "must be an array of strings, %s; got %s", hint, jsonKind(raw))
	}
	return s, true, nil
}

// deprecated collects the old spellings one object used, for one warning.
type deprecated []string

// add records an old spelling.
func (d *deprecated) add(format string, args ...any) { *d = append(*d, fmt.Sprintf(format, args...)) }

// warning returns the warning for the object at path, which means now,
// and nil when no old spelling was used.
func (d deprecated) warning(path string, now []byte) []Warning {
	if len(d) == 0 {
		return nil
	}
	return []Warning{{Field: path, Message: fmt.Sprintf("deprecated spelling (%s), accepted until the next release; write %s", strings.Join(d, "; "), now)}}
}
