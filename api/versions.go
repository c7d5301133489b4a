package api

import "time"

// Kinds of change a job version records (JobVersion.Kind).
const (
	VersionCreated    = "created"
	VersionUpdated    = "updated"
	VersionDeleted    = "deleted"
	VersionRolledBack = "rolled_back"
)

// JobVersion is one recorded version of a job: GET
// /api/v1/jobs/{group}/{name}/versions lists them, newest first, and
// .../versions/{number} returns one with its spec.
type JobVersion struct {
	// Number numbers the job's versions from 1 in the order they were
	// recorded; it goes on across a delete and a new job of the same key.
	Number int64 `json:"number"`
	// JobVersion is the job's own version (its ETag) after the change; 0
	// for a delete.
	JobVersion int64 `json:"job_version,omitempty"`
	// Kind is created, updated, deleted or rolled_back.
	Kind string `json:"kind"`
	// Actor is who made the change.
	Actor string `json:"actor"`
	// Time is when.
	Time time.Time `json:"time"`
	// RolledBackFrom is the number of the version a rollback restored.
	RolledBackFrom int64 `json:"rolled_back_from,omitempty"`
	// Masked lists the JSON pointers (RFC 6901) of Spec's values that
	// were masked when the version was recorded, as the API masks them
	// for viewers: a version never holds a credential in clear. A rollback
	// keeps the job's current value at each of them.
	Masked []string `json:"masked,omitempty"`
	// Spec is the job as it was, without its status, version and the
	// triggers' firing state; only in the answer for one version.
	Spec *Job `json:"spec,omitempty"`
}

// JobVersionList is a page of a job's versions, newest first.
type JobVersionList struct {
	Versions []JobVersion `json:"versions"`
	// Next continues the list; empty on the last page.
	Next string `json:"next,omitempty"`
}

// JobVersionQuery pages a job's versions.
type JobVersionQuery struct {
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// JobVersionDiff is the difference between two versions of a job: a
// unified diff of their specs as indented JSON, keys in a fixed order.
type JobVersionDiff struct {
	// From and To are the versions compared; From is 0 when To is the
	// job's first version kept, compared with nothing.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	// Diff is the unified diff; empty when the specs are the same.
	Diff string `json:"diff"`
}
