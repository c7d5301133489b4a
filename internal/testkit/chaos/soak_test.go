package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/clustertest"
	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
)

// restartEnv enables the dbrestart fault, as it enables clustertest's
// TestDatabaseRestart: restarting the database server disrupts every
// other test using it.
const restartEnv = "CHIME_TEST_RESTART_DATABASES"

// database is one database the suite runs on.
type database struct {
	name string
	// url creates a fresh database for the test and returns its URL, or
	// skips the test when the database is not configured.
	url func(testing.TB) string
	// server restarts the database server; nil for SQLite, which has
	// none, and whose nodes share a file, with no connection to cut.
	server clustertest.Server
}

func databases() []database {
	return []database{
		{name: "sqlite", url: dbtest.SQLiteURL},
		{name: "postgres", url: dbtest.PostgresURL, server: clustertest.PostgresServer{}},
		{name: "mariadb", url: dbtest.MySQLURL, server: clustertest.MariaDBServer{}},
	}
}

// jobGroup is the group of the suite's jobs.
const jobGroup = "chaos"

// soakJob is one job of the suite.
type soakJob struct {
	name string
	// schedule is the trigger's schedule; every spans its instants,
	// which fall on multiples of every since the Unix epoch (cron) or
	// since the start time (simple), which is itself such a multiple.
	schedule string
	every    time.Duration
	recovery bool
	retry    *api.RetryPolicy
	target   behaviour
}

// soakJobs are the suite's jobs: about four firings a second in all, so
// that three nodes on two shared cores keep up.
func soakJobs() []soakJob {
	return []soakJob{
		{name: "every1s", schedule: `{"kind":"cron","expression":"* * * * * ?","time_zone":"UTC"}`, every: time.Second},
		{name: "every1s-recover", schedule: `{"kind":"simple","interval":"1s"}`, every: time.Second, recovery: true},
		{name: "every2s-recover", schedule: `{"kind":"cron","expression":"*/2 * * * * ?","time_zone":"UTC"}`, every: 2 * time.Second, recovery: true},
		{name: "flaky", schedule: `{"kind":"simple","interval":"2s"}`, every: 2 * time.Second, recovery: true,
			retry:  &api.RetryPolicy{MaxAttempts: 3, Backoff: "fixed", Delay: "1s", Jitter: new(float64)},
			target: behaviour{failFirst: true, hold: time.Second}},
		{name: "slow-recover", schedule: `{"kind":"simple","interval":"2s"}`, every: 2 * time.Second, recovery: true,
			target: behaviour{hold: 5 * time.Second}},
		{name: "slow", schedule: `{"kind":"simple","interval":"2s"}`, every: 2 * time.Second,
			target: behaviour{hold: 4 * time.Second}},
	}
}

// perDatabaseOverhead is the time a run takes per database besides
// -duration: building chime, starting the cluster, settling, the audit.
const perDatabaseOverhead = 2 * time.Minute

// TestSoak runs the soak and fault suite on each database; see the
// package documentation.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: a cluster under faults for -duration per database; skipped with -short")
	}
	if *nodesFlag < 2 {
		t.Fatalf("-nodes %d: want at least 2, so that one survives each fault", *nodesFlag)
	}
	if deadline, ok := t.Deadline(); ok {
		need := time.Duration(len(databases())) * (*durationFlag + perDatabaseOverhead)
		if left := time.Until(deadline); left < need {
			t.Fatalf("-duration %s needs about %s for %d databases, and go test's -timeout leaves %s: add -timeout 0 (go test -timeout 0 ./internal/testkit/chaos -run Soak -args -duration %s)",
				*durationFlag, need.Round(time.Minute), len(databases()), left.Round(time.Second), *durationFlag)
		}
	}
	seed := *seedFlag
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("chaos: seed=%d (repeat the fault schedule with -args -seed %d)", seed, seed)
	for i, d := range databases() {
		t.Run(d.name, func(t *testing.T) {
			soak(t, d, rand.New(rand.NewPCG(uint64(seed), uint64(i))))
		})
	}
}

