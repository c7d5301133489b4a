package server

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/auth"
)

// Config configures a Server. The zero value is usable: a node on the
// SQLite file chime.db serving its API on :8080.
type Config struct {
	// DatabaseURL selects the database that holds jobs, triggers, history,
	// users and settings: sqlite:PATH, postgres://… or mysql://… (see
	// sqlstore.Open). Servers sharing one PostgreSQL or MySQL database
	// form a cluster. Defaults to "sqlite:chime.db".
	DatabaseURL string
	// Listen is the TCP address Run serves the HTTP API on, such as
	// ":8080" or "127.0.0.1:0". Defaults to ":8080".
	Listen string
	// NodeID names this node in the cluster; it must be unique among live
	// nodes. Defaults to the host name and a random suffix.
	NodeID string
	// Workers bounds the jobs this node runs at once. Defaults to 10.
	Workers int
	// EnableShellJobs allows jobs of type "shell", which run commands on
	// the server's host. Defaults to false: shell jobs are refused when
	// saved and fail when they fire.
	EnableShellJobs bool
	// Retention bounds the execution history, pruned in the background by
	// every node. Defaults to 30 days, keeping each job's 1000 newest
	// executions however old.
	Retention Retention
	// Alert configures alert delivery: SMTP, default recipients,
	// templates and rate limit. Defaults to alert.Config's defaults: no
	// e-mail, no default recipients. Recipients set through the API
	// (AlertSettings) take precedence over DefaultEmails and
	// DefaultWebhooks.
	Alert alert.Config
	// Auth tunes sessions, password hashing and login rate limits. Its
	// Audit and Logger are the server's own. Defaults to package auth's
	// defaults.
	Auth auth.Options
	// DeadManInterval is how often jobs with a dead-man window are checked
	// for silence. Defaults to 1 minute.
	DeadManInterval time.Duration
	// MaxBodyBytes bounds an API request body. Defaults to 1 MiB.
	MaxBodyBytes int64
	// MaxOutputBytes bounds the output kept per execution. Defaults to 64
	// KiB.
	MaxOutputBytes int
	// MaxJobDataBytes bounds the JSON encoding of a job's data, its
	// settings included. Defaults to 1 MiB.
	MaxJobDataBytes int
	// CheckInInterval is how often the node renews its cluster lease.
	// Defaults to chime's default, 2s.
	CheckInInterval time.Duration
	// DeadAfter is how long a node may miss check-ins before the others
	// recover its work and record its running executions as node_lost.
	// Defaults to chime's default, 3 × CheckInInterval.
	DeadAfter time.Duration
	// MisfireThreshold is how late a trigger may fire before its misfire
	// instruction applies (and a misfire is recorded). Defaults to
	// chime's default, 60s.
	MisfireThreshold time.Duration
	// ShutdownTimeout bounds how long Run waits, once its context ends,
	// for API requests and running jobs to finish before cancelling them.
	// Defaults to 30s.
	ShutdownTimeout time.Duration
	// Logger receives the server's logs. Defaults to slog.Default().
	Logger *slog.Logger
}

// Retention says how much execution history is kept (see
// history.History.Prune): an execution is pruned once it is older than
// MaxAge and not among its job's PerJob newest, so that a rare job keeps
// its last runs and a frequent one its last MaxAge. Decisions are pruned
// by age alone; the audit log is kept.
type Retention struct {
	// MaxAge is how long an execution is kept after it started. Defaults
	// to 30 days.
	MaxAge time.Duration
	// PerJob is how many of each job's newest executions are kept however
	// old. Defaults to 1000.
	PerJob int
}

// Defaults of Config.
const (
	DefaultDatabaseURL     = "sqlite:chime.db"
	DefaultListen          = ":8080"
	DefaultMaxBodyBytes    = 1 << 20
	DefaultMaxOutputBytes  = 64 << 10
	DefaultMaxJobDataBytes = 1 << 20
	DefaultRetentionAge    = 30 * 24 * time.Hour
	DefaultRetentionPerJob = 1000
	DefaultDeadManInterval = time.Minute
	DefaultShutdownTimeout = 30 * time.Second
)

// ErrInvalidConfig is wrapped by the errors New returns for a Config it
// cannot use; the message names the field.
var ErrInvalidConfig = errors.New("server: invalid config")

// withDefaults returns a copy of c with defaults applied, or an error
// naming the first field it cannot use.
func (c Config) withDefaults() (Config, error) {
	if c.DatabaseURL == "" {
		c.DatabaseURL = DefaultDatabaseURL
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	for _, f := range []struct {
		name string
		v    int64
		def  int64
		set  func(int64)
	}{
		{"Workers", int64(c.Workers), 10, func(v int64) { c.Workers = int(v) }},
		{"MaxBodyBytes", c.MaxBodyBytes, DefaultMaxBodyBytes, func(v int64) { c.MaxBodyBytes = v }},
		{"MaxOutputBytes", int64(c.MaxOutputBytes), DefaultMaxOutputBytes, func(v int64) { c.MaxOutputBytes = int(v) }},
		{"MaxJobDataBytes", int64(c.MaxJobDataBytes), DefaultMaxJobDataBytes, func(v int64) { c.MaxJobDataBytes = int(v) }},
		{"Retention.PerJob", int64(c.Retention.PerJob), DefaultRetentionPerJob, func(v int64) { c.Retention.PerJob = int(v) }},
		{"Retention.MaxAge", int64(c.Retention.MaxAge), int64(DefaultRetentionAge), func(v int64) { c.Retention.MaxAge = time.Duration(v) }},
		{"DeadManInterval", int64(c.DeadManInterval), int64(DefaultDeadManInterval), func(v int64) { c.DeadManInterval = time.Duration(v) }},
		{"ShutdownTimeout", int64(c.ShutdownTimeout), int64(DefaultShutdownTimeout), func(v int64) { c.ShutdownTimeout = time.Duration(v) }},
	} {
		switch {
		case f.v < 0:
			return c, fmt.Errorf("%w: %s %d is negative", ErrInvalidConfig, f.name, f.v)
		case f.v == 0:
			f.set(f.def)
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{
		{"CheckInInterval", c.CheckInInterval}, {"DeadAfter", c.DeadAfter}, {"MisfireThreshold", c.MisfireThreshold},
	} {
		if f.v < 0 {
			return c, fmt.Errorf("%w: %s %s is negative", ErrInvalidConfig, f.name, f.v)
		}
	}
	return c, nil
}
