package server

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/jobs/egress"
	"github.com/chime-scheduler/chime/jobs/shelljob"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/auth"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/server/jobversion"
	"github.com/chime-scheduler/chime/server/outbox"
	"github.com/chime-scheduler/chime/server/secret"
	"github.com/chime-scheduler/chime/server/sso"
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
	// the server's host as the server's user; it requires ShellAllow.
	// Only callers with the shell capability may create, change or delete
	// them. Defaults to false: shell jobs are refused when saved, and this
	// node never claims their firings, which run on the nodes of the
	// cluster that enable them.
	EnableShellJobs bool
	// ShellAllow lists the programs shell jobs may run: absolute paths or
	// globs over them (path/filepath.Match syntax), or "*" alone for any
	// program. A job whose program is not listed is refused when saved and
	// fails when it fires. With an allow-list other than "*", argv[0] must
	// be the program's absolute path, and scripts ("shell") run only when
	// /bin/sh is listed. Required with EnableShellJobs; there is no
	// default, so that enabling shell jobs is a decision about what they
	// may run.
	ShellAllow []string
	// Egress says which hosts and addresses HTTP jobs and alert webhooks
	// may reach (see package egress for the rules), checked on every
	// connection they make, redirects included; they use no proxy,
	// whatever HTTP_PROXY says. A job or default webhook whose URL names a
	// refused address is refused when saved, naming the field. Alert.Egress
	// defaults to the same policy. Defaults to refusing loopback,
	// link-local (cloud metadata), private and other internal addresses,
	// and "localhost", and allowing the rest; Egress.AllowSetting defaults
	// to "egress_allow", the chime server setting of Egress.Allow.
	Egress egress.Config
	// Retention bounds the execution history, pruned in the background by
	// every node. Defaults to 30 days, keeping each job's 1000 newest
	// executions however old and its 10000 newest at most.
	Retention Retention
	// JobVersions is how many versions of each job are kept (see
	// RollbackJob): each change of a job records one, and the oldest are
	// deleted as new ones come. Defaults to 50.
	JobVersions int
	// Alert configures alert delivery: SMTP, default recipients,
	// templates and rate limit. Defaults to alert.Config's defaults: no
	// e-mail, no default recipients. Recipients set through the API
	// (AlertSettings) take precedence over DefaultEmails,
	// DefaultWebhooks, DefaultSlack, DefaultTeams and DefaultPagerDuty.
	Alert alert.Config
	// AdminPassword is the password BootstrapAdmin gives the first admin
	// when the database has no user: at least auth.MinPasswordLength
	// characters. It changes nothing once a user exists. Defaults to a
	// random password, which BootstrapAdmin returns to be shown once.
	AdminPassword string
	// SecretKey encrypts the values of secrets ({{secret "name"}} in job
	// and alert templates): the base64 of 32 random bytes, as
	// secret.GenerateKey returns. Every node of a cluster must have the
	// same key, and a value set under one key cannot be read under
	// another. Defaults to none: setting a secret is refused, and a job
	// that refers to one fails when it fires, each saying how to
	// configure a key.
	SecretKey string
	// Auth tunes sessions, password hashing and login rate limits. Its
	// Audit and Logger are the server's own. Defaults to package auth's
	// defaults.
	Auth auth.Options
	// SSO, when set, lets users sign in through an OpenID Connect
	// provider, beside local users (see package sso): the console's login
	// page offers "Sign in with <SSO.Name>", and /auth/oidc/login and
	// /auth/oidc/callback are served. Its Logger is the server's own.
	// Defaults to nil: local users only.
	SSO *sso.Config
	// DisableJobMetrics turns off the per-job series of /metrics
	// (chime_job_executions_total by job and outcome, and
	// chime_job_last_success_timestamp_seconds), whose number grows with
	// the jobs: up to seven per job that ran on the node. Defaults to
	// false: they are on.
	DisableJobMetrics bool
	// DeadManInterval is how often every node checks the jobs with a
	// dead-man window for silence and those with a running-longer-than
	// limit for long runs; each alert is claimed in the database by one
	// node. Defaults to 1 minute.
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
	// Defaults to 2s, chime's default.
	CheckInInterval time.Duration
	// DeadAfter is how long a node may miss check-ins before the others
	// recover its work and record its running executions as node_lost.
	// Defaults to 3 × CheckInInterval, chime's default.
	DeadAfter time.Duration
	// MisfireThreshold is how late a trigger may fire before its misfire
	// instruction applies (and a misfire is recorded). Defaults to 60s,
	// chime's default.
	MisfireThreshold time.Duration
	// ExecutorLease is how long an executor keeps its runs without a
	// heartbeat (on the database's clock); its runs are lost once it
	// lapses. At least 1s. Defaults to 15s.
	ExecutorLease time.Duration
	// AlertLease is how long a node holds an alert it claimed from the
	// alert outbox before another node may send it (on the database's
	// clock): the longest a node's death delays an alert. More than twice
	// Alert.Timeout. Defaults to 1m.
	AlertLease time.Duration
	// ShutdownTimeout bounds how long Run waits, once its context ends,
	// for API requests and running jobs to finish before cancelling them.
	// Defaults to 30s.
	ShutdownTimeout time.Duration
	// Logger receives the server's logs. Defaults to slog.Default().
	Logger *slog.Logger

	// configureScheduler, when set, edits the configuration of the
	// scheduler before it is created: tests wrap its store to count the
	// store calls of a request.
	configureScheduler func(*chime.Config)
}

