package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// stateComponent names the server's own tables on the store's database
// (the history, package server/history, has its own): the overlap markers
// that make a job's skip and cancel policies hold across the cluster, and
// the settings changed through the API.
const stateComponent = "runner"

func stateMigrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "overlap markers of running executions and server settings",
		Tables: []sqlstore.Table{
			{
				// One row per job with an execution running under the
				// skip or cancel overlap policy: the primary key is the
				// cluster-wide "running" marker.
				Name: "runner_overlap",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"execution_id {key} NOT NULL",
					"node_id {key} NOT NULL",
					"started_time BIGINT NOT NULL",
					"cancel_requested {bool} NOT NULL",
				},
				Primary: "sched_name, job_group, job_name",
				Indexes: []sqlstore.Index{
					{Name: "runner_overlap_node", Cols: "node_id, sched_name"},
				},
			},
			{
				Name: "runner_settings",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"name {key} NOT NULL",
					"value {json} NOT NULL",
				},
				Primary: "sched_name, name",
			},
		},
	}, {
		Version:     2,
		Description: "clock offsets the nodes report",
		Tables: []sqlstore.Table{{
			// Each node's clock offset, as it last reported it: the
			// offset is known only to the node that measures it.
			Name: "runner_node_clocks",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"node_id {key} NOT NULL",
				"offset_ns BIGINT NOT NULL",
				"reported_time BIGINT NOT NULL",
			},
			Primary: "sched_name, node_id",
		}},
	}, {
		Version:     3,
		Description: "the version and worker count the nodes report",
		Tables: []sqlstore.Table{{
			// Each node's build and worker pool, as it last reported
			// them with its clock offset. A table of its own rather than
			// columns of runner_node_clocks: creating a table is
			// idempotent on every dialect, an ALTER TABLE is not on
			// MySQL.
			Name: "runner_node_info",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"node_id {key} NOT NULL",
				"version {key} NOT NULL",
				"workers INTEGER NOT NULL",
			},
			Primary: "sched_name, node_id",
		}},
	}, {
		Version:     4,
		Description: "alert state the nodes share: dead-man records, failing jobs, claimed alerts",
		Tables: []sqlstore.Table{
			{
				// Per job with a dead-man window: when watching began,
				// what the last alert counted from and for how many
				// windows. A conditional UPDATE of base_time and windows
				// claims each alert for one node.
				Name: "runner_alert_deadman",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"first_seen BIGINT NOT NULL",
					"base_time BIGINT NOT NULL",
					"windows BIGINT NOT NULL",
					"alerted_time BIGINT NOT NULL",
				},
				Primary: "sched_name, job_group, job_name",
			},
			{
				// Per job whose failure was alerted and that has not
				// succeeded since: inserting the row claims the failure
				// alert of a streak, deleting it the recovery alert.
				Name: "runner_alert_failing",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"job_group {key} NOT NULL",
					"job_name {key} NOT NULL",
					"alerted_time BIGINT NOT NULL",
				},
				Primary: "sched_name, job_group, job_name",
			},
			{
				// One row per alert sent once cluster-wide, such as the
				// running-longer-than alert of an execution: the primary
				// key is the claim.
				Name: "runner_alert_claims",
				Columns: []string{
					"sched_name {key} NOT NULL",
					"claim {key} NOT NULL",
					"claimed_time BIGINT NOT NULL",
				},
				Primary: "sched_name, claim",
				Indexes: []sqlstore.Index{
					{Name: "runner_alert_claims_time", Cols: "sched_name, claimed_time"},
				},
			},
		},
	}}
}

// stateStore reads and writes the server's own tables.
type stateStore struct {
	st    *sqlstore.Store
	db    *sql.DB
	sched string
	q     struct {
		markerInsert, markerGet, markerDelete, markerCancel, cancelled string
		settingGet, settingInsert, settingUpdate, settingDelete        string
		clockInsert, clockUpdate, infoInsert, infoUpdate, reports      string
	}
}

