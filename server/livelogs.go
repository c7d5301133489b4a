package server

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/livelog"
)

// Live logs: while an execution runs, the lines its job logs reach the
// livelog table (server/livelog) within the buffer's interval, from which
// any node's API streams them (GET /api/v1/executions/{id}/logs/stream).
// The runner tees the lines its logRecorder keeps, numbered as the
// recorder numbers them, so the history's lines, once the execution
// ends, carry on the same numbering; the execution's end, once the
// history holds it, deletes its live rows.

// liveReadLimit bounds the lines one read of a stream returns.
const liveReadLimit = 500

// livePruneInterval is how often the leader deletes the live lines that
// outlived the history's retention.
const livePruneInterval = time.Hour

// streamLive registers the execution execID with the node's live log
// buffer and tees the lines rec keeps to it. The function it returns ends
// that once the history holds the execution's end: it drops what is
// pending and deletes the execution's live rows.
func (s *Server) streamLive(execID string, rec *logRecorder) (end func(context.Context)) {
	s.liveBuf.Begin(execID)
	rec.shared.teeTo(func(seq int64, l history.LogLine) {
		s.liveBuf.Add(execID, livelog.Line{Seq: seq, Time: l.Time, Level: l.Level, Message: l.Message, Attrs: l.Attrs})
	})
	return func(ctx context.Context) {
		del := s.liveBuf.Ended(execID)
		if del == nil {
			return // none of its lines reached the database: no statement, no deadline to set
		}
		rec, done := recordCtx(ctx)
		defer done()
		if err := del(rec); err != nil {
			s.log.Warn("cannot delete the live log lines of an ended execution; the pruner will", "execution_id", execID, "error", err)
		}
	}
}

// ExecutionLogs returns the log lines of execution id numbered after
// after, in order, and, once the execution has ended and no line is left,
// how it ended. While it runs, the lines come from the live log; once it
// has ended, from its history (and from the live log those its node
// appended before it died, for a node_lost execution). It answers
// not_found for an unknown execution.
func (s *Server) ExecutionLogs(ctx context.Context, id string, after int64) (*api.LiveLogs, error) {
	if after < 0 {
		return nil, invalidf("Last-Event-ID", "%d is negative: want the seq of the last line received", after)
	}
	// The outcome is read first: an execution read as ended has all its
	// lines in the live log (until its end deletes them) or its history.
	e, err := s.execution(ctx, id)
	if err != nil {
		return nil, err
	}
	lines, err := s.live.Read(ctx, id, after, liveReadLimit)
	if err != nil {
		return nil, err
	}
	out := &api.LiveLogs{Lines: make([]api.LiveLogLine, 0, len(lines))}
	for _, l := range lines {
		out.Lines = append(out.Lines, api.LiveLogLine{Seq: l.Seq, LogLine: api.LogLine{
			Time: l.Time, Level: l.Level, Message: l.Message, Attrs: l.Attrs,
		}})
		after = l.Seq
	}
	if e.Outcome == history.OutcomeRunning || len(lines) == liveReadLimit {
		return out, nil
	}
	out.Lines = append(out.Lines, historyTail(e.Logs, after)...)
	out.End = &api.LiveLogEnd{Outcome: string(e.Outcome), Error: e.Error}
	if !e.FinishedTime.IsZero() {
		out.End.FinishedTime = new(e.FinishedTime)
	}
	return out, nil
}

// omittedLine is the line history.Finish puts in place of the lines it
// cuts from the middle of a long log.
var omittedLine = regexp.MustCompile(`^\.\.\. ([0-9]+) log lines omitted \.\.\.$`)

// historyTail returns the lines of a finished execution's history
// numbered after after, numbered as the live log numbered them: the
// history keeps the lines the runner recorded, in order, except that
// beyond its limit it replaces the middle ones with a line saying how
// many it left out, which takes the number of the last of them.
func historyTail(logs []history.LogLine, after int64) []api.LiveLogLine {
	seqs := make([]int64, len(logs))
	for i := range logs {
		seqs[i] = int64(i) + 1
	}
	if head := (len(logs) - 1) / 2; len(logs) > 2 && logs[head].Level == "WARN" {
		if m := omittedLine.FindStringSubmatch(logs[head].Message); m != nil {
			if omitted, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				for i := head; i < len(logs); i++ {
					seqs[i] += omitted - 1
				}
			}
		}
	}
	var out []api.LiveLogLine
	for i, l := range logs {
		if seqs[i] > after {
			out = append(out, api.LiveLogLine{Seq: seqs[i], LogLine: api.LogLine{
				Time: l.Time, Level: l.Level, Message: l.Message, Attrs: l.Attrs,
			}})
		}
	}
	return out
}

// executorRetention is how long an executor whose lease lapsed stays
// listed (GET /api/v1/executors, the console) before pruneLiveLogs
// deletes it.
const executorRetention = 24 * time.Hour

// pruneLiveLogs deletes, every livePruneInterval on the cluster's leader,
// the live lines older than the history's retention: those of executions
// whose node died before it could end them; and the executors whose lease
// lapsed executorRetention ago and hold no run. It returns when ctx ends.
func (s *Server) pruneLiveLogs(ctx context.Context) {
	t := time.NewTicker(livePruneInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		view, err := s.sched.Cluster(ctx)
		if err != nil || view.Leader() != s.NodeID() {
			continue
		}
		n, err := s.live.Prune(ctx, s.now().Add(-s.cfg.Retention.MaxAge))
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			s.log.Warn("cannot prune the live log lines", "error", err)
		case n > 0:
			s.log.Info("pruned the live log lines of executions that never ended", "executions", n)
		}
		n, err = s.dispatch.PruneExecutors(ctx, s.now().Add(-executorRetention))
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			s.log.Warn("cannot prune the executors that left", "error", err)
		case n > 0:
			s.log.Info("pruned the executors whose lease lapsed a day ago", "executors", n)
		}
	}
}
