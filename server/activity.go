package server

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/history"
)

// Limits of Activity.
const (
	defaultActivityWindow = 6 * time.Hour
	maxActivityWindow     = 7 * 24 * time.Hour
	defaultActivityBucket = time.Minute
	minActivityBucket     = 10 * time.Second
	maxActivityBuckets    = 2000
)

// Activity counts what every job of the cluster did in a window, bucket by
// bucket, for the console's charts. The window defaults to the 6 hours
// before now and is moved out to whole buckets, so that successive calls
// chart the same bucket boundaries.
func (s *Server) Activity(ctx context.Context, q api.ActivityQuery) (*api.Activity, error) {
	bucket := defaultActivityBucket
	if q.Bucket != "" {
		var err error
		if bucket, err = parseBucket(q.Bucket); err != nil {
			return nil, err
		}
	}
	var since, until time.Time
	switch {
	case q.Until != nil:
		until = *q.Until
	default:
		until = s.now()
	}
	switch {
	case q.Since != nil:
		since = *q.Since
	default:
		since = until.Add(-defaultActivityWindow)
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"since", since}, {"until", until}} {
		if y := f.t.UTC().Year(); y < 1678 || y > 2261 {
			return nil, invalidf(f.name, "%s is out of range (years 1678 to 2261)", f.t.Format(time.RFC3339))
		}
	}
	if !since.Before(until) {
		return nil, invalidf("until", "must be after since (%s), got %s", since.Format(time.RFC3339Nano), until.Format(time.RFC3339Nano))
	}
	if w := until.Sub(since); w > maxActivityWindow {
		return nil, invalidf("since", "the window from since to until is %s long; at most 7 days (168h) are allowed", w)
	}
	from := floorTo(since, bucket)
	to := floorTo(until, bucket)
	if to.Before(until) {
		to = to.Add(bucket)
	}
	if n := int64(to.Sub(from) / bucket); n > maxActivityBuckets {
		return nil, invalidf("bucket", "%s makes %d buckets of the window; at most %d are allowed: choose a wider bucket or a shorter window",
			bucket, n, maxActivityBuckets)
	}
	a, err := s.history.Activity(ctx, &history.ActivityParams{From: from, To: to, Bucket: bucket})
	if err != nil {
		return nil, historyErr(err)
	}
	out := &api.Activity{
		From: a.From, To: a.To, BucketSeconds: int64(bucket / time.Second),
		Buckets:  make([]api.ActivityBucket, len(a.Buckets)),
		LagP50Ms: millis(a.LagP50), LagP95Ms: millis(a.LagP95), LagP99Ms: millis(a.LagP99), LagSampled: a.LagSampled,
		Running: a.Running,
	}
	for i, b := range a.Buckets {
		out.Buckets[i] = api.ActivityBucket{
			Start: b.Start, Fires: b.Fires, Succeeded: b.Succeeded, Failed: b.Failed,
			LagAvgMs: millis(b.LagAvg), LagMaxMs: millis(b.LagMax),
		}
	}
	return out, nil
}

// parseBucket reads ?bucket=: a Go duration ("60s", "5m") or a number of
// seconds, whole seconds, at least minActivityBucket.
func parseBucket(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.ParseInt(v, 10, 64)
		if nerr != nil || n > int64(maxActivityWindow/time.Second) {
			return 0, invalidf("bucket", "%q is not a duration such as 60s, 5m or 1h, nor a number of seconds", v)
		}
		d = time.Duration(n) * time.Second
	}
	switch {
	case d < minActivityBucket:
		return 0, invalidf("bucket", "%q is shorter than the least bucket, %s", v, minActivityBucket)
	case d%time.Second != 0:
		return 0, invalidf("bucket", "%q is not a whole number of seconds", v)
	}
	return d, nil
}

// floorTo moves t back to a multiple of d since the Unix epoch.
func floorTo(t time.Time, d time.Duration) time.Time {
	ns := t.UnixNano()
	r := ns % int64(d)
	if r < 0 {
		r += int64(d)
	}
	return time.Unix(0, ns-r).UTC()
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
