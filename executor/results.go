package executor

import (
	"sync/atomic"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// How results ride on polls (see deliverQueued).
const (
	// pollLinger is how long the poll loop waits, after a poll gave it
	// runs, for those runs to end before it polls again: runs that end
	// quickly then send their results with that poll.
	pollLinger = 2 * time.Millisecond
	// resultLinger is how long an ended run's result waits for a poll to
	// take it before it is sent alone.
	resultLinger = 5 * time.Millisecond
	// maxRidingResultSize and maxPollResultsSize bound, by an estimate of
	// their encoded size, a result that rides on a poll and all the
	// results of one poll, well below the server's request bound (1 MiB
	// by default): a larger result is sent alone.
	maxRidingResultSize = 16 << 10
	maxPollResultsSize  = 128 << 10
	// resultsPollWait bounds how long a poll that carries results waits
	// on the server for work: the runs whose results it carries wait for
	// its answer (see pollWithResults).
	resultsPollWait = time.Second
)

// pendingResult is an ended run's result waiting for a poll to send it.
type pendingResult struct {
	// executor is the executor ID the run was handed to: only its polls
	// carry the result (after a lost lease, the next session's do not).
	executor string
	result   api.ExecutorRunResult
	size     int
	// sent gets one value from the poll that took the result: whether
	// the server answered (recorded it, or refused it for its lease). On
	// false, the run sends it alone.
	sent chan bool
}

// sizeEstimate is about how many bytes r takes in a poll's JSON.
func sizeEstimate(r *api.ExecutorResult) int {
	n := 96 + len(r.Error) + len(r.Output)
	for _, l := range r.Logs {
		n += 64 + len(l.Level) + len(l.Message) + 64*len(l.Attrs)
	}
	return n
}

// queueResult makes res, run's result, wait for a poll. It reports false,
// queueing nothing, when res is too large to ride on a poll.
func (e *Executor) queueResult(executorID, run string, res api.ExecutorResult) (*pendingResult, bool) {
	size := sizeEstimate(&res)
	if size > maxRidingResultSize {
		return nil, false
	}
	p := &pendingResult{
		executor: executorID, result: api.ExecutorRunResult{Run: run, Result: res},
		size: size, sent: make(chan bool, 1),
	}
	e.mu.Lock()
	e.pending = append(e.pending, p)
	e.mu.Unlock()
	return p, true
}

// unqueueResult takes p back from the queue. It reports false when a poll
// took it first.
func (e *Executor) unqueueResult(p *pendingResult) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, q := range e.pending {
		if q == p {
			e.pending = append(e.pending[:i], e.pending[i+1:]...)
			return true
		}
	}
	return false
}

// takeResults takes the queued results of executor executorID that one
// of its polls carries, oldest first.
func (e *Executor) takeResults(executorID string) []*pendingResult {
	e.mu.Lock()
	defer e.mu.Unlock()
	var taken []*pendingResult
	size := 0
	kept := e.pending[:0]
	for _, p := range e.pending {
		if p.executor != executorID || len(taken) == api.MaxPollResults || size+p.size > maxPollResultsSize {
			kept = append(kept, p)
			continue
		}
		size += p.size
		taken = append(taken, p)
	}
	clear(e.pending[len(kept):])
	e.pending = kept
	return taken
}

// deliverQueued sends p, an ended run's queued result: with a poll when
// one takes it within resultLinger, alone otherwise, or when the poll that
// took it failed.
func (e *Executor) deliverQueued(p *pendingResult) {
	t := time.NewTimer(resultLinger)
	defer t.Stop()
	select {
	case answered := <-p.sent:
		if answered {
			return
		}
	case <-t.C:
		if !e.unqueueResult(p) && <-p.sent {
			return
		}
	}
	e.report(p.executor, p.result.Run, p.result.Result)
}

// pollResults returns the results of taken, for a poll.
func pollResults(taken []*pendingResult) []api.ExecutorRunResult {
	if len(taken) == 0 {
		return nil
	}
	out := make([]api.ExecutorRunResult, len(taken))
	for i, p := range taken {
		out[i] = p.result
	}
	return out
}

// resultsAnswered tells the runs of taken whether the poll that carried
// their results got an answer, and logs the results it refused.
func (e *Executor) resultsAnswered(taken []*pendingResult, work *api.ExecutorWork) {
	if work != nil {
		for _, r := range work.Refused {
			e.log.Warn("the server refused the result: the run is no longer leased to this executor", "run_id", r.Run, "reason", r.Reason)
		}
	}
	for _, p := range taken {
		p.sent <- work != nil
	}
}

// batchEnd tells the poll loop when the runs one poll gave it have all
// ended.
type batchEnd struct {
	left atomic.Int32
	done chan struct{}
}

func newBatchEnd(n int) *batchEnd {
	b := &batchEnd{done: make(chan struct{})}
	b.left.Store(int32(n))
	return b
}

// end counts one run of the batch ended.
func (b *batchEnd) end() {
	if b.left.Add(-1) == 0 {
		close(b.done)
	}
}
