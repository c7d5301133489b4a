package engine

import "time"

// freeWorkers returns how many workers are free: neither running a job
// nor promised to a fired job waiting for one.
func (e *Engine) freeWorkers() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return max(e.cfg.Workers-e.busy, 0)
}

// queueWait is how long a fired job may be expected to wait for a worker.
// It is what lets a node with few workers fire many short jobs at once, in
// one store call, and what keeps a node whose workers run long jobs from
// firing triggers that other nodes could run at once.
const queueWait = 10 * time.Millisecond

// capacity returns how many due triggers the node may fire now: one per
// free worker, and beyond those as many as the workers are expected to
// start within queueWait, judging by the jobs' recent run times (none
// before a job ran).
func (e *Engine) capacity() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	free := max(e.cfg.Workers-e.busy, 0)
	if e.runs == 0 {
		return free
	}
	queued := max(e.busy-e.cfg.Workers, 0)
	extra := e.cfg.BatchSize
	if e.runTime > 0 {
		extra = int(min(int64(queueWait)*int64(e.cfg.Workers)/int64(e.runTime), int64(e.cfg.BatchSize)))
	}
	return free + max(extra-queued, 0)
}

// took records the run time of a job in the moving average.
func (e *Engine) took(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.runs == 0 {
		e.runTime = d
	} else {
		e.runTime += (d - e.runTime) / 8
	}
	e.runs++
}

// jobFinished counts a fired job as finished and tells the loop.
func (e *Engine) jobFinished() {
	e.mu.Lock()
	e.busy--
	e.mu.Unlock()
	select {
	case e.slotFree <- struct{}{}:
	default:
	}
}
