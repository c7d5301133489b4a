package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/chime-scheduler/chime/calendar"
)

// calendarJSON is the API's JSON form of one calendar of a chain.
// libCalendarJSON is package calendar's, which stores it: the same fields
// under other names, so that one converts to the other.
type (
	calendarJSON struct {
		Type                string          `json:"type"`
		TimeZone            string          `json:"time_zone"`
		Description         string          `json:"description,omitempty"`
		ExcludedDates       json.RawMessage `json:"excluded_dates,omitempty"`
		ExcludedDaysOfWeek  json.RawMessage `json:"excluded_days_of_week,omitempty"`
		ExcludedDaysOfMonth json.RawMessage `json:"excluded_days_of_month,omitempty"`
		ExcludedDays        json.RawMessage `json:"excluded_days,omitempty"`
		RangeStart          json.RawMessage `json:"range_start,omitempty"`
		RangeEnd            json.RawMessage `json:"range_end,omitempty"`
		InvertTimeRange     json.RawMessage `json:"invert_time_range,omitempty"`
		Expression          json.RawMessage `json:"expression,omitempty"`
		Base                json.RawMessage `json:"base"`
	}
	libCalendarJSON struct {
		Type                string          `json:"type"`
		TimeZone            string          `json:"tz"`
		Description         string          `json:"description,omitempty"`
		ExcludedDates       json.RawMessage `json:"excludedDates,omitempty"`
		ExcludedDaysOfWeek  json.RawMessage `json:"excludedDaysOfWeek,omitempty"`
		ExcludedDaysOfMonth json.RawMessage `json:"excludedDaysOfMonth,omitempty"`
		ExcludedDays        json.RawMessage `json:"excludedDays,omitempty"`
		RangeStart          json.RawMessage `json:"rangeStart,omitempty"`
		RangeEnd            json.RawMessage `json:"rangeEnd,omitempty"`
		InvertTimeRange     json.RawMessage `json:"invertTimeRange,omitempty"`
		Expression          json.RawMessage `json:"expr,omitempty"`
		Base                json.RawMessage `json:"base"`
	}
)

// calendarField is a field of a calendar definition: its name in the API,
// its name in package calendar (the previous release's spelling), and the
// JSON value it holds.
type calendarField struct {
	name, lib string
	value     byte // '"' string, '[' array, 't' boolean
}

// calendarFields are the fields of a calendar definition but type and base.
var calendarFields = []calendarField{
	{"time_zone", "tz", '"'},
	{"description", "description", '"'},
	{"excluded_dates", "excludedDates", '['},
	{"excluded_days_of_week", "excludedDaysOfWeek", '['},
	{"excluded_days_of_month", "excludedDaysOfMonth", '['},
	{"excluded_days", "excludedDays", '['},
	{"range_start", "rangeStart", '"'},
	{"range_end", "rangeEnd", '"'},
	{"invert_time_range", "invertTimeRange", 't'},
	{"expression", "expr", '"'},
}

// EncodeCalendar returns the API's JSON form of a calendar chain.
func EncodeCalendar(c calendar.Calendar) (json.RawMessage, error) {
	lib, err := calendar.Marshal(c)
	if err != nil {
		return nil, err
	}
	return fromLib(lib)
}

// fromLib converts package calendar's JSON of a chain to the API's.
func fromLib(data []byte) (json.RawMessage, error) {
	var def libCalendarJSON
	if err := json.Unmarshal(data, &def); err != nil {
		return nil, fmt.Errorf("wire: reading a stored calendar: %w", err)
	}
	out := calendarJSON(def)
	out.Base = json.RawMessage("null")
	if !isNull(def.Base) {
		base, err := fromLib(def.Base)
		if err != nil {
			return nil, err
		}
		out.Base = base
	}
	return json.Marshal(out)
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// DecodeCalendar decodes and validates a calendar chain in the API's JSON
// form; path is where it sits in the request ("calendar"), and prefixes
// the fields that errors and warnings name. Every error is an *api.Error
// with code invalid_argument.
func DecodeCalendar(data []byte, path string) (calendar.Calendar, []Warning, error) {
	lib, warnings, err := toLib(data, path)
	if err != nil {
		return nil, nil, err
	}
	cal, err := calendar.Unmarshal(lib)
	if err != nil {
		var fe *calendar.FieldError
		if errors.As(err, &fe) {
			return nil, nil, invalidf(join(path, apiFieldPath(fe.Field)), "%v", fe.Err)
		}
		return nil, nil, invalidf(path, "%v", err)
	}
	return cal, warnings, nil
}

// toLib converts the API's JSON of a chain, at path, to package
// calendar's, checking the fields' names and the kinds of their values.
func toLib(data []byte, path string) (json.RawMessage, []Warning, error) {
	o, err := readObject(data, path)
	if err != nil {
		return nil, nil, err
	}
	def := map[string]json.RawMessage{}
	var old deprecated
	for key, raw := range o.fields {
		switch key {
		case "type":
			def[key] = raw
			continue
		case "base":
			continue
		}
		f, ok := findCalendarField(key)
		if !ok {
			return nil, nil, invalidf(o.field(key), "is not a field of a calendar; its fields are type, %s and base", calendarFieldNames())
		}
		if key != f.name {
			if o.has(f.name) {
				return nil, nil, invalidf(o.field(key), "is the deprecated spelling of %s, which is given too", f.name)
			}
			old.add("%s: write %s", key, f.name)
		}
		if t := bytes.TrimSpace(raw); t[0] != f.value && !(f.value == 't' && t[0] == 'f') {
			return nil, nil, invalidf(o.field(f.name), "must be %s; got %s", kindName(f.value), jsonKind(raw))
		}
		def[f.lib] = raw
	}
	if _, ok := o.fields["type"]; !ok {
		return nil, nil, invalidf(o.field("type"), "is required: holiday, weekly, monthly, annual, daily or cron")
	}
	var warnings []Warning
	def["base"] = json.RawMessage("null")
	if base, ok := o.fields["base"]; ok {
		lib, w, err := toLib(base, o.field("base"))
		if err != nil {
			return nil, nil, err
		}
		def["base"], warnings = lib, w
	}
	lib, err := json.Marshal(def)
	if err != nil {
		return nil, nil, err
	}
	if len(old) > 0 {
		now, err := fromLib(lib)
		if err != nil {
			return nil, nil, invalidf(path, "%v", err)
		}
		warnings = append(old.warning(path, now), warnings...)
	}
	return lib, warnings, nil
}

// findCalendarField finds a calendar field by its name or old spelling.
func findCalendarField(key string) (calendarField, bool) {
	for _, f := range calendarFields {
		if key == f.name || key == f.lib {
			return f, true
		}
	}
	return calendarField{}, false
}

// calendarFieldNames lists the API's names of calendarFields.
func calendarFieldNames() string {
	names := make([]string, len(calendarFields))
	for i, f := range calendarFields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// kindName names a calendarField's value kind for messages.
func kindName(value byte) string {
	switch value {
	case '"':
		return "a string"
	case '[':
		return "an array"
	}
	return "true or false"
}

// apiFieldPath renames package calendar's field path ("base.excludedDates[2]")
// to the API's ("base.excluded_dates[2]").
func apiFieldPath(path string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		name, index, _ := strings.Cut(p, "[")
		if f, ok := findCalendarField(name); ok {
			name = f.name
		}
		if index != "" {
			name += "[" + index
		}
		parts[i] = name
	}
	return strings.Join(parts, ".")
}
