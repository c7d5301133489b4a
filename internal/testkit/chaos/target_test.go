package chaos

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// requestBody is what every job of the suite sends the target: the facts
// of its firing, from the job's body template.
const requestBody = `{"job": {{json .JobName}}, "scheduled": {{json .ScheduledTime}}, "execution_id": {{json .ExecutionID}},` +
	` "attempt": {{json .Attempt}}, "node": {{json .NodeID}}}`

// request is one request the target received.
type request struct {
	Job         string    `json:"job"`
	Scheduled   time.Time `json:"scheduled"`
	ExecutionID string    `json:"execution_id"`
	Attempt     int       `json:"attempt"`
	Node        string    `json:"node"`
	// Received is when the target read the request, on the test's clock.
	Received time.Time `json:"-"`
	// Status is what the target answers, and Answered when it did; zero
	// when the caller went away first.
	Status   int       `json:"-"`
	Answered time.Time `json:"-"`
}

// behaviour is how the target answers one job's requests.
type behaviour struct {
	// hold keeps the request this long before answering, or until the
	// caller goes away.
	hold time.Duration
	// failFirst answers 500 to attempt 1, so that a retry must run.
	failFirst bool
}

// target is the recording HTTP target of the suite's jobs.
type target struct {
	*httptest.Server
	jobs map[string]behaviour // by job name; read-only once serving

	mu       sync.Mutex
	requests []request
	bad      []string // requests it could not read
}

// newTarget starts a target answering the jobs with the behaviours given;
// the test's cleanup closes it.
func newTarget(t *testing.T, jobs map[string]behaviour) *target {
	t.Helper()
	tg := &target{jobs: jobs}
	tg.Server = httptest.NewServer(http.HandlerFunc(tg.serve))
	t.Cleanup(tg.Close)
	return tg
}

func (tg *target) serve(w http.ResponseWriter, r *http.Request) {
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		tg.mu.Lock()
		tg.bad = append(tg.bad, err.Error())
		tg.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Received = time.Now()
	b := tg.jobs[req.Job]
	req.Status = http.StatusOK
	if b.failFirst && req.Attempt == 1 {
		req.Status = http.StatusInternalServerError
	}
	tg.mu.Lock()
	i := len(tg.requests)
	tg.requests = append(tg.requests, req)
	tg.mu.Unlock()
	if b.hold > 0 {
		hold := time.NewTimer(b.hold)
		defer hold.Stop()
		select {
		case <-hold.C:
		case <-r.Context().Done():
			return
		}
	}
	w.WriteHeader(req.Status)
	tg.mu.Lock()
	tg.requests[i].Answered = time.Now()
	tg.mu.Unlock()
}

// received returns the requests so far, and the bodies it could not read.
func (tg *target) received() ([]request, []string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return slices.Clone(tg.requests), slices.Clone(tg.bad)
}

// count returns how many requests the target received.
func (tg *target) count() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return len(tg.requests)
}
