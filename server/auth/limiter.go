package auth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxLimiterKeys bounds the memory of a keyedLimiter: about 100 bytes a
// key, so a megabyte or two however many names or addresses try.
const maxLimiterKeys = 10000

// keyedLimiter is one token bucket per key (a user name, a client
// address), holding at most maxKeys keys. When it is full it forgets the keys
// whose buckets have refilled, which are the same as new ones; when none
// has, it forgets one at random. An attacker who fills it can thereby
// reset one bucket at a time, at the cost of maxKeys fresh keys.
type keyedLimiter struct {
	limit   rate.Limit
	burst   int
	maxKeys int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// newKeyedLimiter allows n events per period per key, in bursts of n.
func newKeyedLimiter(n int, per time.Duration, maxKeys int) *keyedLimiter {
	return &keyedLimiter{
		limit:   rate.Limit(float64(n) / per.Seconds()),
		burst:   n,
		maxKeys: maxKeys,
		buckets: make(map[string]*rate.Limiter),
	}
}

// allow takes one event from key's bucket at now and reports whether
// there was one.
func (l *keyedLimiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.evict(now)
		}
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[key] = b
	}
	return b.AllowN(now, 1)
}

// evict forgets the keys whose buckets are full at now, or one key if
// none is. l.mu is held.
func (l *keyedLimiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.maxKeys {
		return
	}
	for k := range l.buckets {
		delete(l.buckets, k)
		return
	}
}

// size returns how many keys the limiter holds.
func (l *keyedLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
