package sqlstore

import "time"

// HoldInserts makes s queue the new jobs written from now on, as if a
// write were in flight, until release is called; queued tells how many
// wait. It lets a test gather a known batch. It first waits for the
// writer of earlier writes to end (a caller hears its write's outcome
// before the writer sees the queue empty).
func HoldInserts(s *Store) (queued func() int, release func()) {
	q := &s.inserts
	for {
		q.mu.Lock()
		if !q.writing {
			q.writing = true
			q.mu.Unlock()
			break
		}
		q.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	queued = func() int {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending)
	}
	release = func() { s.background.Go(s.writeQueued) }
	return queued, release
}
