package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
	"github.com/chime-scheduler/chime/internal/testkit/firelog"
)

// Environment variables through which a run hands secrets to the
// processes it starts, kept off their command lines.
const (
	// AdminPasswordEnv is the first admin's password of the server nodes.
	AdminPasswordEnv = "CHIME_BENCH_ADMIN_PASSWORD"
	// ExecutorTokenEnv is the executors' token.
	ExecutorTokenEnv = "CHIME_TOKEN"
)

// freeAddr returns a local address no one listens on now, for a server
// node's API. Another process could take it before the node does; the
// node then fails to start, and so does the run.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("bench: finding a free port: %w", err)
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// startExecutors logs in to the first node as the admin, creates a token
// of role executor for ExecutorGroup, and starts the workload's executor
// processes, connected to the nodes in turn, and waits until every one
// registered.
func (r *run) startExecutors(ctx context.Context) error {
	c, err := apiclient.New(r.nodes[0].url, nil)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	session, err := c.Login(ctx, "admin", r.adminPassword)
	if err != nil {
		return fmt.Errorf("bench: logging in to node %s: %w", r.nodes[0].id, err)
	}
	r.adminToken = session.Token
	tok, err := c.WithToken(session.Token).CreateToken(ctx, api.Token{Name: "bench-executors", Role: api.RoleExecutor, Groups: []string{ExecutorGroup}})
	if err != nil {
		return fmt.Errorf("bench: creating the executors' token: %w", err)
	}
	for i := range r.o.Workload.Executors {
		id := fmt.Sprintf("x%02d", i+1)
		n := &node{
			id:  id,
			out: filepath.Join(r.dir, id+".fires"),
			log: filepath.Join(r.dir, id+".log"),
			via: r.nodes[i%len(r.nodes)],
		}
		n.follow = firelog.Follow(n.out)
		args := []string{ExecutorCommand, "--server", n.via.url, "--instance", id, "--out", n.out}
		if err := r.start(n, args, []string{ExecutorTokenEnv + "=" + tok.Secret}); err != nil {
			return err
		}
		r.executors = append(r.executors, n)
	}
	return waitReady(ctx, r.executors)
}

