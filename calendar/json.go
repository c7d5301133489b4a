package calendar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/internal/tz"
)

// Calendar types as named by the "type" field of a definition.
const (
	TypeHoliday = "holiday"
	TypeWeekly  = "weekly"
	TypeMonthly = "monthly"
	TypeAnnual  = "annual"
	TypeDaily   = "daily"
	TypeCron    = "cron"
)

// maxDepth bounds the length of a calendar chain in a definition.
const maxDepth = 32

// definition is the JSON form of a calendar:
//
//	{"type": "daily", "tz": "Europe/Berlin", "rangeStart": "09:00:00.000",
//	 "rangeEnd": "17:00:00.000", "invertTimeRange": false, "base": null}
//
// The type-specific fields are pointers so that a field given for the wrong
// type can be told from an absent one.
type definition struct {
	Type                string          `json:"type"`
	TZ                  string          `json:"tz"`
	Description         string          `json:"description,omitempty"`
	ExcludedDates       *[]string       `json:"excludedDates,omitempty"`
	ExcludedDaysOfWeek  *[]int          `json:"excludedDaysOfWeek,omitempty"`
	ExcludedDaysOfMonth *[]int          `json:"excludedDaysOfMonth,omitempty"`
	ExcludedDays        *[]string       `json:"excludedDays,omitempty"`
	RangeStart          *string         `json:"rangeStart,omitempty"`
	RangeEnd            *string         `json:"rangeEnd,omitempty"`
	InvertTimeRange     *bool           `json:"invertTimeRange,omitempty"`
	Expr                *string         `json:"expr,omitempty"`
	Base                json.RawMessage `json:"base"`
}

// Marshal encodes a calendar chain in the JSON definition format that
// Unmarshal reads. Every calendar of the chain must be one of this
// package's types.
func Marshal(c Calendar) ([]byte, error) {
	def, err := toDefinition(c, 0)
	if err != nil {
		return nil, err
	}
	return json.Marshal(def)
}

// toDefinition converts one calendar of a chain, at depth, and its base.
func toDefinition(c Calendar, depth int) (*definition, error) {
	if depth >= maxDepth {
		return nil, fmt.Errorf("calendar: chain is longer than %d calendars", maxDepth)
	}
	if c == nil {
		return nil, errors.New("calendar: nil calendar")
	}
	def := &definition{Description: c.Description()}
	switch c := c.(type) {
	case *Holiday:
		dates := []string{}
		for _, d := range c.Dates() {
			dates = append(dates, d.String())
		}
		def.Type, def.TZ, def.ExcludedDates = TypeHoliday, c.loc.String(), &dates
	case *Weekly:
		days := []int{}
		for _, d := range c.Days() {
			days = append(days, int(d)+1)
		}
		def.Type, def.TZ, def.ExcludedDaysOfWeek = TypeWeekly, c.loc.String(), &days
	case *Monthly:
		days := append([]int{}, c.Days()...)
		def.Type, def.TZ, def.ExcludedDaysOfMonth = TypeMonthly, c.loc.String(), &days
	case *Annual:
		days := []string{}
		for _, md := range c.Days() {
			days = append(days, md.String())
		}
		def.Type, def.TZ, def.ExcludedDays = TypeAnnual, c.loc.String(), &days
	case *Daily:
		start, end, invert := FormatTimeOfDay(c.start), FormatTimeOfDay(c.end), c.invert
		def.Type, def.TZ = TypeDaily, c.loc.String()
		def.RangeStart, def.RangeEnd, def.InvertTimeRange = &start, &end, &invert
	case *Cron:
		expr := c.text
		def.Type, def.TZ, def.Expr = TypeCron, c.loc.String(), &expr
	default:
		return nil, fmt.Errorf("calendar: cannot encode calendar type %T", c)
	}
	def.Base = json.RawMessage("null")
	if base := c.Base(); base != nil {
		bd, err := toDefinition(base, depth+1)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(bd)
		if err != nil {
			return nil, err
		}
		def.Base = raw
	}
	return def, nil
}

// Unmarshal decodes and validates a calendar chain in the JSON definition
// format:
//
//	{"type": "holiday", "tz": "America/New_York", "excludedDates": ["2024-07-04"], "base": null}
//	{"type": "weekly",  "tz": "UTC", "excludedDaysOfWeek": [1, 7], "base": null}   (1 = Sunday … 7 = Saturday)
//	{"type": "monthly", "tz": "UTC", "excludedDaysOfMonth": [29, 30, 31], "base": null}
//	{"type": "annual",  "tz": "UTC", "excludedDays": ["12-25", "02-29"], "base": null}
//	{"type": "daily",   "tz": "UTC", "rangeStart": "09:00:00.000", "rangeEnd": "17:00:00.000", "invertTimeRange": false, "base": null}
//	{"type": "cron",    "tz": "UTC", "expr": "* * 0-5 ? * *", "base": null}
//
// "base" is another definition or null, and "description" is optional.
// Unknown fields, fields of another type and invalid values are refused
// with a *FieldError naming the field.
func Unmarshal(data []byte) (Calendar, error) {
	return unmarshal(data, "", 0)
}

