package sqlstore

// HoldInserts makes s queue the new jobs written from now on, as if a
// write were in flight, until release is called; queued tells how many
// wait. It lets a test gather a known batch.
func HoldInserts(s *Store) (queued func() int, release func()) {
	q := &s.inserts
	q.mu.Lock()
	q.writing = true
	q.mu.Unlock()
	queued = func() int {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.pending)
	}
	release = func() { s.background.Go(s.writeQueued) }
	return queued, release
}