// soak runs the suite on one database.
func soak(t *testing.T, d database, rng *rand.Rand) {
	ctx := context.Background()
	url := d.url(t)
	restarts := d.server != nil && os.Getenv(restartEnv) == "1"
	if restarts {
		// Registered after the database was created, so it runs before the
		// database is dropped: whatever happens, the server runs again.
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := d.server.EnsureRunning(ctx); err != nil {
				t.Errorf("the %s server is not running again: %v", d.name, err)
			}
		})
	}
	bin := binary(t)
	dir := t.TempDir()
	if *logsFlag != "" {
		var err error
		if dir, err = os.MkdirTemp(*logsFlag, "chime-chaos-"+d.name+"-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("chaos: the nodes' logs are kept in %s", dir)
	}

	// The nodes: each through its own proxy, except on SQLite.
	proxyTarget := ""
	if d.server != nil {
		var err error
		if proxyTarget, err = clustertest.HostPort(url); err != nil {
			t.Fatal(err)
		}
	}
	var nodes []*node
	for i := range *nodesFlag {
		nodes = append(nodes, newNode(t, bin, string(rune('a'+i)), dir, url, proxyTarget))
	}
	stopAtCleanup(t, nodes)
	startCluster(t, nodes)
	client := login(t, nodes[0])

	// The jobs fire from start to end, both on whole even seconds.
	jobs := soakJobs()
	behaviours := make(map[string]behaviour)
	for _, j := range jobs {
		behaviours[j.name] = j.target
	}
	tg := newTarget(t, behaviours)
	start := time.Unix((time.Now().Unix()+5)/2*2, 0)
	end := start.Add(durationFlag.Round(time.Second)).Add(500 * time.Millisecond)
	for _, j := range jobs {
		putJob(t, client, j, tg.URL, start, end)
	}
	auditJobs := checkInstants(t, client, jobs, start, end)

	// Faults until the end.
	kinds := []faultKind{faultKill9, faultSIGSTOP}
	if d.server != nil {
		kinds = append(kinds, faultCut)
	}
	if restarts {
		kinds = append(kinds, faultDBRestart)
	}
	in := &injector{t: t, rng: rng, nodes: nodes, kinds: kinds, server: d.server}
	if err := sleep(ctx, time.Until(start)); err != nil {
		t.Fatal(err)
	}
	in.run(ctx, end)
	if err := sleep(ctx, time.Until(end)); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}
	settled := settle(t, client, tg)

	// The audit.
	report(t, d.name, in, auditCluster(t, client, auditJobs, tg, in.faults), nodes, settled)
}

// stopAtCleanup stops the nodes when the test ends, and keeps their logs
// when it failed.
func stopAtCleanup(t *testing.T, nodes []*node) {
	t.Cleanup(func() {
		for _, n := range nodes {
			if err := n.stop(); err != nil {
				t.Errorf("stop node %s: %v", n.id, err)
			}
		}
		if t.Failed() {
			for _, n := range nodes {
				t.Logf("node %s, last lines of %s:\n%s", n.id, n.log, nodeproc.Tail(n.log, 15))
				nodeproc.KeepLog(t, "chaos", n.id, n.log)
			}
		}
	})
}