// unmarshal decodes the definition at path (empty for the top) and depth.
func unmarshal(data []byte, path string, depth int) (Calendar, error) {
	field := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	wrap := func(err error) error {
		if path == "" {
			return err
		}
		return prefixField(path, err)
	}
	if depth >= maxDepth {
		return nil, fieldErrorf(field("base"), "chain is longer than %d calendars", maxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var def definition
	if err := dec.Decode(&def); err != nil {
		return nil, fmt.Errorf("calendar: decode %s: %w", orTop(path), err)
	}
	if dec.More() {
		return nil, fmt.Errorf("calendar: decode %s: trailing data", orTop(path))
	}
	if err := def.checkFields(); err != nil {
		return nil, wrap(err)
	}
	loc, err := tz.Load(def.TZ)
	if err != nil {
		return nil, &FieldError{Field: field("tz"), Err: fmt.Errorf("%w: %w", ErrUnknownTimeZone, err)}
	}
	var base Calendar
	if len(def.Base) > 0 && !bytes.Equal(bytes.TrimSpace(def.Base), []byte("null")) {
		base, err = unmarshal(def.Base, field("base"), depth+1)
		if err != nil {
			return nil, err
		}
	}
	cal, err := def.build(loc, base)
	if err != nil {
		return nil, wrap(err)
	}
	return cal, nil
}

// orTop names a definition path in decode errors.
func orTop(path string) string {
	if path == "" {
		return "definition"
	}
	return path
}

// checkFields refuses a type-specific field given for another type, and a
// required field that is missing.
func (d *definition) checkFields() error {
	given := map[string]bool{
		"excludedDates":       d.ExcludedDates != nil,
		"excludedDaysOfWeek":  d.ExcludedDaysOfWeek != nil,
		"excludedDaysOfMonth": d.ExcludedDaysOfMonth != nil,
		"excludedDays":        d.ExcludedDays != nil,
		"rangeStart":          d.RangeStart != nil,
		"rangeEnd":            d.RangeEnd != nil,
		"invertTimeRange":     d.InvertTimeRange != nil,
		"expr":                d.Expr != nil,
	}
	var allowed, required []string
	switch d.Type {
	case TypeHoliday:
		allowed = []string{"excludedDates"}
	case TypeWeekly:
		allowed = []string{"excludedDaysOfWeek"}
	case TypeMonthly:
		allowed = []string{"excludedDaysOfMonth"}
	case TypeAnnual:
		allowed = []string{"excludedDays"}
	case TypeDaily:
		allowed = []string{"rangeStart", "rangeEnd", "invertTimeRange"}
		required = []string{"rangeStart", "rangeEnd"}
	case TypeCron:
		allowed = []string{"expr"}
		required = []string{"expr"}
	default:
		return fieldErrorf("type", "unknown calendar type %q", d.Type)
	}
	for _, name := range sortedKeys(given) {
		if given[name] && !slices.Contains(allowed, name) {
			return fieldErrorf(name, "not a field of a %s calendar", d.Type)
		}
	}
	for _, name := range required {
		if !given[name] {
			return fieldErrorf(name, "required for a %s calendar", d.Type)
		}
	}
	return nil
}

// build constructs the calendar the definition describes.
func (d *definition) build(loc *time.Location, base Calendar) (Calendar, error) {
	switch d.Type {
	case TypeHoliday:
		var dates []Date
		for i, s := range deref(d.ExcludedDates) {
			date, err := ParseDate(s)
			if err != nil {
				return nil, &FieldError{Field: fmt.Sprintf("excludedDates[%d]", i), Err: err}
			}
			dates = append(dates, date)
		}
		c, err := NewHoliday(loc, dates...)
		if err != nil {
			return nil, err
		}
		return c.WithBase(base).WithDescription(d.Description), nil
	case TypeWeekly:
		var days []time.Weekday
		for i, n := range deref(d.ExcludedDaysOfWeek) {
			if n < 1 || n > 7 {
				return nil, fieldErrorf(fmt.Sprintf("excludedDaysOfWeek[%d]", i), "invalid day of week %d, want 1 (Sunday) to 7 (Saturday)", n)
			}
			days = append(days, time.Weekday(n-1))
		}
		c, err := NewWeekly(loc, days...)
		if err != nil {
			return nil, err
		}
		return c.WithBase(base).WithDescription(d.Description), nil
	case TypeMonthly:
		c, err := NewMonthly(loc, deref(d.ExcludedDaysOfMonth)...)
		if err != nil {
			return nil, err
		}
		return c.WithBase(base).WithDescription(d.Description), nil
	case TypeAnnual:
		var days []MonthDay
		for i, s := range deref(d.ExcludedDays) {
			md, err := ParseMonthDay(s)
			if err != nil {
				return nil, &FieldError{Field: fmt.Sprintf("excludedDays[%d]", i), Err: err}
			}
			days = append(days, md)
		}
		c, err := NewAnnual(loc, days...)
		if err != nil {
			return nil, err
		}
		return c.WithBase(base).WithDescription(d.Description), nil
	case TypeDaily:
		start, err := ParseTimeOfDay(*d.RangeStart)
		if err != nil {
			return nil, &FieldError{Field: "rangeStart", Err: err}
		}
		end, err := ParseTimeOfDay(*d.RangeEnd)
		if err != nil {
			return nil, &FieldError{Field: "rangeEnd", Err: err}
		}
		invert := d.InvertTimeRange != nil && *d.InvertTimeRange
		c, err := NewDaily(loc, start, end, invert)
		if err != nil {
			return nil, err
		}
		return c.WithBase(base).WithDescription(d.Description), nil
	case TypeCron:
		c, err := NewCron(loc, *d.Expr)
		if err != nil {
			return nil, err
		}
		return c.WithBase(base).WithDescription(d.Description), nil
	}
	return nil, fieldErrorf("type", "unknown calendar type %q", d.Type)
}

// deref returns the slice p points to, or nil.
func deref[T any](p *[]T) []T {
	if p == nil {
		return nil
	}
	return *p
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
