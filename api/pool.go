package api

import "time"

// Pool is a concurrency pool: a limit on how many executions of the jobs
// that name it (Job.Pool) run at once, across the cluster. PUT
// /api/v1/pools/{name} creates or replaces one.
type Pool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Limit is how many executions of the pool's jobs may run at once,
	// 1 to 100000.
	Limit int `json:"limit"`
	// Running counts the slots held now, Waiting the firings waiting for
	// one. Read-only.
	Running int `json:"running"`
	Waiting int `json:"waiting"`
	// Jobs lists the jobs that name the pool, as "group/name". Read-only.
	Jobs []string `json:"jobs,omitempty"`
	// Created and Updated are set by the server. Read-only.
	Created *time.Time `json:"created,omitempty"`
	Updated *time.Time `json:"updated,omitempty"`
}