func newStateStore(ctx context.Context, st *sqlstore.Store) (*stateStore, error) {
	if err := st.MigrateComponent(ctx, stateComponent, stateMigrations()); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &stateStore{st: st, db: st.DB(), sched: st.SchedulerName()}
	s.q.markerInsert = st.SQL("INSERT INTO {p}runner_overlap (sched_name, job_group, job_name, execution_id, node_id, " +
		"started_time, cancel_requested) VALUES (?, ?, ?, ?, ?, ?, ?)")
	s.q.markerGet = st.SQL("SELECT execution_id, node_id, cancel_requested FROM {p}runner_overlap " +
		"WHERE sched_name = ? AND job_group = ? AND job_name = ?")
	s.q.markerDelete = st.SQL("DELETE FROM {p}runner_overlap WHERE sched_name = ? AND job_group = ? AND job_name = ? " +
		"AND execution_id = ?")
	s.q.markerCancel = st.SQL("UPDATE {p}runner_overlap SET cancel_requested = ? WHERE sched_name = ? AND job_group = ? " +
		"AND job_name = ? AND execution_id = ?")
	s.q.cancelled = st.SQL("SELECT execution_id FROM {p}runner_overlap WHERE node_id = ? AND sched_name = ? " +
		"AND cancel_requested = ?")
	s.q.settingGet = st.SQL("SELECT value FROM {p}runner_settings WHERE sched_name = ? AND name = ?")
	s.q.settingInsert = st.SQL("INSERT INTO {p}runner_settings (sched_name, name, value) VALUES (?, ?, ?)")
	s.q.settingDelete = st.SQL("DELETE FROM {p}runner_settings WHERE sched_name = ? AND name = ?")
	s.q.settingUpdate = st.SQL("UPDATE {p}runner_settings SET value = ? WHERE sched_name = ? AND name = ?")
	s.q.clockInsert = st.SQL("INSERT INTO {p}runner_node_clocks (sched_name, node_id, offset_ns, reported_time) VALUES (?, ?, ?, ?)")
	s.q.clockUpdate = st.SQL("UPDATE {p}runner_node_clocks SET offset_ns = ?, reported_time = ? WHERE sched_name = ? AND node_id = ?")
	s.q.infoInsert = st.SQL("INSERT INTO {p}runner_node_info (sched_name, node_id, version, workers) VALUES (?, ?, ?, ?)")
	s.q.infoUpdate = st.SQL("UPDATE {p}runner_node_info SET version = ?, workers = ? WHERE sched_name = ? AND node_id = ?")
	s.q.reports = st.SQL("SELECT c.node_id, c.offset_ns, c.reported_time, i.version, i.workers FROM {p}runner_node_clocks c " +
		"LEFT JOIN {p}runner_node_info i ON i.sched_name = c.sched_name AND i.node_id = c.node_id WHERE c.sched_name = ?")
	return s, nil
}

// marker is the overlap marker of a job: the execution that runs it.
type marker struct {
	ExecutionID     string
	NodeID          string
	CancelRequested bool
}

// claimMarker inserts the job's marker for execution id on node. It
// reports false, with the current holder, when another execution holds
// it.
func (s *stateStore) claimMarker(ctx context.Context, group, name, id, node string, now time.Time) (bool, *marker, error) {
	_, err := s.db.ExecContext(ctx, s.q.markerInsert, s.sched, group, name, id, node, now.UnixNano(), false)
	if err == nil {
		return true, nil, nil
	}
	if !s.st.IsUniqueViolation(err) {
		return false, nil, fmt.Errorf("server: marking job %s.%s running: %w", group, name, err)
	}
	m, err := s.marker(ctx, group, name)
	if err != nil || m == nil {
		// Released between the insert and the read: the caller tries
		// again.
		return false, nil, err
	}
	return false, m, nil
}

// marker returns the job's marker, or nil when it has none.
func (s *stateStore) marker(ctx context.Context, group, name string) (*marker, error) {
	var m marker
	err := s.db.QueryRowContext(ctx, s.q.markerGet, s.sched, group, name).Scan(&m.ExecutionID, &m.NodeID, &m.CancelRequested)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("server: reading the running marker of job %s.%s: %w", group, name, err)
	}
	return &m, nil
}

// releaseMarker deletes the job's marker if execution id holds it.
func (s *stateStore) releaseMarker(ctx context.Context, group, name, id string) error {
	if _, err := s.db.ExecContext(ctx, s.q.markerDelete, s.sched, group, name, id); err != nil {
		return fmt.Errorf("server: releasing the running marker of job %s.%s: %w", group, name, err)
	}
	return nil
}

// requestCancel asks the node running execution id, which holds the job's
// marker, to cancel it.
func (s *stateStore) requestCancel(ctx context.Context, group, name, id string) error {
	if _, err := s.db.ExecContext(ctx, s.q.markerCancel, true, s.sched, group, name, id); err != nil {
		return fmt.Errorf("server: asking to cancel execution %s: %w", id, err)
	}
	return nil
}

// cancelRequested returns the executions of node whose cancellation
// another node asked for.
func (s *stateStore) cancelRequested(ctx context.Context, node string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q.cancelled, node, s.sched, true)
	if err != nil {
		return nil, fmt.Errorf("server: reading cancel requests: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("server: reading cancel requests: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("server: reading cancel requests: %w", err)
	}
	return ids, nil
}

