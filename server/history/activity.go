package history

import (
	"context"
	"database/sql"
	"time"
)

// Limits of [History.Activity].
const (
	// MaxActivityBuckets bounds the buckets one Activity call counts.
	MaxActivityBuckets = 10_000
	// ActivityLagSample bounds the executions whose lags make Activity's
	// percentiles: the newest of the window.
	ActivityLagSample = 20_000
)

// ActivityParams say what [History.Activity] counts.
type ActivityParams struct {
	// From and To bound the started time of the executions counted: From
	// inclusive, To exclusive. Both are required, From before To.
	From, To time.Time
	// Bucket is the width of a bucket: bucket i holds the executions that
	// started in [From + i×Bucket, From + (i+1)×Bucket). Required, at least
	// a millisecond, and at most MaxActivityBuckets buckets in the window;
	// the last bucket is cut at To.
	Bucket time.Duration
}

// Activity is what every job of the cluster did in a window, bucket by
// bucket; see [History.Activity].
type Activity struct {
	// From, To and Bucket are the params'.
	From, To time.Time
	Bucket   time.Duration
	// Buckets cover the window in order, empty ones included.
	Buckets []ActivityBucket
	// LagP50, LagP95 and LagP99 are percentiles (nearest rank) of the lag
	// of the newest ActivityLagSample executions of the window that have
	// one (see ActivityBucket.LagAvg); zero when none has. LagSampled is
	// how many executions that is.
	LagP50, LagP95, LagP99 time.Duration
	LagSampled             int
	// Running counts the executions running now, whenever they started.
	Running int
}

// ActivityBucket counts the executions that started in one bucket.
type ActivityBucket struct {
	// Start is the bucket's start.
	Start time.Time
	// Fires counts every execution that started in the bucket, whatever
	// its outcome (retries and manual runs included).
	Fires int
	// Succeeded counts those that succeeded, Failed those that failed,
	// timed out or were lost with their node. Running, cancelled and
	// skipped executions count in Fires only.
	Succeeded, Failed int
	// LagAvg and LagMax are the mean and the largest lag of the bucket's
	// executions that have one: started time minus scheduled time, for
	// the first attempt of a scheduled firing (not a manual run, a retry
	// or a recovery). Zero when none has one; Lagged counts those that do.
	LagAvg, LagMax time.Duration
	Lagged         int
}

// lagCase is the lag of an execution, NULL when it has none (see
// ActivityBucket.LagAvg).
const lagCase = "CASE WHEN scheduled_time IS NOT NULL AND attempt = 1 AND NOT manual AND NOT recovering " +
	"THEN started_time - scheduled_time END"

// failedOutcomes are the outcomes ActivityBucket.Failed counts.
const failedOutcomes = "('failed', 'timed_out', 'node_lost')"

