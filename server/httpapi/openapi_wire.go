package httpapi

import (
	"maps"
	"reflect"
	"slices"

	"github.com/chime-scheduler/chime/api"
)

// rawField returns the schema of a json.RawMessage field of the api whose
// form the API fixes (package api/wire): a trigger's schedule and a
// calendar's definition. It returns nil for every other field.
func (b *schemaBuilder) rawField(t reflect.Type, f reflect.StructField) *schema {
	switch {
	case t == reflect.TypeFor[api.Trigger]() && f.Name == "Schedule":
		return b.oneOf("Schedule", "Schedule", "kind",
			"When a trigger fires, one object per kind. Durations are Go duration strings (\"90s\", \"1h30m\"); "+
				"fields the kind does not have are refused. The previous release's spellings (repeat_interval_ms, "+
				"upper-case units) are accepted with a warning until the next release.",
			map[string]*schema{
				"cron": object("A Quartz cron expression in a time zone.", []string{"kind", "expression"}, map[string]*schema{
					"kind":       constant("cron"),
					"expression": {Type: "string", Description: "Quartz syntax, seconds first; 5-field cron and @daily descriptors too.", Example: "0 30 2 ? * MON-FRI"},
					"time_zone":  timeZone(),
				}),
				"once": object("Fires once, at the trigger's start_time (when it is saved, if none).", []string{"kind"}, map[string]*schema{
					"kind": constant("once"),
				}),
				"simple": object("Fires at the trigger's start_time, then every interval.", []string{"kind", "interval"}, map[string]*schema{
					"kind":         constant("simple"),
					"interval":     duration("The time between firings: positive, whole milliseconds.", "5m"),
					"repeat_count": count("How many times it fires after the first; absent: for ever."),
				}),
				"calendar_interval": object("Fires every interval units by the calendar of its time zone: a month is a calendar month.",
					[]string{"kind", "interval", "unit"}, map[string]*schema{
						"kind":      constant("calendar_interval"),
						"interval":  {Type: "integer", Format: "int32", Minimum: new(1), Description: "How many units between firings."},
						"unit":      {Type: "string", Enum: []string{"second", "minute", "hour", "day", "week", "month", "year"}},
						"time_zone": timeZone(),
						"preserve_hour_of_day_across_daylight_savings": {Type: "boolean", Description: "Keep the wall-clock hour across DST changes."},
						"skip_day_if_hour_does_not_exist":              {Type: "boolean", Description: "With the above: skip a day whose hour a DST gap removes."},
					}),
				"daily_time_interval": object("Fires every interval between two times of day, on some days of the week.",
					[]string{"kind", "interval", "start_time_of_day", "end_time_of_day"}, map[string]*schema{
						"kind":              constant("daily_time_interval"),
						"interval":          duration("The time between firings within a day: whole seconds, at most 24h.", "15m"),
						"start_time_of_day": timeOfDay("The first firing of each day."),
						"end_time_of_day":   timeOfDay("No firing after it."),
						"days_of_week": {Type: "array", Description: "The days it fires on; absent: every day.",
							Items: &schema{Type: "string", Enum: []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}}},
						"repeat_count": count("How many times it fires after the first, in all; absent: for ever."),
						"time_zone":    timeZone(),
					}),
				"fixed_delay": object("Fires at the trigger's start_time, then delay after each run ended: runs never overlap, "+
					"and a slow run pushes the next one back. The next fire time is unknown while a run lasts.",
					[]string{"kind", "delay"}, map[string]*schema{
						"kind":  constant("fixed_delay"),
						"delay": duration("The time from the end of a run to the start of the next: positive, whole milliseconds.", "30s"),
					}),
			})
	case t == reflect.TypeFor[api.Calendar]() && f.Name == "Calendar":
		return b.calendarDefinition()
	}
	return nil
}

