package api

import "time"

// Routing is how a job of type "executor" picks one executor among the
// live executors of its group that advertise its handler and carry its
// labels. The pick happens in the database, when the run is handed over.
type Routing string

// Routing strategies.
const (
	// RoutingFirst picks the executor that registered first.
	RoutingFirst Routing = "first"
	// RoutingLast picks the executor that registered last.
	RoutingLast Routing = "last"
	// RoutingRoundRobin picks the executors in turn, in the order of
	// their IDs. The default.
	RoutingRoundRobin Routing = "round_robin"
	// RoutingRandom picks one at random.
	RoutingRandom Routing = "random"
	// RoutingConsistentHash picks by rendezvous hashing of the job's key,
	// or of the parameter named by ExecutorTarget.HashKey: the same key
	// goes to the same executor while it lives, and an executor leaving
	// moves only its own keys.
	RoutingConsistentHash Routing = "consistent_hash"
	// RoutingLRU picks the executor used least recently.
	RoutingLRU Routing = "lru"
	// RoutingLFU picks the executor used least often.
	RoutingLFU Routing = "lfu"
	// RoutingFailover picks the first executor, in registration order,
	// that has not missed a heartbeat: an executor whose last heartbeat
	// is older than a heartbeat interval is passed over while another is
	// fresh.
	RoutingFailover Routing = "failover"
	// RoutingBusyOver picks the first executor, in registration order,
	// with no run in progress; when all are busy, the least busy.
	RoutingBusyOver Routing = "busy_over"
	// RoutingShardingBroadcast: every live executor of the group gets
	// one item of each firing, index/total its position among them and
	// their number at the firing (see docs/sharding.md).
	RoutingShardingBroadcast Routing = "sharding_broadcast"
)

// ExecutorTarget says where a job of type "executor" runs.
type ExecutorTarget struct {
	// Group names the executors that may run the job: 1 to 200 bytes.
	Group string `json:"group"`
	// Handler is the name the executor's code registered the work under
	// ("invoice.close").
	Handler string `json:"handler"`
	// Routing picks one executor of the group. Defaults to round_robin.
	Routing Routing `json:"routing,omitempty"`
	// Labels an executor must carry (all of them, with these values) to
	// be picked, such as {"region": "eu"}.
	Labels map[string]string `json:"labels,omitempty"`
	// HashKey names the parameter whose value consistent_hash hashes;
	// empty hashes the job's key. Only for consistent_hash.
	HashKey string `json:"hash_key,omitempty"`
	// AllowUnregistered saves the job even though no executor of the
	// group has ever registered, or none advertised the handler: for a
	// cluster set up before its executors start (chime apply of a fresh
	// cluster). Without it such a job is refused when saved. Its runs
	// record no_executor until an executor serves them.
	AllowUnregistered bool `json:"allow_unregistered,omitempty"`
}

// ExecutorRegister is what an executor sends to register
// (POST /api/v1/executors).
type ExecutorRegister struct {
	// Group is the executor's group; the token must serve it.
	Group string `json:"group"`
	// Instance names the process for people ("billing-7f9c", a host
	// name); not unique.
	Instance string `json:"instance,omitempty"`
	// Version is the executor's own version, shown to people.
	Version string `json:"version,omitempty"`
	// Labels are what jobs can require of it ({"region": "eu"}).
	Labels map[string]string `json:"labels,omitempty"`
	// Handlers are the names of the work it runs: 1 to 1,000.
	Handlers []string `json:"handlers"`
}

// ExecutorRegistration answers a registration.
type ExecutorRegistration struct {
	// ID identifies the executor in every later call.
	ID string `json:"id"`
	// Lease is how long the executor keeps its runs without a heartbeat,
	// as a Go duration ("15s"), on the database's clock.
	Lease string `json:"lease"`
	// HeartbeatInterval is how often it should send a heartbeat.
	HeartbeatInterval string `json:"heartbeat_interval"`
}

// ExecutorRunRef names one run leased to an executor, with the fencing
// token of its lease.
type ExecutorRunRef struct {
	ID    string `json:"id"`
	Token int64  `json:"token"`
}

// ExecutorHeartbeat is what an executor sends to extend its lease.
type ExecutorHeartbeat struct {
	// Running lists the runs the executor is running, with their tokens.
	Running []ExecutorRunRef `json:"running,omitempty"`
}

// ExecutorHeartbeatReply answers a heartbeat.
type ExecutorHeartbeatReply struct {
	// Cancel lists the runs the executor must stop: killed, timed out, or
	// no longer leased to it under that token.
	Cancel []ExecutorRunRef `json:"cancel"`
}