// Activity counts the executions of every job that started in the
// window, bucket by bucket, and reads the lag percentiles of the window
// and the number of executions running now. The counting is one grouped
// query over the started-time index; buckets without executions are
// filled in with zeros.
func (h *History) Activity(ctx context.Context, p *ActivityParams) (*Activity, error) {
	n, err := p.validate()
	if err != nil {
		return nil, err
	}
	from, to, width := p.From.UnixNano(), p.To.UnixNano(), int64(p.Bucket)
	a := &Activity{From: p.From, To: p.To, Bucket: p.Bucket, Buckets: make([]ActivityBucket, n)}
	for i := range a.Buckets {
		a.Buckets[i].Start = time.Unix(0, from+int64(i)*width).UTC()
	}

	// started_time - From is never negative here, so the integer division
	// truncates toward the bucket's start on every dialect.
	stmt := h.st.SQL(`SELECT b, COUNT(*), SUM(ok), SUM(bad), COUNT(lag), SUM(lag), MAX(lag) FROM (
		SELECT (started_time - ?) {intdiv} ? AS b,
			CASE WHEN outcome = 'succeeded' THEN 1 ELSE 0 END AS ok,
			CASE WHEN outcome IN ` + failedOutcomes + ` THEN 1 ELSE 0 END AS bad,
			` + lagCase + ` AS lag
		FROM {p}server_executions
		WHERE started_time >= ? AND started_time < ? AND sched_name = ?
	) t GROUP BY b ORDER BY b`)
	rows, err := h.db.QueryContext(ctx, stmt, from, width, from, to, h.sched)
	if err != nil {
		return nil, dbErr("counting activity", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			b, fires, ok, bad, lagged int64
			lagSum                    sql.NullFloat64
			lagMax                    sql.NullInt64
		)
		if err := rows.Scan(&b, &fires, &ok, &bad, &lagged, &lagSum, &lagMax); err != nil {
			return nil, dbErr("counting activity", err)
		}
		if b < 0 || b >= int64(n) {
			continue // cannot happen: the WHERE clause bounds b
		}
		bk := &a.Buckets[b]
		bk.Fires, bk.Succeeded, bk.Failed, bk.Lagged = int(fires), int(ok), int(bad), int(lagged)
		if lagged > 0 && lagSum.Valid {
			bk.LagAvg = time.Duration(lagSum.Float64 / float64(lagged))
		}
		if lagMax.Valid {
			bk.LagMax = time.Duration(lagMax.Int64)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("counting activity", err)
	}
	rows.Close()

	lags, err := h.lags(ctx, from, to)
	if err != nil {
		return nil, err
	}
	a.LagSampled = len(lags)
	a.LagP50, a.LagP95, a.LagP99 = percentile(lags, 50), percentile(lags, 95), percentile(lags, 99)

	err = h.db.QueryRowContext(ctx, h.st.SQL(`SELECT COUNT(*) FROM {p}server_executions
		WHERE outcome = 'running' AND sched_name = ?`), h.sched).Scan(&a.Running)
	if err != nil {
		return nil, dbErr("counting running executions", err)
	}
	return a, nil
}

// lags returns the lags of the newest ActivityLagSample executions of
// [from, to) that have one.
func (h *History) lags(ctx context.Context, from, to int64) ([]time.Duration, error) {
	rows, err := h.db.QueryContext(ctx, h.st.SQL(`SELECT `+lagCase+` FROM {p}server_executions
		WHERE started_time >= ? AND started_time < ? AND sched_name = ?
		AND scheduled_time IS NOT NULL AND attempt = 1 AND NOT manual AND NOT recovering
		ORDER BY started_time DESC LIMIT ?`), from, to, h.sched, ActivityLagSample)
	if err != nil {
		return nil, dbErr("reading execution lags", err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var d sql.NullInt64
		if err := rows.Scan(&d); err != nil {
			return nil, dbErr("reading execution lags", err)
		}
		if d.Valid {
			out = append(out, time.Duration(d.Int64))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("reading execution lags", err)
	}
	return out, nil
}

// validate refuses params Activity cannot use, naming the field, and
// returns the number of buckets.
func (p *ActivityParams) validate() (int, error) {
	if p == nil {
		return 0, invalid("", "nil ActivityParams")
	}
	if err := checkTime("ActivityParams.From", p.From, true); err != nil {
		return 0, err
	}
	if err := checkTime("ActivityParams.To", p.To, true); err != nil {
		return 0, err
	}
	if !p.From.Before(p.To) {
		return 0, invalid("ActivityParams.From", "%s is not before ActivityParams.To %s",
			p.From.Format(time.RFC3339Nano), p.To.Format(time.RFC3339Nano))
	}
	if p.Bucket < time.Millisecond {
		return 0, invalid("ActivityParams.Bucket", "%s: want at least 1ms", p.Bucket)
	}
	span := p.To.Sub(p.From)
	n := span / p.Bucket
	if span%p.Bucket != 0 {
		n++
	}
	if n > MaxActivityBuckets {
		return 0, invalid("ActivityParams.Bucket", "%s makes %d buckets of %s: want at most %d", p.Bucket, n, span, MaxActivityBuckets)
	}
	return int(n), nil
}
