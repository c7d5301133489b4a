package api

import "time"

// ShardItems is a sharded firing with its items
// (GET /api/v1/executions/{id}/items, for any attempt of the firing's
// parent execution).
type ShardItems struct {
	// ExecutionID is the parent's current attempt, FirstID the firing.
	ExecutionID string `json:"execution_id"`
	FirstID     string `json:"first_id"`
	// Total counts the items; Round the re-runs of failed items so far.
	Total int `json:"total"`
	Round int `json:"round"`
	// State is creating, running, succeeded or failed.
	State string `json:"state"`
	// Remaining counts the items that have not ended, Failed those that
	// failed with no retry left.
	Remaining int `json:"remaining"`
	Failed    int `json:"failed"`
	// Error names the failed items of a failed firing.
	Error string      `json:"error,omitempty"`
	Items []ShardItem `json:"items"`
}

// ShardItem is one item of a sharded firing.
type ShardItem struct {
	// Index is the item's index, from 0.
	Index int `json:"index"`
	// State is pending, running (or retrying), succeeded or failed.
	State string `json:"state"`
	// ExecutionID is the item's latest attempt, FirstID its first; both
	// empty before it started.
	ExecutionID string `json:"execution_id,omitempty"`
	FirstID     string `json:"first_id,omitempty"`
	// NodeID is the node of its latest attempt.
	NodeID   string `json:"node_id,omitempty"`
	Attempts int    `json:"attempts"`
	// StartedTime and FinishedTime bound its latest attempt; Duration is
	// the time between them, as a Go duration.
	StartedTime  *time.Time `json:"started_time,omitempty"`
	FinishedTime *time.Time `json:"finished_time,omitempty"`
	Duration     string     `json:"duration,omitempty"`
	// Error is why its last attempt failed.
	Error string `json:"error,omitempty"`
}
