package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/api/wire"
	"github.com/chime-scheduler/chime/jobs"
	"github.com/chime-scheduler/chime/jobs/httpjob"
	"github.com/chime-scheduler/chime/jobs/shelljob"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/alert"
	"github.com/chime-scheduler/chime/server/dispatch"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/internal/names"
)

// A server job is a chime job whose metadata (chime.JobDetail.Metadata)
// holds the server's settings for it, a jobSettings. The one-shot
// triggers the server makes (run now, retries, backfills) have an origin
// other than chime.OriginSchedule and carry the facts of the run they
// stand for, a runFacts, in their metadata. The data maps are the user's
// alone.

// Built-in job types.
const (
	typeHTTP     = "http"
	typeShell    = "shell"
	typeExecutor = "executor"
)

// Trigger groups of the one-shot triggers the server makes. They are
// only names: the triggers' origins tell them from schedules.
const (
	retryGroup    = "RETRY_TRIGGER"
	backfillGroup = "BACKFILL_TRIGGER"
)

// errShellDisabled is the refusal of a shell job by a server that runs
// none.
func errShellDisabled() *api.Error {
	return invalidf("type", "shell jobs are disabled on this server; start it with --enable-shell-jobs and --shell-allow to allow them")
}

// serverMade reports whether a trigger of this origin stands for a run
// someone asked for (run now, a retry, a backfilled fire time) rather than
// a schedule: the API does not list such triggers among the job's
// triggers, an upsert keeps them, and they carry run facts.
func serverMade(origin chime.TriggerOrigin) bool {
	return origin != chime.OriginSchedule
}

// Limits of the job settings.
const (
	maxAttempts     = 100
	maxTriggers     = 100
	defaultDelay    = 10 * time.Second
	defaultMaxDelay = time.Hour
	defaultJitter   = 0.2
)

// jobSettings are a job's server-only settings, stored as its metadata.
type jobSettings struct {
	HTTP  json.RawMessage `json:"http,omitempty"`
	Shell json.RawMessage `json:"shell,omitempty"`
	// Executor is where an executor job runs.
	Executor *api.ExecutorTarget `json:"executor,omitempty"`
	Retry    *api.RetryPolicy    `json:"retry,omitempty"`
	Overlap  api.Overlap         `json:"overlap,omitempty"`
	Alerts   *api.JobAlerts      `json:"alerts,omitempty"`
	Paused   bool                `json:"paused,omitempty"`

	// Pool and PoolMaxWait are the job's concurrency pool (see pools.go).
	Pool        string `json:"pool,omitempty"`
	PoolMaxWait string `json:"pool_max_wait,omitempty"`
	// Children run when an execution ends for good; see children.go.
	Children []api.ChildJob `json:"children,omitempty"`
	// Shards and ShardParams make a sharded job (see shards.go).
	Shards      int              `json:"shards,omitempty"`
	ShardParams []map[string]any `json:"shard_params,omitempty"`
}