// auditCluster audits the jobs' instants from the history, read through
// client, the requests tg received, and the faults (see audit).
func auditCluster(t *testing.T, client *apiclient.Client, jobs []auditJob, tg *target, faults []fault) *auditResult {
	t.Helper()
	ctx := context.Background()
	execs := make(map[string][]api.Execution)
	for _, j := range jobs {
		execs[j.name] = executions(t, client, j.name)
	}
	reqs, bad := tg.received()
	for _, b := range bad {
		t.Errorf("the target could not read a request: %s", b)
	}
	res, err := audit(jobs, execs, reqs, faults, func(job string, at time.Time) ([]api.Decision, error) {
		ex, err := client.Explain(ctx, jobGroup, job, at)
		if err != nil {
			return nil, err
		}
		return ex.Decisions, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// startCluster starts the first node alone, so that it creates the
// schema and the first admin, then the others, and waits until every
// node is ready.
func startCluster(t *testing.T, nodes []*node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	for i, n := range nodes {
		if err := n.start(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := n.waitReady(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range nodes[1:] {
		if err := n.waitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// login logs in as the first admin on n and returns a client with the
// session; the session works on every node.
func login(t *testing.T, n *node) *apiclient.Client {
	t.Helper()
	c, err := apiclient.New(n.baseURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Login(context.Background(), "admin", adminPassword)
	if err != nil {
		t.Fatalf("log in on node %s: %v", n.id, err)
	}
	return c.WithToken(s.Token)
}

// putJob creates the job j, sending its firing's facts to the target at
// targetURL, firing from start to end.
func putJob(t *testing.T, c *apiclient.Client, j soakJob, targetURL string, start, end time.Time) {
	t.Helper()
	spec, err := json.Marshal(map[string]any{
		"method":  "POST",
		"url":     targetURL + "/" + j.name,
		"headers": map[string]string{"Content-Type": "application/json"},
		"body":    requestBody,
	})
	if err != nil {
		t.Fatal(err)
	}
	job := api.Job{
		Group: jobGroup, Name: j.name, Type: "http", HTTP: spec,
		Triggers: []api.Trigger{{
			Schedule: json.RawMessage(j.schedule), Misfire: "IGNORE_MISFIRE_POLICY",
			StartTime: &start, EndTime: &end,
		}},
		RequestsRecovery: j.recovery,
		Retry:            j.retry,
	}
	if _, _, err := c.PutJob(context.Background(), job, 0); err != nil {
		t.Fatalf("put job %s: %v", j.name, err)
	}
}

// checkInstants computes each job's instants in [start, end) and checks
// the first ones against the fire times the server lists for it.
func checkInstants(t *testing.T, c *apiclient.Client, jobs []soakJob, start, end time.Time) []auditJob {
	t.Helper()
	var out []auditJob
	for _, j := range jobs {
		aj := auditJob{name: j.name, recovery: j.recovery, maxAttempts: 1}
		if j.retry != nil {
			aj.maxAttempts = j.retry.MaxAttempts
		}
		for at := start; at.Before(end); at = at.Add(j.every) {
			aj.instants = append(aj.instants, at)
		}
		upcoming, err := c.Upcoming(context.Background(), jobGroup, j.name, 10)
		if err != nil {
			t.Fatalf("upcoming fire times of %s: %v", j.name, err)
		}
		for i, ft := range upcoming {
			if i >= len(aj.instants) || !ft.Time.Equal(aj.instants[i]) {
				t.Fatalf("job %s: the server's fire time %d is %s, the suite computed %v", j.name, i, ft.Time, aj.instants[:min(len(aj.instants), 10)])
			}
		}
		out = append(out, aj)
	}
	return out
}

// Settling: the cluster is settled once nothing runs and the target has
// received nothing new for quietFor, or after settleTimeout.
const (
	quietFor      = 2*deadAfter + 2*time.Second
	settleTimeout = 2 * time.Minute
)

// settle waits until the cluster is settled and reports whether it did.
func settle(t *testing.T, c *apiclient.Client, tg *target) bool {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(settleTimeout)
	last, quietSince := tg.count(), time.Now()
	for time.Now().Before(deadline) {
		running, err := c.ListExecutions(ctx, api.ExecutionQuery{Outcomes: []string{"running"}, Limit: 1})
		if err != nil {
			t.Fatalf("list running executions: %v", err)
		}
		if n := tg.count(); n != last {
			last, quietSince = n, time.Now()
		}
		if len(running.Executions) == 0 && time.Since(quietSince) >= quietFor {
			return true
		}
		// Polling: the cluster's state is in other processes and the
		// database, which signal nothing.
		time.Sleep(500 * time.Millisecond)
	}
	return false
}

// executions returns every execution of a job in the history.
func executions(t *testing.T, c *apiclient.Client, job string) []api.Execution {
	t.Helper()
	var out []api.Execution
	for e, err := range c.Executions(context.Background(), api.ExecutionQuery{JobGroup: jobGroup, JobName: job, Limit: 500}) {
		if err != nil {
			t.Fatalf("executions of %s: %v", job, err)
		}
		out = append(out, e)
	}
	return out
}

// report prints the figures line, appends it to CHIME_FIGURES_FILE, and
// fails the test on every dup, miss or unexplained instant and every
// execution left running, each with the node log lines naming its
// executions.
func report(t *testing.T, db string, in *injector, res *auditResult, nodes []*node, settled bool) {
	t.Helper()
	line := fmt.Sprintf("chaos: db=%s duration=%s nodes=%d faults=%s instants=%d fired=%d explained=%d dup=%d miss=%d unexplained=%d running_left=%d requests=%d executions=%d reruns=%d",
		db, durationFlag.Round(time.Second), len(nodes), in.counts(), len(res.verdicts),
		res.count(classFired), res.count(classExplained), res.count(classDup), res.count(classMiss),
		res.count(classUnexplained)+len(res.unexpected), len(res.running), res.requests, res.executions, res.reruns)
	t.Log(line)
	appendFigures(t, line)
	for reason, n := range res.explainedBy {
		t.Logf("chaos: explained by %s: %d", reason, n)
	}
	if !settled {
		t.Errorf("the cluster did not settle within %s of the last instant: executions still running or requests still arriving", settleTimeout)
	}
	logs := nodeLogs(nodes)
	for _, line := range logs.errorSummary() {
		t.Logf("chaos: node log errors: %s", line)
	}
	for _, v := range res.failures() {
		t.Errorf("%s%s%s", v, logs.about(v.ids), logs.aboutInstant(v.job, v.at, len(v.ids) == 0))
	}
	for _, e := range res.running {
		t.Errorf("execution %s of %s (attempt %d, scheduled %s) is still running on node %s after the cluster settled%s",
			e.ID, e.JobName, e.Attempt, e.ScheduledTime.UTC().Format("15:04:05.000"), e.NodeID, logs.about([]string{e.ID}))
	}
	if t.Failed() {
		t.Logf("faults injected:\n  %s", strings.Join(faultLines(in.faults), "\n  "))
	}
}

func faultLines(fs []fault) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return out
}

// appendFigures appends a figures line to the file named by
// CHIME_FIGURES_FILE, when set, where .ci/run collects the cluster
// scenarios' figures.
func appendFigures(t *testing.T, line string) {
	t.Helper()
	path := os.Getenv(clustertest.FiguresFileEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Errorf("%s: %v", clustertest.FiguresFileEnv, err)
		return
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Errorf("%s: %v", clustertest.FiguresFileEnv, err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("%s: %v", clustertest.FiguresFileEnv, err)
	}
}

// logLines are the lines of the nodes' logs, by node.
type logLines map[string][]string

// nodeLogs reads the nodes' logs.
func nodeLogs(nodes []*node) logLines {
	out := make(logLines)
	for _, n := range nodes {
		data, err := os.ReadFile(n.log)
		if err != nil {
			out[n.id] = []string{"(cannot read the log: " + err.Error() + ")"}
			continue
		}
		out[n.id] = strings.Split(string(data), "\n")
	}
	return out
}

// about returns the log lines (up to 4 per node and ID) that mention any
// of ids, indented, or "" when none does.
func (l logLines) about(ids []string) string {
	var b strings.Builder
	for _, id := range ids {
		for _, node := range sortedKeys(l) {
			n := 0
			for _, line := range l[node] {
				if strings.Contains(line, id) && n < 4 {
					fmt.Fprintf(&b, "\n    node %s: %s", node, line)
					n++
				}
			}
		}
	}
	return b.String()
}

// errorSummary counts the nodes' ERROR records by message, one line per
// message: "17 × cannot record the end of the execution".
func (l logLines) errorSummary() []string {
	counts := make(map[string]int)
	for _, node := range sortedKeys(l) {
		for _, line := range l[node] {
			if !strings.Contains(line, "level=ERROR") {
				continue
			}
			msg := line
			if _, rest, ok := strings.Cut(line, "msg="); ok {
				msg = rest
				if strings.HasPrefix(msg, `"`) {
					if end := strings.Index(msg[1:], `"`); end >= 0 {
						msg = msg[1 : end+1]
					}
				} else if sp := strings.IndexByte(msg, ' '); sp >= 0 {
					msg = msg[:sp]
				}
			}
			counts[msg]++
		}
	}
	var out []string
	for _, msg := range sortedKeys(counts) {
		out = append(out, fmt.Sprintf("%d × %s", counts[msg], msg))
	}
	return out
}

// aboutInstant returns, when asked, the log lines (up to 6 per node) about
// a job's scheduled instant, indented: for an instant that left no
// execution ID to look for.
func (l logLines) aboutInstant(job string, at time.Time, ask bool) string {
	if !ask {
		return ""
	}
	key := "job_key=" + jobGroup + "." + job + " "
	when := "scheduled_fire_time=" + at.UTC().Format("2006-01-02T15:04:05.000Z")
	var b strings.Builder
	for _, node := range sortedKeys(l) {
		n := 0
		for _, line := range l[node] {
			if strings.Contains(line, key) && strings.Contains(line, when) && n < 6 {
				fmt.Fprintf(&b, "\n    node %s: %s", node, line)
				n++
			}
		}
	}
	if b.Len() == 0 {
		return "\n    (no node log line names the instant)"
	}
	return b.String()
}
