package api

import "time"

// ActivityQuery selects the window of GET /api/v1/activity. Zero fields
// take the defaults: the 6 hours before now, 1-minute buckets.
type ActivityQuery struct {
	// Since and Until bound the window (?since=, ?until=, RFC 3339): at
	// most 7 days, Since before Until.
	Since *time.Time `json:"since,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	// Bucket is the width of a bucket (?bucket=), a Go duration such as
	// "60s" or "5m", or a number of seconds: at least 10s, at most 2000
	// buckets in the window.
	Bucket string `json:"bucket,omitempty"`
}

// Activity answers GET /api/v1/activity: what every job of the cluster
// did in a window, bucket by bucket, for charts.
type Activity struct {
	// From and To are the window, Since and Until moved out to whole
	// buckets (multiples of the bucket width since the Unix epoch).
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// BucketSeconds is the width of a bucket.
	BucketSeconds int64 `json:"bucket_seconds"`
	// Buckets cover [From, To) in order; buckets without executions are
	// present with zeros.
	Buckets []ActivityBucket `json:"buckets"`
	// LagP50Ms, LagP95Ms and LagP99Ms are percentiles of the lag (see
	// ActivityBucket.LagAvgMs) of the window's newest 20,000 executions
	// that have one, in milliseconds; LagSampled is how many that is.
	LagP50Ms   float64 `json:"lag_p50_ms"`
	LagP95Ms   float64 `json:"lag_p95_ms"`
	LagP99Ms   float64 `json:"lag_p99_ms"`
	LagSampled int     `json:"lag_sampled"`
	// Running counts the executions running now across the cluster.
	Running int `json:"running"`
}

// ActivityBucket counts the executions that started in one bucket.
type ActivityBucket struct {
	// Start is the start of the bucket; it lasts BucketSeconds.
	Start time.Time `json:"start"`
	// Fires counts the executions that started, whatever their outcome
	// (running, retries and manual runs included).
	Fires int `json:"fires"`
	// Succeeded counts those that succeeded; Failed those that failed,
	// timed out or were lost with their node.
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	// LagAvgMs and LagMaxMs are the mean and largest lag, in
	// milliseconds, of the bucket's executions that have one: started
	// time minus scheduled time, for first attempts of scheduled firings
	// (not manual runs, retries or recoveries). 0 when none has.
	LagAvgMs float64 `json:"lag_avg_ms"`
	LagMaxMs float64 `json:"lag_max_ms"`
}

// UpcomingFiring is one entry of GET /api/v1/upcoming: a trigger's next
// fire time.
type UpcomingFiring struct {
	JobGroup     string `json:"job_group"`
	JobName      string `json:"job_name"`
	TriggerGroup string `json:"trigger_group"`
	TriggerName  string `json:"trigger_name"`
	// Time is the fire time, in the zone of the trigger's schedule.
	Time time.Time `json:"time"`
	// DST is set, as in FireTime, when the schedule's UTC offset changed
	// since the trigger's previous fire time in the list (or since now).
	DST bool `json:"dst,omitempty"`
}

// CalendarImport is the body of POST /api/v1/calendars/{name}/import: an
// iCalendar file whose events become the excluded dates of a holiday
// calendar.
type CalendarImport struct {
	// ICS is the iCalendar text (RFC 5545), such as a holidays file
	// exported by Google Calendar or Thunderbird. Required.
	ICS string `json:"ics"`
	// Description is the calendar's description; defaults to the file's
	// X-WR-CALNAME.
	Description string `json:"description,omitempty"`
	// TimeZone is the calendar's IANA time zone, in which timed events
	// and floating times are given their dates. Defaults to the file's
	// X-WR-TIMEZONE, else UTC.
	TimeZone string `json:"time_zone,omitempty"`
	// Years is the recurrence horizon: recurring events are expanded up
	// to the end of the year that many years ahead, the current year
	// counting as the first. 1 to 50; defaults to 5.
	Years int `json:"years,omitempty"`
	// DryRun parses and answers without storing anything.
	DryRun bool `json:"dry_run,omitempty"`
}

// CalendarImportResult answers a calendar import.
type CalendarImportResult struct {
	// Calendar is the holiday calendar stored (or, on a dry run, that
	// would be).
	Calendar Calendar `json:"calendar"`
	// Dates are its excluded dates, YYYY-MM-DD, in order.
	Dates []string `json:"dates"`
	// Events counts the events read from the file (cancelled ones left
	// out).
	Events int `json:"events"`
	// Created is set when the calendar did not exist before (on a dry
	// run: would be created).
	Created bool `json:"created,omitempty"`
	// DryRun echoes the request's: nothing was stored.
	DryRun bool `json:"dry_run,omitempty"`
}
