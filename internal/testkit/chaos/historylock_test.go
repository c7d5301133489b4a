package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// TestNodeKilledBeforeItsHistoryIsWrittenLosesNoRun runs jobs on node a
// while the history's executions table takes no writes (another session
// holds a lock on it that lets readers in), so that a's runs end with
// their starts and ends queued in its history writer; then it kills a with
// SIGKILL, lifts the lock and starts node b. Every run the target
// answered must be in the history, as succeeded or as node_lost, the runs
// of the job that requests recovery re-run, and nothing left running.
// A node that recorded a run's end in the scheduler before its history
// took it (docs/reliability.md, "History lost by a node killed just after
// a database outage") fails it.
func TestNodeKilledBeforeItsHistoryIsWrittenLosesNoRun(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: two chime server processes per database; skipped with -short")
	}
	for _, d := range databases() {
		if d.server == nil {
			continue // SQLite locks the whole file: no table can be locked alone
		}
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			testKilledBeforeHistory(t, d)
		})
	}
}

func testKilledBeforeHistory(t *testing.T, d database) {
	ctx := context.Background()
	url := d.url(t)
	bin := binary(t)
	dir := t.TempDir()
	a := newNode(t, bin, "a", dir, url, "")
	b := newNode(t, bin, "b", dir, url, "")
	nodes := []*node{a, b}
	stopAtCleanup(t, nodes)
	startCluster(t, nodes[:1])
	client := login(t, a)

	jobs := []soakJob{
		{name: "quick", schedule: `{"kind":"simple","interval":"1s"}`, every: time.Second},
		{name: "quick-recover", schedule: `{"kind":"simple","interval":"1s"}`, every: time.Second, recovery: true},
	}
	tg := newTarget(t, map[string]behaviour{})
	start := time.Now().Add(3 * time.Second).Truncate(time.Second)
	end := start.Add(6*time.Second + 500*time.Millisecond)
	for _, j := range jobs {
		putJob(t, client, j, tg.URL, start, end)
	}
	auditJobs := checkInstants(t, client, jobs, start, end)

	release := lockHistory(t, url)
	locked := time.Now()
	waitTarget(t, tg, func(byJob map[string]int) bool { return byJob["quick"] >= 3 && byJob["quick-recover"] >= 3 })
	if err := a.kill9(); err != nil {
		t.Fatal(err)
	}
	release()
	t.Logf("node a killed after the target answered %d runs the history could not take", tg.count())

	if err := b.start(); err != nil {
		t.Fatal(err)
	}
	readyCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := b.waitReady(readyCtx); err != nil {
		t.Fatal(err)
	}
	client = login(t, b)
	if err := sleep(ctx, time.Until(end)); err != nil {
		t.Fatal(err)
	}
	if !settle(t, client, tg) {
		t.Errorf("the cluster did not settle within %s of the last instant", settleTimeout)
	}

	// Node a could record nothing from the lock on, then died: for the
	// audit, it was lost from the lock on, so that its runs the target
	// answered meanwhile may be recorded node_lost.
	faults := []fault{{kind: faultKill9, node: a.id, start: locked, held: time.Since(locked)}}
	res := auditCluster(t, client, auditJobs, tg, faults)
	t.Logf("instants=%d fired=%d explained=%d requests=%d executions=%d reruns=%d explained_by=%v",
		len(res.verdicts), res.count(classFired), res.count(classExplained), res.requests, res.executions, res.reruns, res.explainedBy)
	logs := nodeLogs(nodes)
	for _, v := range res.failures() {
		t.Errorf("%s%s", v, logs.about(v.ids))
	}
	for _, e := range res.running {
		t.Errorf("execution %s of %s is still running on node %s after the cluster settled", e.ID, e.JobName, e.NodeID)
	}
	if res.reruns == 0 {
		t.Errorf("no run of quick-recover was re-run after node a was killed")
	}
}

// lockHistory takes a lock on the history's executions table that lets
// other sessions read it but not write it, and returns what lifts it.
func lockHistory(t *testing.T, url string) (release func()) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlstore.Open(ctx, url, &sqlstore.Options{IdleInTransactionTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	table := st.TablePrefix() + "server_executions"
	var unlock func() error
	switch st.Dialect() {
	case sqlstore.Postgres:
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, "LOCK TABLE "+table+" IN SHARE MODE"); err != nil {
			t.Fatalf("lock %s: %v", table, err)
		}
		unlock = tx.Rollback
	case sqlstore.MySQL:
		if _, err := conn.ExecContext(ctx, "LOCK TABLES "+table+" READ"); err != nil {
			t.Fatalf("lock %s: %v", table, err)
		}
		unlock = func() error {
			_, err := conn.ExecContext(ctx, "UNLOCK TABLES")
			return err
		}
	default:
		t.Fatalf("no table lock on %s", st.Dialect())
	}
	released := false
	release = func() {
		if released {
			return
		}
		released = true
		if err := unlock(); err != nil {
			t.Errorf("unlock %s: %v", table, err)
		}
		_ = conn.Close()
	}
	t.Cleanup(release)
	return release
}

// waitTarget waits until done holds for the requests the target received,
// counted by job.
func waitTarget(t *testing.T, tg *target, done func(byJob map[string]int) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		reqs, _ := tg.received()
		byJob := make(map[string]int)
		for _, r := range reqs {
			byJob[r.Job]++
		}
		if done(byJob) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the target received %v in 30s, not the runs the test waits for", byJob)
		}
		// Polling: the runs happen in another process.
		time.Sleep(50 * time.Millisecond)
	}
}