// runFacts describe a run the server asked for with a one-shot trigger:
// run now, a retry or a backfilled fire time. They are stored as the
// trigger's metadata.
type runFacts struct {
	// ID is the execution ID the run is recorded under, chosen when the
	// run was asked for so that the caller can follow it.
	ID string `json:"id"`
	// FirstID and Attempt link a retry to the first attempt of its firing.
	FirstID string `json:"first_id,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// ScheduledTime is the fire time the run stands for (the failed
	// attempt's, or the backfilled one); zero for "now".
	ScheduledTime time.Time `json:"scheduled_time,omitzero"`
	// TriggerGroup and TriggerName are the trigger whose fire time the run
	// stands for; empty for a run by hand.
	TriggerGroup string `json:"trigger_group,omitempty"`
	TriggerName  string `json:"trigger_name,omitempty"`
	// Manual marks a run a person asked for.
	Manual bool `json:"manual,omitempty"`
	// Workflow names the workflow task the run is for (see workflows.go).
	Workflow *workflowFacts `json:"workflow,omitempty"`
	// Cause is the parent's execution whose end ran this child job (see
	// children.go).
	Cause string `json:"cause,omitempty"`
	// Shard places the run among the items of a sharded firing; nil for
	// a run that is not an item.
	Shard *shardFacts `json:"shard,omitempty"`
}

// plan is what the runner needs of a job's settings, decoded and checked.
type plan struct {
	settings jobSettings
	http     *httpjob.Spec
	shell    *shelljob.Spec
	executor *api.ExecutorTarget
	retry    retryPolicy
	overlap  api.Overlap
	deadMan  time.Duration
	// pool is the job's concurrency pool, nil for none.
	pool *poolPlan
	// afterFailures (above 1) holds failure alerts back until that many
	// consecutive failures; runningLong alerts about an execution still
	// running that long; recovered alerts on the first success after a
	// failure alert.
	afterFailures int
	runningLong   time.Duration
	recovered     bool
	// recipients are the job's own alert recipients; alertsOff turns its
	// alerts off.
	recipients alert.Recipients
	alertsOff  bool
	// shards and shardParams are a sharded job's (see shards.go);
	// broadcast is set for the routing sharding_broadcast.
	shards      int
	shardParams []map[string]any
	broadcast   bool
}

// retryPolicy is an api.RetryPolicy with its defaults applied.
type retryPolicy struct {
	maxAttempts int // 1 for no retries
	exponential bool
	delay       time.Duration
	maxDelay    time.Duration
	jitter      float64
}

// invalidf returns an invalid_argument error naming field.
func invalidf(field, format string, args ...any) *api.Error {
	return httpjson.Errorf(api.CodeInvalidArgument, field, format, args...)
}

// fieldErr turns an error of package jobs into an invalid_argument
// error naming its field, and any other error into one naming prefix.
func fieldErr(prefix string, err error) *api.Error {
	var je *jobs.FieldError
	if errors.As(err, &je) {
		// The jobs packages name their fields from the spec's own key
		// ("http.url"), which is the job's field already.
		return invalidf(je.Field, "%s", je.Message)
	}
	return invalidf(prefix, "%v", err)
}

// checkName refuses a job, trigger or calendar name, or an execution ID,
// that breaks the server's rule for names (names.Problem) or that the
// API's paths cannot carry.
func checkName(field, v string) *api.Error {
	if p := names.Problem(v); p != "" {
		return invalidf(field, "%s", p)
	}
	if strings.ContainsRune(v, '/') {
		return invalidf(field, "%q contains '/', which API paths cannot carry", v)
	}
	return nil
}

// parseDuration parses a Go duration string for field; empty is zero.
func parseDuration(field, s string) (time.Duration, *api.Error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, invalidf(field, "%q is not a duration such as \"90s\" or \"1h30m\"", s)
	}
	if d < 0 {
		return 0, invalidf(field, "%s is negative", s)
	}
	return d, nil
}

// compileRetry checks a retry policy and applies its defaults.
func compileRetry(p *api.RetryPolicy) (retryPolicy, *api.Error) {
	r := retryPolicy{maxAttempts: 1, exponential: true, delay: defaultDelay, maxDelay: defaultMaxDelay, jitter: defaultJitter}
	if p == nil {
		return r, nil
	}
	if p.MaxAttempts < 1 || p.MaxAttempts > maxAttempts {
		return r, invalidf("retry.max_attempts", "%d: want 1 to %d (every attempt counts, the first included)", p.MaxAttempts, maxAttempts)
	}
	r.maxAttempts = p.MaxAttempts
	switch p.Backoff {
	case "", "exponential":
	case "fixed":
		r.exponential = false
	default:
		return r, invalidf("retry.backoff", "%q: want fixed or exponential", p.Backoff)
	}
	var err *api.Error
	if p.Delay != "" {
		if r.delay, err = parseDuration("retry.delay", p.Delay); err != nil {
			return r, err
		}
	}
	if p.MaxDelay != "" {
		if r.maxDelay, err = parseDuration("retry.max_delay", p.MaxDelay); err != nil {
			return r, err
		}
	}
	if r.maxDelay < r.delay {
		return r, invalidf("retry.max_delay", "%s is less than the delay %s", r.maxDelay, r.delay)
	}
	if p.Jitter != nil {
		j := *p.Jitter
		if math.IsNaN(j) || j < 0 || j > 1 {
			return r, invalidf("retry.jitter", "%v: want 0 to 1", j)
		}
		r.jitter = j
	}
	return r, nil
}

// compilePlan checks a job's settings for its type. shellEnabled says
// whether shell jobs may run; goType whether typ is a registered Go type.
func compilePlan(typ string, st jobSettings, shellEnabled, goType bool) (*plan, *api.Error) {
	p := &plan{settings: st}
	if err := compileType(p, typ, st, shellEnabled, goType); err != nil {
		return nil, err
	}
	switch st.Overlap {
	case "":
		p.overlap = api.OverlapAllow
	case api.OverlapAllow, api.OverlapSkip, api.OverlapQueue, api.OverlapCancel:
		p.overlap = st.Overlap
	default:
		return nil, invalidf("overlap", "%q: want allow, skip, queue or cancel", st.Overlap)
	}
	r, err := compileRetry(st.Retry)
	if err != nil {
		return nil, err
	}
	p.retry = r
	if p.pool, err = compilePool(st); err != nil {
		return nil, err
	}
	if err := compileShards(p, st); err != nil {
		return nil, err
	}
	if a := st.Alerts; a != nil {
		if err := compileAlerts(p, a); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// compileType checks the settings of the job's type, which are required
// for it, and refuses those of another type.
func compileType(p *plan, typ string, st jobSettings, shellEnabled, goType bool) *api.Error {
	switch typ {
	case typeHTTP:
		if len(st.HTTP) == 0 {
			return invalidf("http", "is required for a job of type http")
		}
		p.http = &httpjob.Spec{}
		if err := decodeSpec("http", st.HTTP, p.http); err != nil {
			return err
		}
	case typeShell:
		if !shellEnabled {
			return errShellDisabled()
		}
		if len(st.Shell) == 0 {
			return invalidf("shell", "is required for a job of type shell")
		}
		p.shell = &shelljob.Spec{}
		if err := decodeSpec("shell", st.Shell, p.shell); err != nil {
			return err
		}
	case typeExecutor:
		if err := dispatch.CheckTarget("executor", st.Executor); err != nil {
			var fe *dispatch.FieldError
			if errors.As(err, &fe) {
				return invalidf(fe.Field, "%s", fe.Message)
			}
			return invalidf("executor", "%v", err)
		}
		t := *st.Executor
		if t.Routing == "" {
			t.Routing = api.RoutingRoundRobin
		}
		p.executor = &t
	default:
		if !goType {
			return invalidf("type", "unknown job type %q: want http, shell, executor or a Go job type this server registered", typ)
		}
	}
	switch {
	case typ != typeHTTP && len(st.HTTP) > 0:
		return invalidf("http", "is only for jobs of type http")
	case typ != typeShell && len(st.Shell) > 0:
		return invalidf("shell", "is only for jobs of type shell")
	case typ != typeExecutor && st.Executor != nil:
		return invalidf("executor", "is only for jobs of type executor")
	}
	return nil
}

// decodeSpec decodes the spec of a job type, under field, into spec and
// validates it.
func decodeSpec(field string, raw json.RawMessage, spec interface{ Validate() error }) *api.Error {
	if err := json.Unmarshal(raw, spec); err != nil {
		return fieldErr(field, err)
	}
	if err := spec.Validate(); err != nil {
		return fieldErr(field, err)
	}
	return nil
}

// compileAlerts checks a job's alert settings and sets them on p.
func compileAlerts(p *plan, a *api.JobAlerts) *api.Error {
	if err := (alert.Recipients{Emails: a.Emails}).Validate(); err != nil {
		return invalidf("alerts.emails", "%v", err)
	}
	for _, list := range []struct {
		field string
		urls  []string
	}{{"alerts.webhooks", a.Webhooks}, {"alerts.slack", a.Slack}, {"alerts.teams", a.Teams}} {
		if err := checkAlertURLs(list.field, list.urls); err != nil {
			return err
		}
	}
	targets, err := pagerDutyTargets("alerts.pagerduty", a.PagerDuty)
	if err != nil {
		return err
	}
	d, err := parseDuration("alerts.dead_man", a.DeadMan)
	if err != nil {
		return err
	}
	if a.AfterFailures < 0 {
		return invalidf("alerts.after_failures", "%d is less than 1: count the consecutive failures to alert on, or leave it out", a.AfterFailures)
	}
	long, err := parseDuration("alerts.running_longer_than", a.RunningLongerThan)
	if err != nil {
		return err
	}
	if a.RunningLongerThan != "" && long == 0 {
		return invalidf("alerts.running_longer_than", "%q is not positive", a.RunningLongerThan)
	}
	p.deadMan = d
	p.afterFailures = a.AfterFailures
	p.runningLong = long
	p.recovered = a.Recovered
	p.recipients = alert.Recipients{Emails: a.Emails, Webhooks: a.Webhooks, Slack: a.Slack, Teams: a.Teams, PagerDuty: targets}
	p.alertsOff = a.Disabled
	return nil
}

// checkAlertURLs refuses a webhook URL that cannot be used, naming it as
// field[i].
func checkAlertURLs(field string, urls []string) *api.Error {
	for i, u := range urls {
		if fe, ok := errors.AsType[*alert.FieldError]((alert.Recipients{Webhooks: []string{u}}).Validate()); ok {
			return invalidf(fmt.Sprintf("%s[%d]", field, i), "%s", fe.Reason)
		}
	}
	return nil
}

// pagerDutyTargets checks PagerDuty targets and translates them, naming a
// bad one as field[i].routing_key or field[i].severity.
func pagerDutyTargets(field string, in []api.PagerDutyTarget) ([]alert.PagerDutyTarget, *api.Error) {
	out := make([]alert.PagerDutyTarget, 0, len(in))
	for i, t := range in {
		at := alert.PagerDutyTarget{RoutingKey: t.RoutingKey, Severity: t.Severity}
		if fe, ok := errors.AsType[*alert.FieldError](at.Validate()); ok {
			// The first problem, of routing_key or severity.
			return nil, invalidf(fmt.Sprintf("%s[%d].%s", field, i, fe.Field), "%s", fe.Reason)
		}
		out = append(out, at)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// jobWrite is an api.Job translated for the scheduler.
type jobWrite struct {
	detail   chime.JobDetail
	triggers []chime.Trigger
	// keepTriggers leaves the stored triggers as they are: the request
	// did not list them.
	keepTriggers bool
	plan         *plan
	// warnings report deprecated spellings the request used.
	warnings []wire.Warning
}

// jobFromAPI checks the server's settings of j (its type, HTTP or shell
// spec, retry policy, overlap, alerts, timeout and names) and translates
// it. Every problem is an invalid_argument error naming the field;
// nothing is written. The job and its triggers as the scheduler keeps
// them are validated by the scheduler, once, when they are written.
func (s *Server) jobFromAPI(ctx context.Context, j api.Job) (*jobWrite, error) {
	if err := checkName("group", j.Group); err != nil {
		return nil, err
	}
	if err := checkName("name", j.Name); err != nil {
		return nil, err
	}
	if j.Type == "" {
		return nil, invalidf("type", "is required: http, shell, executor or a Go job type this server registered")
	}
	j.HTTP, j.Shell = nullAsEmpty(j.HTTP), nullAsEmpty(j.Shell)
	st := jobSettings{HTTP: j.HTTP, Shell: j.Shell, Executor: j.Executor, Retry: j.Retry, Overlap: j.Overlap, Alerts: j.Alerts, Paused: j.Paused,
		Pool: j.Pool, PoolMaxWait: j.PoolMaxWait, Children: j.Children,
		Shards: j.Shards, ShardParams: j.ShardParams}
	if err := s.checkChildren(ctx, j); err != nil {
		return nil, err
	}
	p, err := compilePlan(j.Type, st, s.cfg.EnableShellJobs, s.isGoType(j.Type))
	if err != nil {
		return nil, err
	}
	if p.shell != nil {
		if err := s.shell.Allow.Check(*p.shell); err != nil {
			return nil, fieldErr("shell", err)
		}
	}
	if err := s.checkPlanEgress(p); err != nil {
		return nil, err
	}
	if err := s.checkExecutorAdvertised(ctx, p); err != nil {
		return nil, err
	}
	if err := s.checkSecretRefs(ctx, st); err != nil {
		return nil, err
	}
	if err := s.checkPoolRef(ctx, p); err != nil {
		return nil, err
	}
	timeout, err := parseDuration("timeout", j.Timeout)
	if err != nil {
		return nil, err
	}
	var data chime.JobData
	if len(j.Data) > 0 {
		data = chime.JobData(maps.Clone(j.Data))
	}
	settings, encErr := json.Marshal(st)
	if encErr != nil {
		return nil, fmt.Errorf("server: encoding job settings: %w", encErr)
	}
	if len(settings) > s.cfg.MaxJobDataBytes {
		return nil, invalidf(largestSetting(st), "the job's settings encode to %d bytes, more than this server's limit of %d", len(settings), s.cfg.MaxJobDataBytes)
	}
	w := &jobWrite{
		detail: chime.JobDetail{
			Key:                         chime.NewJobKey(j.Group, j.Name),
			Type:                        j.Type,
			Description:                 j.Description,
			Durable:                     true,
			RequestsRecovery:            j.RequestsRecovery,
			DisallowConcurrentExecution: p.overlap == api.OverlapQueue,
			Timeout:                     timeout,
			Data:                        data,
			Metadata:                    settings,
		},
		plan: p,
	}
	if len(j.Triggers) > maxTriggers {
		return nil, invalidf("triggers", "%d triggers; at most %d are allowed", len(j.Triggers), maxTriggers)
	}
	names := make(map[string]int, len(j.Triggers))
	for i, at := range j.Triggers {
		t, warnings, err := s.triggerFromAPI(j, i, at)
		if err != nil {
			return nil, err
		}
		w.warnings = append(w.warnings, warnings...)
		// The scheduler refuses two triggers with one key too, but a PUT
		// hands it only the triggers that changed, so it cannot see a
		// name given twice when one of them is stored already.
		if first, dup := names[t.Key.Name]; dup {
			return nil, invalidf(fmt.Sprintf("triggers[%d].name", i), "%q is also the name of triggers[%d]", t.Key.Name, first)
		}
		names[t.Key.Name] = i
		w.triggers = append(w.triggers, t)
	}
	return w, nil
}

// nullAsEmpty returns nil for a JSON null, which decodes into a
// json.RawMessage as the bytes "null", and raw otherwise.
func nullAsEmpty(raw json.RawMessage) json.RawMessage {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return raw
}

// triggerName is the name of a job's i-th trigger when it has none.
func triggerName(job string, i int) string { return job + "-" + strconv.Itoa(i) }

// triggerFromAPI decodes the i-th trigger of job j and translates it,
// reporting the deprecated spellings its schedule used. It checks only
// what is the API's: the trigger's name, which API paths carry, and the
// JSON form of its schedule; the scheduler validates the trigger itself
// when it is written, and jobWriteErr names the field it refuses.
func (s *Server) triggerFromAPI(j api.Job, i int, at api.Trigger) (chime.Trigger, []wire.Warning, error) {
	field := fmt.Sprintf("triggers[%d]", i)
	name := at.Name
	if name == "" {
		name = triggerName(j.Name, i)
	}
	if err := checkName(field+".name", name); err != nil {
		return chime.Trigger{}, nil, err
	}
	if len(bytes.TrimSpace(nullAsEmpty(at.Schedule))) == 0 {
		return chime.Trigger{}, nil, invalidf(field+".schedule", `is required, such as {"kind":"cron","expression":"0 0 2 * * ?","time_zone":"UTC"}`)
	}
	sched, warnings, err := wire.DecodeSchedule(at.Schedule, field+".schedule")
	if err != nil {
		return chime.Trigger{}, nil, err
	}
	t := chime.Trigger{
		Key:                chime.NewTriggerKey(j.Group, name),
		JobKey:             chime.NewJobKey(j.Group, j.Name),
		Priority:           at.Priority,
		Schedule:           sched,
		CalendarName:       at.Calendar,
		MisfireInstruction: schedule.MisfireInstruction(at.Misfire),
	}
	if len(at.Data) > 0 {
		t.Data = chime.JobData(maps.Clone(at.Data))
	}
	if at.StartTime != nil {
		t.StartTime = *at.StartTime
	}
	if at.EndTime != nil {
		t.EndTime = *at.EndTime
	}
	return t, warnings, nil
}

// warn logs the deprecated spellings a write to target used, one line
// each, and returns them as the response's warnings.
func (s *Server) warn(ctx context.Context, actor, target string, warnings []wire.Warning) []string {
	var out []string
	for _, w := range warnings {
		s.log.WarnContext(ctx, "deprecated spelling accepted", "actor", actor, "target", target, "field", w.Field, "warning", w.Message)
		out = append(out, w.String())
	}
	return out
}

// dataSize returns the size of a data map's JSON encoding.
func dataSize(data map[string]any) (int, error) {
	if len(data) == 0 {
		return 0, nil
	}
	b, err := json.Marshal(data)
	return len(b), err
}

// largestSetting names the setting that most likely made a job's
// settings too large: its HTTP or shell spec.
func largestSetting(st jobSettings) string {
	if len(st.Shell) > len(st.HTTP) {
		return "shell"
	}
	return "http"
}

// settingsOf returns the server settings kept in a job's metadata. A job
// made with the library has none: its zero settings are returned.
func settingsOf(d *chime.JobDetail) (jobSettings, error) {
	var st jobSettings
	if len(d.Metadata) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(d.Metadata, &st); err != nil {
		return st, fmt.Errorf("server: job %s: reading its settings: %w", d.Key, err)
	}
	return st, nil
}

// factsOf returns the run facts of a trigger the server made, nil for a
// schedule's trigger.
func factsOf(t *chime.Trigger) (*runFacts, error) {
	if t == nil || !serverMade(t.Origin) || len(t.Metadata) == 0 {
		return nil, nil
	}
	var f runFacts
	if err := json.Unmarshal(t.Metadata, &f); err != nil {
		return nil, fmt.Errorf("server: trigger %s: reading its run facts: %w", t.Key, err)
	}
	return &f, nil
}

// factsMeta encodes run facts as a trigger's metadata.
func factsMeta(facts runFacts) (json.RawMessage, error) {
	b, err := json.Marshal(facts)
	if err != nil {
		return nil, fmt.Errorf("server: encoding run facts: %w", err)
	}
	return b, nil
}

// jobToAPI translates a stored job and its triggers (every trigger of the
// job; the server's one-shot ones are left out) for the API.
func jobToAPI(d *chime.JobDetail, triggers []chime.TriggerInfo) (*api.Job, error) {
	st, err := settingsOf(d)
	if err != nil {
		return nil, err
	}
	j := &api.Job{
		Group:            d.Key.Group,
		Name:             d.Key.Name,
		Description:      d.Description,
		Type:             d.Type,
		HTTP:             st.HTTP,
		Shell:            st.Shell,
		Executor:         st.Executor,
		Retry:            st.Retry,
		Overlap:          st.Overlap,
		Pool:             st.Pool,
		PoolMaxWait:      st.PoolMaxWait,
		RequestsRecovery: d.RequestsRecovery,
		Alerts:           st.Alerts,
		Paused:           st.Paused,
		Children:         st.Children,
		Shards:           st.Shards,
		ShardParams:      st.ShardParams,
		Version:          d.Version,
		Timeout:          formatDuration(d.Timeout),
	}
	if len(d.Data) > 0 {
		j.Data = map[string]any(d.Data)
	}
	for _, ti := range triggers {
		if serverMade(ti.Origin) {
			continue
		}
		at, err := triggerToAPI(d.Key, ti)
		if err != nil {
			return nil, err
		}
		j.Triggers = append(j.Triggers, at)
	}
	return j, nil
}

// triggerToAPI translates a stored trigger for the API.
func triggerToAPI(job chime.JobKey, ti chime.TriggerInfo) (api.Trigger, error) {
	sched, err := wire.EncodeSchedule(ti.Schedule)
	if err != nil {
		return api.Trigger{}, fmt.Errorf("server: trigger %s: %w", ti.Key, err)
	}
	at := api.Trigger{
		Name:     ti.Key.Name,
		Schedule: sched,
		Calendar: ti.CalendarName,
		Misfire:  string(ti.MisfireInstruction),
		Priority: ti.Priority,
		State:    string(ti.State),
	}
	if len(ti.Data) > 0 {
		at.Data = map[string]any(ti.Data)
	}
	if !ti.StartTime.IsZero() {
		at.StartTime = new(ti.StartTime)
	}
	if !ti.EndTime.IsZero() {
		at.EndTime = new(ti.EndTime)
	}
	if !ti.NextFireTime.IsZero() {
		at.NextFireTime = new(ti.NextFireTime)
	}
	if !ti.PreviousFireTime.IsZero() {
		at.PreviousFireTime = new(ti.PreviousFireTime)
	}
	return at, nil
}

// formatDuration formats d for the API; zero is "".
func formatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// sameTrigger reports whether the stored trigger ti already is what t asks
// for, so that an upsert can leave it, and its firing state, alone.
func sameTrigger(ti chime.TriggerInfo, t chime.Trigger) bool {
	a, errA := wire.EncodeSchedule(ti.Schedule)
	b, errB := wire.EncodeSchedule(t.Schedule)
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		return false
	}
	misfire := func(m schedule.MisfireInstruction) schedule.MisfireInstruction {
		if m == "" {
			return schedule.MisfireSmartPolicy
		}
		return m
	}
	if ti.Description != t.Description || ti.Priority != t.Priority || ti.CalendarName != t.CalendarName ||
		misfire(ti.MisfireInstruction) != misfire(t.MisfireInstruction) || !ti.EndTime.Equal(t.EndTime) {
		return false
	}
	if !t.StartTime.IsZero() && !ti.StartTime.Equal(t.StartTime) {
		return false
	}
	return sameData(ti.Data, t.Data)
}

// sameData reports whether two data maps encode to the same JSON.
func sameData(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// sameJob reports whether the stored job d already is what w asks for.
func sameJob(d *chime.JobDetail, w *jobWrite) bool {
	n := w.detail
	return d.Type == n.Type && d.Description == n.Description && d.RequestsRecovery == n.RequestsRecovery &&
		d.DisallowConcurrentExecution == n.DisallowConcurrentExecution && d.Timeout == n.Timeout &&
		d.Durable == n.Durable && !d.PersistJobDataAfterExecution && sameData(d.Data, n.Data) &&
		bytes.Equal(d.Metadata, n.Metadata)
}
