package dispatch

import (
	"context"
	"strings"
	"sync"
)

// notifyTopic is the topic of the nodes' notifications to each other
// (see announce), and notifyBuffer how many wait for the listener.
const (
	notifyTopic  = "dispatch"
	notifyBuffer = 1024
)

// listenedFresh is how many PollIntervals a Take goes without reading
// the executor's runs while its node hears the other nodes (see gap):
// every run handed to the executor and every cancel request is then
// announced, and the reads only make up for an announcement lost
// without a gap, which none should be.
const listenedFresh = 10

// announce tells the other nodes, on PostgreSQL, that this node handed
// executor the runs (or, with none, asked it to cancel one), so that the
// node its Take waits on takes them at once, by their keys, instead of
// finding them at its next read. The payload is "origin|executor|id,id";
// round robin hand-overs send theirs in their INSERT (see
// insertHandovers). A notification is only a wake-up: one lost (a failed
// statement, a listener's broken connection, a full buffer) costs the
// Take's next read, a PollInterval later.
func (s *Service) announce(ctx context.Context, executor string, runs ...string) {
	if s.channel == "" {
		return
	}
	payload := s.origin + "|" + executor + "|" + strings.Join(runs, ",")
	if _, err := s.db.ExecContext(ctx, s.st.SQL(`SELECT pg_notify(?, ?)`), s.channel, payload); err != nil && ctx.Err() == nil {
		s.log.Debug("cannot tell the other nodes of a hand-over", "executor_id", executor, "error", err)
	}
}

// listen hears the other nodes' announcements until ctx ends, on a
// goroutine of wg, waking the Takes of the executors they name; on
// databases other than PostgreSQL it does nothing.
func (s *Service) listen(ctx context.Context, wg *sync.WaitGroup) {
	if s.channel == "" {
		return
	}
	notes, err := s.st.Listen(ctx, notifyTopic, notifyBuffer, s.gap)
	if err != nil {
		s.log.Warn("cannot hear the other nodes' hand-overs; Takes find them by reading", "error", err)
		return
	}
	wg.Go(func() {
		for payload := range notes {
			s.heard(payload)
		}
	})
}

// gap notes whether this node hears the others' announcements (see
// listenedFresh), after a time it may have missed some: every Take
// waiting here, and the next of every executor, reads the executor's
// runs.
func (s *Service) gap(listening bool) {
	s.listening.Store(listening)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ts := range s.takes {
		ts.runs, ts.other = nil, true
		ts.wake()
	}
}

// heard wakes the Take of the executor an announcement names, unless this
// Service sent it.
func (s *Service) heard(payload string) {
	origin, rest, ok := strings.Cut(payload, "|")
	if !ok || origin == s.origin {
		return
	}
	executor, runs, ok := strings.Cut(rest, "|")
	if !ok || executor == "" {
		return
	}
	if runs == "" {
		s.wakePolls(executor)
		return
	}
	s.wakePolls(executor, strings.Split(runs, ",")...)
}
