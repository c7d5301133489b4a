package executor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chime-scheduler/chime/api"
)

// TestTakeResults checks which queued results a poll carries: only its
// executor's, oldest first, at most api.MaxPollResults and about
// maxPollResultsSize bytes; a result too large to ride on a poll is not
// queued.
func TestTakeResults(t *testing.T) {
	e := &Executor{}
	if _, ok := e.queueResult("x1", "big", api.ExecutorResult{Token: 1, Outcome: "succeeded", Output: strings.Repeat("o", maxRidingResultSize)}); ok {
		t.Error("a result larger than maxRidingResultSize was queued")
	}
	for i := range api.MaxPollResults + 10 {
		if _, ok := e.queueResult("x1", fmt.Sprintf("r%03d", i), api.ExecutorResult{Token: 1, Outcome: "succeeded"}); !ok {
			t.Fatalf("result %d not queued", i)
		}
	}
	if _, ok := e.queueResult("x0", "old-session", api.ExecutorResult{Token: 1, Outcome: "succeeded"}); !ok {
		t.Fatal("the old session's result not queued")
	}
	taken := e.takeResults("x1")
	if len(taken) != api.MaxPollResults || taken[0].result.Run != "r000" || taken[api.MaxPollResults-1].result.Run != fmt.Sprintf("r%03d", api.MaxPollResults-1) {
		t.Fatalf("took %d results (%s … ); want the first %d of x1, in order", len(taken), taken[0].result.Run, api.MaxPollResults)
	}
	rest := e.takeResults("x1")
	if len(rest) != 10 || rest[0].result.Run != fmt.Sprintf("r%03d", api.MaxPollResults) {
		t.Errorf("then took %d; want x1's 10 left", len(rest))
	}
	if left := e.takeResults("x1"); len(left) != 0 {
		t.Errorf("then took %d; want none", len(left))
	}
	if old := e.takeResults("x0"); len(old) != 1 || old[0].result.Run != "old-session" {
		t.Errorf("x0's poll took %+v; want its one result", old)
	}

	// Results of about 10 KiB each: a poll carries as many as fit in
	// maxPollResultsSize.
	out := strings.Repeat("o", 10<<10)
	for i := range 20 {
		e.queueResult("x1", fmt.Sprint(i), api.ExecutorResult{Token: 1, Outcome: "succeeded", Output: out})
	}
	size := 0
	taken = e.takeResults("x1")
	for _, p := range taken {
		size += p.size
	}
	if len(taken) == 0 || len(taken) == 20 || size > maxPollResultsSize {
		t.Errorf("took %d results of %d bytes together; want some, at most %d bytes", len(taken), size, maxPollResultsSize)
	}
}