// setting reads the setting name into v, reporting false when it was never
// set.
func (s *stateStore) setting(ctx context.Context, name string, v any) (bool, error) {
	var raw string
	err := s.db.QueryRowContext(ctx, s.q.settingGet, s.sched, name).Scan(&raw)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("server: reading setting %s: %w", name, err)
	}
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		return false, fmt.Errorf("server: reading setting %s: %w", name, err)
	}
	return true, nil
}

// setSetting stores v as the setting name.
func (s *stateStore) setSetting(ctx context.Context, name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("server: encoding setting %s: %w", name, err)
	}
	res, err := s.db.ExecContext(ctx, s.q.settingUpdate, string(raw), s.sched, name)
	if err != nil {
		return fmt.Errorf("server: storing setting %s: %w", name, err)
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	_, err = s.db.ExecContext(ctx, s.q.settingInsert, s.sched, name, string(raw))
	if s.st.IsUniqueViolation(err) {
		// Another node inserted it first; ours is the later write.
		_, err = s.db.ExecContext(ctx, s.q.settingUpdate, string(raw), s.sched, name)
	}
	if err != nil {
		return fmt.Errorf("server: storing setting %s: %w", name, err)
	}
	return nil
}

// errSettingTaken is what addSetting returns when the setting is set.
var errSettingTaken = errors.New("server: the setting is already set")

// addSetting stores v as the setting name if it is not set, and fails with
// errSettingTaken if it is: of nodes adding it at once, one succeeds.
func (s *stateStore) addSetting(ctx context.Context, name string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("server: encoding setting %s: %w", name, err)
	}
	_, err = s.db.ExecContext(ctx, s.q.settingInsert, s.sched, name, string(raw))
	if s.st.IsUniqueViolation(err) {
		return errSettingTaken
	}
	if err != nil {
		return fmt.Errorf("server: storing setting %s: %w", name, err)
	}
	return nil
}

// deleteSetting removes the setting name, reporting whether it was set.
func (s *stateStore) deleteSetting(ctx context.Context, name string) (bool, error) {
	res, err := s.db.ExecContext(ctx, s.q.settingDelete, s.sched, name)
	if err != nil {
		return false, fmt.Errorf("server: deleting setting %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("server: deleting setting %s: %w", name, err)
	}
	return n > 0, nil
}

// nodeReport is what a node reports about itself every DeadAfter/3.
type nodeReport struct {
	Offset   time.Duration // the node's clock minus the database's
	Reported time.Time     // on the database's clock
	// Version is the chime version the node runs, and Workers the size
	// of its worker pool; empty and zero when the node's binary predates
	// them.
	Version string
	Workers int
}

// report stores what node reports about itself at at: its clock offset,
// version and worker count.
func (s *stateStore) report(ctx context.Context, node string, r nodeReport) error {
	err := s.upsert(ctx, s.q.clockUpdate, []any{int64(r.Offset), r.Reported.UnixNano(), s.sched, node},
		s.q.clockInsert, []any{s.sched, node, int64(r.Offset), r.Reported.UnixNano()})
	if err == nil {
		err = s.upsert(ctx, s.q.infoUpdate, []any{r.Version, r.Workers, s.sched, node},
			s.q.infoInsert, []any{s.sched, node, r.Version, r.Workers})
	}
	if err != nil {
		return fmt.Errorf("server: reporting the state of node %s: %w", node, err)
	}
	return nil
}

// upsert runs update, and insert when update changed no row. A unique
// violation of the insert means the row exists: MySQL counts an update
// that changes nothing as no row.
func (s *stateStore) upsert(ctx context.Context, update string, updateArgs []any, insert string, insertArgs []any) error {
	res, err := s.db.ExecContext(ctx, update, updateArgs...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n > 0 {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, insert, insertArgs...); err != nil && !s.st.IsUniqueViolation(err) {
		return err
	}
	return nil
}

// reports returns what the nodes last reported about themselves, by node
// ID.
func (s *stateStore) reports(ctx context.Context) (map[string]nodeReport, error) {
	rows, err := s.db.QueryContext(ctx, s.q.reports, s.sched)
	if err != nil {
		return nil, fmt.Errorf("server: reading the nodes' reports: %w", err)
	}
	defer rows.Close()
	out := make(map[string]nodeReport)
	for rows.Next() {
		var id string
		var offset, at int64
		var version sql.NullString
		var workers sql.NullInt64
		if err := rows.Scan(&id, &offset, &at, &version, &workers); err != nil {
			return nil, fmt.Errorf("server: reading the nodes' reports: %w", err)
		}
		out[id] = nodeReport{Offset: time.Duration(offset), Reported: time.Unix(0, at), Version: version.String, Workers: int(workers.Int64)}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("server: reading the nodes' reports: %w", err)
	}
	return out, nil
}
