package api

import "time"

// MaxMaintenanceReasonLen is the longest reason a maintenance window takes,
// in bytes.
const MaxMaintenanceReasonLen = 500

// MaintenanceRequest is the body of POST /api/v1/maintenance: it pauses
// every job, or the jobs of one group, until DELETE /api/v1/maintenance.
type MaintenanceRequest struct {
	// Group, when set, limits the maintenance to the jobs of one job
	// group, which must hold at least one job; empty pauses every job.
	Group string `json:"group,omitempty"`
	// Reason says why, for the dashboard and the audit log; required.
	Reason string `json:"reason"`
}

// Maintenance answers GET /api/v1/maintenance: whether a maintenance
// window is on, and if so its scope, reason, who started it and when.
type Maintenance struct {
	// Active is false when no maintenance is on; the other fields are
	// then empty.
	Active bool `json:"active"`
	// Group is the job group paused; empty when every job is.
	Group  string `json:"group,omitempty"`
	Reason string `json:"reason,omitempty"`
	// By is the user or token that started it.
	By string `json:"by,omitempty"`
	// Since is when it started.
	Since *time.Time `json:"since,omitempty"`
}