// ExecutorPoll asks for work (POST /api/v1/executors/{id}/poll).
type ExecutorPoll struct {
	// Wait is how long the server may hold the request while there is no
	// work, as a Go duration: 0 to 30s. Defaults to 0 (answer at once).
	Wait string `json:"wait,omitempty"`
	// Max bounds the runs returned: 1 to 100. Defaults to 10.
	Max int `json:"max,omitempty"`
	// NoRuns takes no run, only cancel requests: the executor is busy,
	// and polls so as to learn of a kill at once.
	NoRuns bool `json:"no_runs,omitempty"`
	// Results are results of runs that ended, at most MaxPollResults, each as the
	// run's result request would send it. The server records them before
	// it takes runs, so that an executor whose runs end quickly sends one
	// request per batch of runs instead of a poll and a result per run. A
	// malformed result refuses the whole poll (400, nothing recorded, no
	// run taken); a result the run's lease refuses is named in the answer's
	// Refused, and the others are recorded.
	Results []ExecutorRunResult `json:"results,omitempty"`
}

// MaxPollResults bounds the results one poll carries (ExecutorPoll.Results).
const MaxPollResults = 100

// ExecutorRunResult is one run's result sent with a poll.
type ExecutorRunResult struct {
	// Run is the run's ID.
	Run    string         `json:"run"`
	Result ExecutorResult `json:"result"`
}

// ExecutorWork answers a poll: runs to start, and runs to cancel.
type ExecutorWork struct {
	Runs   []ExecutorRun    `json:"runs"`
	Cancel []ExecutorRunRef `json:"cancel"`
	// Refused lists the poll's results that were not recorded because the
	// run is not leased to this executor under that token (it was handed
	// to another, or it ended); the poll's other results were recorded.
	Refused []ExecutorRefusedResult `json:"refused,omitempty"`
}

// ExecutorRefusedResult is a result of a poll that was not recorded.
type ExecutorRefusedResult struct {
	// Run is the run's ID.
	Run string `json:"run"`
	// Reason says why, as the run's result request would have.
	Reason string `json:"reason"`
}

// ExecutorRun is one run handed to an executor.
type ExecutorRun struct {
	// ID and Token identify the run and its lease: the result must carry
	// both.
	ID    string `json:"id"`
	Token int64  `json:"token"`
	// ExecutionID is the attempt's ID in the execution history.
	ExecutionID   string         `json:"execution_id"`
	Handler       string         `json:"handler"`
	JobGroup      string         `json:"job_group"`
	JobName       string         `json:"job_name"`
	ScheduledTime time.Time      `json:"scheduled_time"`
	Attempt       int            `json:"attempt"`
	Recovering    bool           `json:"recovering,omitempty"`
	Params        map[string]any `json:"params,omitempty"`
	// Timeout is the job's timeout as a Go duration; empty for none. The
	// server cancels the run when it passes (see ExecutorWork.Cancel).
	Timeout string `json:"timeout,omitempty"`
	// ShardIndex (from 0) and ShardTotal place an item of a sharded
	// firing among its items; both 0 for a run that is not an item.
	ShardIndex int `json:"shard_index,omitempty"`
	ShardTotal int `json:"shard_total,omitempty"`
}

// ExecutorLogs sends log lines of a run while it runs
// (POST /api/v1/executors/{id}/runs/{run}/log), for the execution's live
// log stream.
type ExecutorLogs struct {
	// Token is the run's fencing token, as the poll gave it.
	Token int64 `json:"token"`
	// Lines are the new lines, numbered from 1 in the order the handler
	// logged them, as the result's Logs will hold them (line n of the
	// result is line Seq n): at most 1,000 per request.
	Lines []LiveLogLine `json:"lines"`
}

// ExecutorResult reports how a run ended
// (POST /api/v1/executors/{id}/runs/{run}/result).
type ExecutorResult struct {
	// Token is the run's fencing token, as the poll gave it.
	Token int64 `json:"token"`
	// Outcome is succeeded, failed or cancelled (the executor stopped it
	// when told to).
	Outcome string `json:"outcome"`
	// Error says why it failed.
	Error string `json:"error,omitempty"`
	// Output is what the handler printed, bounded by the server.
	Output string `json:"output,omitempty"`
	// Logs are the handler's log lines, at most 1,000.
	Logs []LogLine `json:"logs,omitempty"`
}

// Executor is a registered executor as the API lists it.
type Executor struct {
	ID            string            `json:"id"`
	Group         string            `json:"group"`
	Instance      string            `json:"instance,omitempty"`
	Version       string            `json:"version,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	Handlers      []string          `json:"handlers"`
	Registered    time.Time         `json:"registered"`
	LastHeartbeat time.Time         `json:"last_heartbeat"`
	LeaseUntil    time.Time         `json:"lease_until"`
	// Live is false once the lease lapsed.
	Live     bool       `json:"live"`
	Running  int        `json:"running"`
	LastUsed *time.Time `json:"last_used,omitempty"`
	UseCount int64      `json:"use_count"`
}
