package server

import (
	"sync"

	"github.com/chime-scheduler/chime/server/workflow"
)

// maxTaskStartBatch bounds the starts of workflow tasks one transaction
// records, and so the instance rows it holds locked.
const maxTaskStartBatch = 64

// taskStartBatcher records the starts of workflow tasks that this node's
// workers ask for at the same time in one transaction
// (workflow.Store.TasksStarted): group commit, as a database does with its
// log. A start that finds no write under way writes at once, alone; one
// that comes while a write is under way waits for it and goes in the next,
// with every other start that came meanwhile, written by the first of them
// to come. So a start waits at most for one write before its own, no
// goroutine is needed, and under load N starts cost one commit instead of
// N. Each start is decided under its instance's lock exactly as alone.
// The zero value is ready for use.
type taskStartBatcher struct {
	mu sync.Mutex
	// pending are the starts waiting for the next write, oldest first.
	pending []*taskStartReq
	// writing is true while a start writes a batch; the next one is
	// written by pending[0] once it is woken with lead set.
	writing bool
}

// taskStartReq is one start waiting in a taskStartBatcher.
type taskStartReq struct {
	start workflow.TaskStart
	// wake is closed when the start was written (run and err are set) or
	// when it is to write the next batch (lead is set).
	wake chan struct{}
	lead bool
	run  workflow.StartVerdict
	err  error
}

// start records st in a batch written by write, which must return one
// verdict per start, and returns st's: whether its execution may run.
func (b *taskStartBatcher) start(st workflow.TaskStart, write func([]workflow.TaskStart) ([]workflow.StartVerdict, error)) (workflow.StartVerdict, error) {
	req := &taskStartReq{start: st, wake: make(chan struct{})}
	b.mu.Lock()
	b.pending = append(b.pending, req)
	lead := !b.writing
	b.writing = true
	b.mu.Unlock()
	if !lead {
		<-req.wake
		if !req.lead {
			return req.run, req.err
		}
	}
	b.mu.Lock()
	batch := b.pending[:min(len(b.pending), maxTaskStartBatch)]
	b.pending = b.pending[len(batch):]
	b.mu.Unlock()
	starts := make([]workflow.TaskStart, len(batch))
	for i, r := range batch {
		starts[i] = r.start
	}
	run, err := write(starts)
	for i, r := range batch {
		r.err = err
		r.run = workflow.StartRefused
		if err == nil && i < len(run) {
			r.run = run[i]
		}
		if r != req {
			close(r.wake)
		}
	}
	b.mu.Lock()
	if len(b.pending) > 0 {
		next := b.pending[0]
		next.lead = true
		close(next.wake)
	} else {
		b.writing = false
	}
	b.mu.Unlock()
	return req.run, req.err
}
