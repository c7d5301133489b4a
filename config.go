package chime

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/clock"
	"github.com/chime-scheduler/chime/store"
	"github.com/chime-scheduler/chime/store/memstore"
)

// Defaults of Config's zero fields.
const (
	DefaultWorkers          = 10
	DefaultMisfireThreshold = time.Minute
	DefaultCheckInInterval  = 2 * time.Second
	// DefaultDeadAfterCheckIns is DeadAfter's default, in check-in
	// intervals.
	DefaultDeadAfterCheckIns = 3
)

// Config configures a Scheduler. The zero value is usable: an in-memory
// store, ten workers and Quartz's defaults.
type Config struct {
	// Store keeps jobs, triggers and executions. Schedulers sharing one
	// database store form a cluster. Defaults to a new in-memory store.
	Store store.Store
	// NodeID names this node in the cluster; it must be unique among live
	// nodes. Defaults to the host name and a random suffix.
	NodeID string
	// Workers bounds the jobs this node runs at once. Defaults to 10.
	Workers int
	// MisfireThreshold is how late a trigger may fire before its misfire
	// instruction applies. Defaults to 60s.
	MisfireThreshold time.Duration
	// LookAhead is how long before their instant triggers are claimed.
	// Defaults to 2s.
	LookAhead time.Duration
	// IdleWait is the longest the firing loop goes without looking at the
	// store, which is how it notices changes made by other nodes. Defaults
	// to 1s.
	IdleWait time.Duration
	// CheckInInterval is how often the node renews its cluster lease.
	// Defaults to 2s.
	CheckInInterval time.Duration
	// DeadAfter is how long a node may miss check-ins before the others
	// recover its work. A node that could not renew its lease for that long
	// stops claiming triggers, starts none of the jobs it fired, cancels its
	// running jobs (their context's cause is ErrLeaseLost), and renews its
	// lease if no node declared it dead meanwhile, or joins again under a
	// new lease. A killed node's work is recovered within DeadAfter +
	// CheckInInterval of its death. Defaults to 3 × CheckInInterval.
	DeadAfter time.Duration
	// ReconcileInterval is how often the node asks the store to repair
	// states no live node explains: triggers claimed or executions running
	// under a lease that is gone, triggers blocked by no running execution.
	// A healthy cluster never needs a repair; each one is logged at Warn.
	// Defaults to 1 minute.
	ReconcileInterval time.Duration
	// ClockOffsetWarning is how far the node's clock may be from the
	// store's before a warning is logged. The node fires on the store's
	// time whatever the offset; the warning is for operators. It is logged
	// when the offset goes above the threshold and again when it moves by
	// more than the threshold. Defaults to 1s.
	ClockOffsetWarning time.Duration
	// ExecutionRetention is how long finished executions stay in the store.
	// Their unique (trigger, scheduled fire time) key guards against a second
	// firing of an instant for that long. Defaults to 24h.
	ExecutionRetention time.Duration
	// MaxJobDataBytes bounds the JSON encoding of a job's or a trigger's
	// data map; larger maps are refused with a ValidationError. Defaults to
	// 1 MiB.
	MaxJobDataBytes int
	// ExcludeJobTypes names the job types this node does not run, in a
	// cluster whose nodes do not all run the same types: the node claims
	// neither the firings nor the recoverable executions of jobs of these
	// types, which wait, WAITING, for a node that runs them (and misfire
	// if none does). The node may still register them, so that it can
	// store and manage such jobs. The store filters the claims, so
	// exactly-once firing is unchanged. A type a node neither registers
	// nor excludes is claimed like any other, and its firings fail with
	// "job type is not registered". Defaults to none: the node claims
	// every due trigger, at no cost for the filter.
	ExcludeJobTypes []string
	// Metrics, when set, receives the size and duration of the store
	// calls that claim and fire triggers. Defaults to none.
	Metrics Metrics
	// Clock is the node's clock; tests substitute their own. Defaults to the
	// system clock.
	Clock clock.Clock
	// Logger receives the scheduler's logs. Defaults to slog.Default().
	Logger *slog.Logger
}

// withDefaults returns a copy of cfg with the defaults of its zero fields,
// or a ValidationError naming the first invalid field.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Store == nil {
		cfg.Store = memstore.New(nil)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.NodeID == "" {
		cfg.NodeID = defaultNodeID()
	}
	if err := cfg.validate(); err != nil {
		return Config{}, err
	}
	cfg.Workers = cmp.Or(cfg.Workers, DefaultWorkers)
	cfg.MisfireThreshold = cmp.Or(cfg.MisfireThreshold, DefaultMisfireThreshold)
	cfg.CheckInInterval = cmp.Or(cfg.CheckInInterval, DefaultCheckInInterval)
	cfg.DeadAfter = cmp.Or(cfg.DeadAfter, DefaultDeadAfterCheckIns*cfg.CheckInInterval)
	cfg.ReconcileInterval = cmp.Or(cfg.ReconcileInterval, time.Minute)
	cfg.ClockOffsetWarning = cmp.Or(cfg.ClockOffsetWarning, time.Second)
	cfg.MaxJobDataBytes = cmp.Or(cfg.MaxJobDataBytes, 1<<20)
	cfg.ExcludeJobTypes = slices.Clone(cfg.ExcludeJobTypes)
	return cfg, nil
}

// validate returns a ValidationError naming the first invalid field of cfg.
func (cfg *Config) validate() error {
	if err := checkText("Config.NodeID", cfg.NodeID, MaxKeyLength); err != nil {
		return err
	}
	negative := []struct {
		field  string
		value  int64
		reason string
	}{
		{"Config.Workers", int64(cfg.Workers), "must not be negative"},
		{"Config.MisfireThreshold", int64(cfg.MisfireThreshold), "must not be negative"},
		{"Config.ReconcileInterval", int64(cfg.ReconcileInterval), "must be positive"},
		{"Config.ClockOffsetWarning", int64(cfg.ClockOffsetWarning), "must be positive"},
		{"Config.MaxJobDataBytes", int64(cfg.MaxJobDataBytes), "must not be negative"},
	}
	for _, n := range negative {
		if n.value < 0 {
			return &ValidationError{Field: n.field, Reason: n.reason}
		}
	}
	for i, typ := range cfg.ExcludeJobTypes {
		if typ == "" {
			return &ValidationError{Field: fmt.Sprintf("Config.ExcludeJobTypes[%d]", i), Reason: "must not be empty"}
		}
	}
	return nil
}

func defaultNodeID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "node"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}