// killBusiestExecutor kills with SIGKILL the live executor running the
// most long jobs (then the one that ran most), preferring those connected
// to a live node.
func (r *run) killBusiestExecutor(records []firelog.Record) (*kill, error) {
	running, fired := busy(records)
	var busiest *node
	for _, n := range r.executors {
		if n.killed {
			continue
		}
		if busiest == nil || busiest.via.killed && !n.via.killed ||
			busiest.via.killed == n.via.killed && (running[n.id] > running[busiest.id] ||
				running[n.id] == running[busiest.id] && fired[n.id] > fired[busiest.id]) {
			busiest = n
		}
	}
	if busiest == nil {
		return nil, errors.New("bench: no live executor to kill")
	}
	busiest.killed = true
	if err := busiest.proc.Kill(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	r.log.Info("killed the busiest executor", "executor", busiest.id, "long_jobs_running", running[busiest.id])
	return &kill{node: busiest.id, at: time.Now()}, nil
}

// busy counts, by the node field of the records, the long jobs running
// (started, not ended) and the executions begun.
func busy(records []firelog.Record) (running, fired map[string]int) {
	running, fired = make(map[string]int), make(map[string]int)
	for _, rec := range records {
		switch rec.Event {
		case firelog.EventStart:
			running[rec.Node]++
		case firelog.EventEnd:
			running[rec.Node]--
		}
		if rec.IsFire() {
			fired[rec.Node]++
		}
	}
	return running, fired
}

// split counts the measured executions each executor began, original
// and recovering alike, in the executors' order.
func split(w Workload, t0 time.Time, executors []*node, records []firelog.Record) []int {
	by := make(map[string]int)
	for _, rec := range records {
		if rec.IsFire() && w.measured(t0, rec.Scheduled) {
			by[rec.Node]++
		}
	}
	out := make([]int, len(executors))
	for i, n := range executors {
		out[i] = by[n.id]
	}
	return out
}

// HistoryCheck is what the server's execution history says of a run's
// executor jobs: read through the API of a live node at the end.
type HistoryCheck struct {
	// Firings counts the measured firings the history holds.
	Firings int
	// Duplicates counts the measured firings with more than one first
	// attempt; Misses the expected ones it does not hold.
	Duplicates, Misses int
	// Unfinished counts the measured firings of jobs that request
	// recovery whose attempts did not end with exactly one succeeded,
	// the others executor_lost or node_lost, none running.
	Unfinished int
	// Recovered counts the attempts recorded executor_lost or node_lost
	// and re-run.
	Recovered int
	// Problems lists the first of each.
	Problems []string
}

// OK reports whether the history shows every firing once, finished once.
func (h *HistoryCheck) OK() bool { return h.Duplicates == 0 && h.Misses == 0 && h.Unfinished == 0 }

func (h *HistoryCheck) problem(format string, args ...any) {
	if len(h.Problems) < 20 {
		h.Problems = append(h.Problems, fmt.Sprintf(format, args...))
	}
}

// historyWait bounds how long checkHistory waits for the last attempts
// to be recorded as ended.
const historyWait = time.Minute

// checkHistory reads the executions of every job of the workload's
// executor series from a live node and counts duplicated, missed and
// unfinished firings. It waits, up to historyWait, while some measured
// firing still has an attempt running.
func (r *run) checkHistory(ctx context.Context, t0 time.Time) (*HistoryCheck, error) {
	i := slices.IndexFunc(r.nodes, func(n *node) bool { return !n.killed })
	if i < 0 {
		return nil, errors.New("bench: no live node to read the history from")
	}
	c, err := apiclient.New(r.nodes[i].url, nil)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	c = c.WithToken(r.adminToken)
	deadline := time.Now().Add(historyWait)
	for {
		h, running, err := r.readHistory(ctx, c, t0)
		if err != nil || running == 0 || time.Now().After(deadline) {
			return h, err
		}
		if err := sleepUntil(ctx, time.Now().Add(500*time.Millisecond)); err != nil {
			return nil, err
		}
	}
}

// readHistory is one pass of checkHistory; running counts the measured
// firings with an attempt still running.
func (r *run) readHistory(ctx context.Context, c *apiclient.Client, t0 time.Time) (*HistoryCheck, int, error) {
	w := r.o.Workload
	expected := w.Expected(t0)
	h := &HistoryCheck{}
	running := 0
	for _, s := range w.Series {
		if !s.OnExecutors {
			continue
		}
		for i := range s.Count {
			list, err := executions(ctx, c, s.Group, s.name(i))
			if err != nil {
				return nil, 0, err
			}
			byFiring := make(map[int64][]api.Execution)
			for _, e := range list {
				if w.measured(t0, e.ScheduledTime) {
					ms := e.ScheduledTime.UnixMilli()
					byFiring[ms] = append(byFiring[ms], e)
				}
			}
			for ms, attempts := range byFiring {
				key := firelog.FireKey{Trigger: s.key(i), ScheduledMs: ms}
				h.Firings++
				if !expected[key] {
					h.Duplicates++
					h.problem("unexpected firing %s in the history", key)
					continue
				}
				firsts, succeeded, lost, open := 0, 0, 0, false
				for _, e := range attempts {
					switch {
					case e.Attempt == 1:
						firsts++
					}
					switch e.Outcome {
					case "running":
						open = true
					case "succeeded":
						succeeded++
					case "executor_lost", "node_lost":
						lost++
					}
				}
				h.Recovered += lost
				if open {
					running++
				}
				if firsts != 1 {
					h.Duplicates++
					h.problem("firing %s has %d first attempts in the history", key, firsts)
				}
				if s.RequestsRecovery && (open || succeeded != 1 || succeeded+lost != len(attempts)) {
					h.Unfinished++
					h.problem("firing %s: %s", key, outcomes(attempts))
				}
			}
			for j := range s.Fires {
				at := s.first(t0, i).Add(time.Duration(j) * s.Interval)
				if key := (firelog.FireKey{Trigger: s.key(i), ScheduledMs: at.UnixMilli()}); expected[key] && byFiring[at.UnixMilli()] == nil {
					h.Misses++
					h.problem("firing %s is not in the history", key)
				}
			}
		}
	}
	return h, running, nil
}

// outcomes lists attempts as "1:succeeded 2:executor_lost".
func outcomes(attempts []api.Execution) string {
	slices.SortFunc(attempts, func(a, b api.Execution) int { return a.Attempt - b.Attempt })
	parts := make([]string, len(attempts))
	for i, e := range attempts {
		parts[i] = fmt.Sprintf("%d:%s", e.Attempt, e.Outcome)
	}
	return strings.Join(parts, " ")
}

// executions returns every execution of one job.
func executions(ctx context.Context, c *apiclient.Client, group, name string) ([]api.Execution, error) {
	var out []api.Execution
	q := api.ExecutionQuery{JobGroup: group, JobName: name, Limit: 500}
	for {
		list, err := c.ListExecutions(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("bench: listing the executions of %s.%s: %w", group, name, err)
		}
		out = append(out, list.Executions...)
		if list.Next == "" {
			return out, nil
		}
		q.Cursor = list.Next
	}
}
