package api

// MaxJobBatch is the most jobs one JobBatch may hold.
const MaxJobBatch = 1000

// JobBatch is the body of POST /api/v1/jobs/batch: new jobs, created
// together in one step or, when any of them is refused, not at all.
type JobBatch struct {
	// Jobs are the new jobs, each as POST /api/v1/jobs takes it: 1 to
	// MaxJobBatch of them, with keys that are free and differ.
	Jobs []Job `json:"jobs"`
}

// JobBatchResult answers POST /api/v1/jobs/batch.
type JobBatchResult struct {
	// Created lists the jobs created, in the order of the request.
	Created []CreatedJob `json:"created"`
}

// CreatedJob is one job of a JobBatchResult.
type CreatedJob struct {
	Group string `json:"group"`
	Name  string `json:"name"`
	// Warnings answer deprecated spellings the job used, as Job.Warnings.
	Warnings []string `json:"warnings,omitempty"`
}
