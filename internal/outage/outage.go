package outage

import "time"

// Tracker follows one run of consecutive failures. The zero value is not
// ready: set the three durations, or use New.
type Tracker struct {
	// Min is the wait after the first failure; each further failure
	// doubles it.
	Min time.Duration
	// Max bounds the wait.
	Max time.Duration
	// LogEvery spaces the failures worth logging while an outage lasts.
	LogEvery time.Duration

	since    time.Time // first failure of the current outage; zero when none
	lastLog  time.Time
	attempts int
}

// New returns a Tracker with the given bounds.
func New(minWait, maxWait, logEvery time.Duration) *Tracker {
	return &Tracker{Min: minWait, Max: maxWait, LogEvery: logEvery}
}

// Failure describes one failed attempt.
type Failure struct {
	// First reports that this failure started an outage.
	First bool
	// Log reports that this failure should be logged: it is the first, or
	// the last logged one is LogEvery old.
	Log bool
	// Attempts counts the failed attempts of the outage, this one included.
	Attempts int
	// Duration is how long the outage has lasted, from its first failure.
	Duration time.Duration
	// Backoff is how long to wait before the next attempt.
	Backoff time.Duration
}

// Fail records a failed attempt at now.
func (t *Tracker) Fail(now time.Time) Failure {
	f := Failure{First: t.since.IsZero()}
	if f.First {
		t.since, t.lastLog, t.attempts = now, now, 0
		f.Log = true
	} else if now.Sub(t.lastLog) >= t.LogEvery {
		t.lastLog = now
		f.Log = true
	}
	t.attempts++
	f.Attempts = t.attempts
	f.Duration = now.Sub(t.since)
	f.Backoff = t.backoff()
	return f
}

// backoff is Min doubled for every failure after the first, at most Max.
func (t *Tracker) backoff() time.Duration {
	d := t.Min
	for i := 1; i < t.attempts && d < t.Max; i++ {
		d *= 2
	}
	return min(d, t.Max)
}

// Recovery describes the end of an outage.
type Recovery struct {
	// Duration is the time from the outage's first failure to the success
	// that ended it.
	Duration time.Duration
	// Attempts counts the failed attempts of the outage.
	Attempts int
}

// Succeed records a successful attempt at now. It reports the outage it
// ended, or false when there was none.
func (t *Tracker) Succeed(now time.Time) (Recovery, bool) {
	if t.since.IsZero() {
		return Recovery{}, false
	}
	r := Recovery{Duration: now.Sub(t.since), Attempts: t.attempts}
	t.since, t.lastLog, t.attempts = time.Time{}, time.Time{}, 0
	return r, true
}

// Failing reports whether an outage is under way: the last attempt failed.
func (t *Tracker) Failing() bool { return !t.since.IsZero() }