// Retention says how much execution history is kept. Each job's
// executions, ranked newest first (running ones included):
//
//   - the PerJob newest are kept however old (the floor, so that a rare
//     job keeps its last runs and its last success);
//   - those beyond the MaxPerJob newest are pruned however young (the cap,
//     so that a job firing every second keeps MaxPerJob rows, not MaxAge's
//     2.6 million);
//   - the others are pruned once older than MaxAge;
//   - running executions are never pruned.
//
// PerJob must not be more than MaxPerJob. Decisions are pruned by age
// alone; the audit log is kept. history.History.Prune applies the rule.
type Retention struct {
	// MaxAge is how long an execution is kept after it started, unless
	// it is among its job's PerJob newest. Defaults to 30 days.
	MaxAge time.Duration
	// PerJob is how many of each job's newest executions are kept however
	// old. Defaults to 1000, or to MaxPerJob when that is less.
	PerJob int
	// MaxPerJob is how many of each job's newest executions are kept at
	// most, however young. Defaults to 10000; NoRetentionCap (-1) sets no
	// cap.
	MaxPerJob int
}

// Defaults of Config.
const (
	DefaultDatabaseURL        = "sqlite:chime.db"
	DefaultListen             = ":8080"
	DefaultMaxBodyBytes       = 1 << 20
	DefaultMaxOutputBytes     = 64 << 10
	DefaultMaxJobDataBytes    = 1 << 20
	DefaultRetentionAge       = 30 * 24 * time.Hour
	DefaultRetentionPerJob    = 1000
	DefaultRetentionMaxPerJob = 10000
	DefaultJobVersions        = jobversion.DefaultKeep
	DefaultDeadManInterval    = time.Minute
	DefaultShutdownTimeout    = 30 * time.Second
	DefaultCheckInInterval    = chime.DefaultCheckInInterval
	DefaultMisfireThreshold   = chime.DefaultMisfireThreshold
	DefaultExecutorLease      = dispatch.DefaultLease
	DefaultAlertLease         = outbox.DefaultLease
)

