package engine

import (
	"sync"

	"github.com/chime-scheduler/chime/schedule"
)

// maxCachedSchedules bounds the decoded-schedule cache.
const maxCachedSchedules = 4096

// scheduleCache keeps decoded schedules by their stored bytes. Decoding a
// schedule (parsing a cron expression, loading a time zone) costs more than
// the rest of a firing, and schedules are immutable, so one decoded value
// serves every firing of every trigger with the same definition.
type scheduleCache struct {
	mu sync.Mutex
	m  map[string]schedule.Schedule
}

func (c *scheduleCache) decode(data []byte) (schedule.Schedule, error) {
	c.mu.Lock()
	sched, ok := c.m[string(data)]
	c.mu.Unlock()
	if ok {
		return sched, nil
	}
	sched, err := schedule.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedSchedules {
		c.m = make(map[string]schedule.Schedule)
	}
	c.m[string(data)] = sched
	return sched, nil
}
