package server

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/chime-scheduler/chime/server/workflow"
)

func TestTaskStartBatcherGathersWaitingStarts(t *testing.T) {
	t.Parallel()
	var b taskStartBatcher
	var (
		mu      sync.Mutex
		batches [][]string
	)
	release := make(chan struct{})
	write := func(starts []workflow.TaskStart) ([]workflow.StartVerdict, error) {
		mu.Lock()
		first := len(batches) == 0
		var ids []string
		for _, st := range starts {
			ids = append(ids, st.ExecutionID)
		}
		batches = append(batches, ids)
		mu.Unlock()
		if first {
			<-release // the others queue meanwhile
		}
		run := make([]workflow.StartVerdict, len(starts))
		for i, st := range starts {
			switch st.Task {
			case "refused":
				run[i] = workflow.StartRefused
			case "held":
				run[i] = workflow.StartHeld
			default:
				run[i] = workflow.StartRun
			}
		}
		return run, nil
	}
	start := func(exec, task string) (workflow.StartVerdict, error) {
		return b.start(workflow.TaskStart{TaskRef: workflow.TaskRef{Instance: "i", Task: task}, ExecutionID: exec}, write)
	}
	const n = 5
	got := make([]workflow.StartVerdict, n+1)
	var wg sync.WaitGroup
	wg.Go(func() {
		ok, err := start("x0", "t")
		if err != nil {
			t.Errorf("start(x0): %v", err)
		}
		got[0] = ok
	})
	// Wait until x0 writes, then queue n starts behind it.
	for {
		mu.Lock()
		writing := len(batches) == 1
		mu.Unlock()
		if writing {
			break
		}
		runtime.Gosched()
	}
	for i := 1; i <= n; i++ {
		task := "t"
		switch i {
		case 3:
			task = "refused"
		case 4:
			task = "held"
		}
		wg.Go(func() {
			ok, err := start(fmt.Sprintf("x%d", i), task)
			if err != nil {
				t.Errorf("start(x%d): %v", i, err)
			}
			got[i] = ok
		})
	}
	for {
		b.mu.Lock()
		queued := len(b.pending)
		b.mu.Unlock()
		if queued == n {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if len(batches) != 2 || len(batches[1]) != n {
		t.Fatalf("batches = %v, want [x0] then the %d starts that waited, together", batches, n)
	}
	run, refused, held := workflow.StartRun, workflow.StartRefused, workflow.StartHeld
	if want := []workflow.StartVerdict{run, run, run, refused, held, run}; !slices.Equal(got, want) {
		t.Errorf("results = %v, want %v", got, want)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.writing || len(b.pending) != 0 {
		t.Errorf("after the writes: writing %v, %d pending; want idle", b.writing, len(b.pending))
	}
}

func TestTaskStartBatcherPassesTheWriteError(t *testing.T) {
	t.Parallel()
	var b taskStartBatcher
	boom := errors.New("boom")
	v, err := b.start(workflow.TaskStart{ExecutionID: "x"}, func([]workflow.TaskStart) ([]workflow.StartVerdict, error) { return nil, boom })
	if v != workflow.StartRefused || !errors.Is(err, boom) {
		t.Fatalf("start = %v, %v; want refused, boom", v, err)
	}
}