// calendarDefinition is the schema of a calendar's definition, whose base
// is another definition.
func (b *schemaBuilder) calendarDefinition() *schema {
	const name = "CalendarDefinition"
	if _, ok := b.schemas[name]; ok {
		return &schema{Ref: "#/components/schemas/" + name}
	}
	b.schemas[name] = &schema{} // placeholder: a base refers to it
	calendar := func(typ, desc string, required []string, fields map[string]*schema) *schema {
		props := map[string]*schema{
			"type":        constant(typ),
			"time_zone":   timeZone(),
			"description": {Type: "string"},
			"base": {AllOf: []*schema{{Ref: "#/components/schemas/" + name}}, Nullable: true,
				Description: "A calendar whose exclusions this one adds to, or null."},
		}
		for k, v := range fields {
			props[k] = v
		}
		return object(desc, append([]string{"type", "time_zone"}, required...), props)
	}
	dayList := func(desc string, lo, hi int) *schema {
		return &schema{Type: "array", Description: desc, Items: &schema{Type: "integer", Format: "int32", Minimum: &lo, Maximum: &hi}}
	}
	return b.oneOf(name, "Calendar", "type",
		"An exclusion calendar: the times it excludes, in its time zone, and those of its base. Fields of another type are refused. "+
			"The previous release's spellings (tz, camelCase fields) are accepted with a warning until the next release.",
		map[string]*schema{
			"holiday": calendar("holiday", "Excludes whole dates.", nil, map[string]*schema{
				"excluded_dates": {Type: "array", Items: &schema{Type: "string", Format: "date"}},
			}),
			"weekly": calendar("weekly", "Excludes days of the week.", nil, map[string]*schema{
				"excluded_days_of_week": dayList("1 is Sunday, 7 Saturday.", 1, 7),
			}),
			"monthly": calendar("monthly", "Excludes days of the month.", nil, map[string]*schema{
				"excluded_days_of_month": dayList("Days of the month.", 1, 31),
			}),
			"annual": calendar("annual", "Excludes the same days every year.", nil, map[string]*schema{
				"excluded_days": {Type: "array", Items: &schema{Type: "string", Pattern: `^\d\d-\d\d$`, Description: "MM-DD"}},
			}),
			"daily": calendar("daily", "Excludes a time range of every day, or all but it.", []string{"range_start", "range_end"}, map[string]*schema{
				"range_start":       timeOfDay("Start of the range, HH:MM[:SS[.mmm]]."),
				"range_end":         timeOfDay("End of the range, HH:MM[:SS[.mmm]]."),
				"invert_time_range": {Type: "boolean", Description: "Exclude all but the range."},
			}),
			"cron": calendar("cron", "Excludes the seconds a Quartz cron expression matches.", []string{"expression"}, map[string]*schema{
				"expression": {Type: "string", Example: "* * 0-5 ? * *"},
			}),
		})
}

// oneOf registers one schema per kind, named after the kind and suffix
// ("CronSchedule"), and name: one of them, told apart by the property
// prop. It returns a reference to name.
func (b *schemaBuilder) oneOf(name, suffix, prop, desc string, kinds map[string]*schema) *schema {
	ref := func(n string) string { return "#/components/schemas/" + n }
	d := &discriminator{PropertyName: prop, Mapping: make(map[string]string)}
	s := &schema{Description: desc, Discriminator: d}
	for _, kind := range slices.Sorted(maps.Keys(kinds)) {
		kindName := camel(kind) + suffix
		b.schemas[kindName] = kinds[kind]
		d.Mapping[kind] = ref(kindName)
		s.OneOf = append(s.OneOf, &schema{Ref: ref(kindName)})
	}
	b.schemas[name] = s
	return &schema{Ref: ref(name)}
}

// object is an object schema that refuses fields it does not list.
func object(desc string, required []string, props map[string]*schema) *schema {
	return &schema{Type: "object", Description: desc, Required: required, Properties: props, AdditionalProperties: false}
}

func constant(v string) *schema { return &schema{Type: "string", Enum: []string{v}} }

func timeZone() *schema {
	return &schema{Type: "string", Description: "An IANA time zone; absent: UTC.", Example: "Europe/Berlin"}
}

func duration(desc, example string) *schema {
	return &schema{Type: "string", Description: desc + ` A Go duration string: a sequence of numbers with units h, m, s, ms ("1h30m").`, Example: example}
}

func count(desc string) *schema {
	return &schema{Type: "integer", Format: "int32", Minimum: new(0), Description: desc}
}

func timeOfDay(desc string) *schema {
	return &schema{Type: "string", Description: desc, Pattern: `^\d\d:\d\d(:\d\d(\.\d{1,3})?)?$`, Example: "09:00:00"}
}

// camel turns a snake_case kind into CamelCase: "daily_time_interval" is
// "DailyTimeInterval".
func camel(s string) string {
	out := make([]byte, 0, len(s))
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_':
			upper = true
			continue
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		}
		upper = false
		out = append(out, c)
	}
	return string(out)
}