// NoRetentionCap as Retention.MaxPerJob sets no cap: every execution
// younger than Retention.MaxAge is kept.
const NoRetentionCap = -1

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
	if c.AdminPassword != "" {
		if err := auth.ValidatePassword(c.AdminPassword); err != nil {
			var e *api.Error
			if errors.As(err, &e) {
				return c, fmt.Errorf("%w: AdminPassword %s", ErrInvalidConfig, e.Message)
			}
			return c, fmt.Errorf("%w: AdminPassword: %w", ErrInvalidConfig, err)
		}
	}
	if c.EnableShellJobs {
		if _, err := shelljob.NewAllowList(c.ShellAllow); err != nil {
			return c, fmt.Errorf("%w: ShellAllow (required with EnableShellJobs): %w", ErrInvalidConfig, err)
		}
	}
	c.ShellAllow = slices.Clone(c.ShellAllow)
	if c.Egress.AllowSetting == "" {
		c.Egress.AllowSetting = "egress_allow"
	}
	if c.SecretKey != "" {
		if _, err := secret.ParseKey(c.SecretKey); err != nil {
			return c, fmt.Errorf("%w: SecretKey: %w", ErrInvalidConfig, err)
		}
	}
	if err := c.Retention.applyDefaults(); err != nil {
		return c, err
	}
	switch {
	case c.JobVersions < 0:
		return c, fmt.Errorf("%w: JobVersions %d is negative", ErrInvalidConfig, c.JobVersions)
	case c.JobVersions == 0:
		c.JobVersions = DefaultJobVersions
	}
	for _, f := range []struct {
		name string
		v    int64
		def  int64
		set  func(int64)
	}{
		{"Workers", int64(c.Workers), chime.DefaultWorkers, func(v int64) { c.Workers = int(v) }},
		{"MaxBodyBytes", c.MaxBodyBytes, DefaultMaxBodyBytes, func(v int64) { c.MaxBodyBytes = v }},
		{"MaxOutputBytes", int64(c.MaxOutputBytes), DefaultMaxOutputBytes, func(v int64) { c.MaxOutputBytes = int(v) }},
		{"MaxJobDataBytes", int64(c.MaxJobDataBytes), DefaultMaxJobDataBytes, func(v int64) { c.MaxJobDataBytes = int(v) }},
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
		{"ExecutorLease", c.ExecutorLease}, {"AlertLease", c.AlertLease},
	} {
		if f.v < 0 {
			return c, fmt.Errorf("%w: %s %s is negative", ErrInvalidConfig, f.name, f.v)
		}
	}
	// chime's own defaults, applied here so that the configuration the
	// server reports (Server.Config) holds the values it runs with.
	if c.CheckInInterval == 0 {
		c.CheckInInterval = DefaultCheckInInterval
	}
	if c.DeadAfter == 0 {
		c.DeadAfter = chime.DefaultDeadAfterCheckIns * c.CheckInInterval
	}
	if c.MisfireThreshold == 0 {
		c.MisfireThreshold = DefaultMisfireThreshold
	}
	if c.AlertLease == 0 {
		c.AlertLease = DefaultAlertLease
	}
	if timeout := c.Alert.WithDefaults().Timeout; c.AlertLease <= 2*timeout {
		return c, fmt.Errorf("%w: AlertLease %s: want more than twice Alert.Timeout (%s)", ErrInvalidConfig, c.AlertLease, timeout)
	}
	switch {
	case c.ExecutorLease == 0:
		c.ExecutorLease = DefaultExecutorLease
	case c.ExecutorLease < time.Second:
		return c, fmt.Errorf("%w: ExecutorLease %s: want at least 1s", ErrInvalidConfig, c.ExecutorLease)
	}
	return c, nil
}

// applyDefaults sets r's per-job defaults and checks PerJob against
// MaxPerJob, naming the field it cannot use.
func (r *Retention) applyDefaults() error {
	switch {
	case r.MaxPerJob < NoRetentionCap:
		return fmt.Errorf("%w: Retention.MaxPerJob %d: want %d (no cap), 0 (the default) or more",
			ErrInvalidConfig, r.MaxPerJob, NoRetentionCap)
	case r.MaxPerJob == 0:
		r.MaxPerJob = DefaultRetentionMaxPerJob
	}
	capped := r.MaxPerJob != NoRetentionCap
	switch {
	case r.PerJob < 0:
		return fmt.Errorf("%w: Retention.PerJob %d is negative", ErrInvalidConfig, r.PerJob)
	case r.PerJob == 0:
		r.PerJob = DefaultRetentionPerJob
		if capped {
			r.PerJob = min(r.PerJob, r.MaxPerJob)
		}
	case capped && r.PerJob > r.MaxPerJob:
		return fmt.Errorf("%w: Retention.PerJob %d is more than Retention.MaxPerJob %d",
			ErrInvalidConfig, r.PerJob, r.MaxPerJob)
	}
	return nil
}
