package alert

import (
	"time"

	"golang.org/x/time/rate"
)

// limitKey is what the rate limit counts alerts by: the job and kind, or
// the node and kind for a node lost while running nothing.
type limitKey struct {
	kind        Kind
	group, name string
	node        string
}

func limitKeyOf(ev Event) limitKey {
	k := limitKey{kind: ev.Kind, group: ev.JobGroup, name: ev.JobName}
	if k.group == "" && k.name == "" {
		k.node = ev.NodeID
	}
	return k
}

// limiter applies a RateLimit per key and counts what it suppresses. It
// is not safe for concurrent use; the Notifier guards it.
type limiter struct {
	cfg       RateLimit
	buckets   map[limitKey]*bucket
	lastSweep time.Time
}

type bucket struct {
	tokens     *rate.Limiter
	suppressed int
}

func newLimiter(cfg RateLimit) *limiter {
	return &limiter{cfg: cfg, buckets: make(map[limitKey]*bucket)}
}

// allow reports whether an alert for key may go out at now and, when it
// may, how many alerts for key were suppressed since the last one.
func (l *limiter) allow(key limitKey, now time.Time) (ok bool, suppressed int) {
	if l.cfg.Alerts < 0 {
		return true, 0
	}
	l.sweep(now)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{tokens: rate.NewLimiter(rate.Every(l.cfg.Per/time.Duration(l.cfg.Alerts)), l.cfg.Alerts)}
		l.buckets[key] = b
	}
	if !b.tokens.AllowN(now, 1) {
		b.suppressed++
		return false, 0
	}
	suppressed, b.suppressed = b.suppressed, 0
	return true, suppressed
}

// giveBack records that an alert allow let through was dropped after all,
// so that the next alert for key counts it and the ones it carried.
func (l *limiter) giveBack(key limitKey, suppressed int) {
	if b := l.buckets[key]; b != nil {
		b.suppressed += suppressed + 1
	}
}

// sweep forgets, at most once per period, the keys whose bucket is full
// again and which have nothing suppressed: they behave like new keys.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.cfg.Per {
		return
	}
	l.lastSweep = now
	for key, b := range l.buckets {
		if b.suppressed == 0 && b.tokens.TokensAt(now) >= float64(l.cfg.Alerts) {
			delete(l.buckets, key)
		}
	}
}
