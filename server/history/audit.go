package history

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime/store/sqlstore"
)

// AuditAction names what was done in an audit entry: a noun, a dot and a
// verb, such as "job.create". The stored text is the action's.
type AuditAction string

// AuditEntry is one change a person or a program made through the server.
type AuditEntry struct {
	// ID identifies the entry; RecordAudit fills it in when empty.
	ID string
	// Time is when the change was made; required.
	Time time.Time
	// Actor is who made it (a user name, "api-key:ci"…); required.
	Actor string
	// Action is what was done ("job.create", "trigger.pause"…); required.
	Action AuditAction
	// Target is what it was done to ("jobs/reports/nightly"…), if anything.
	Target string
	// Detail is any further data. Numbers come back as json.Number.
	Detail map[string]any
}

// RecordAudit records e, filling in e.ID when it is empty. A second record
// with one ID fails with [ErrExists].
func (h *History) RecordAudit(ctx context.Context, e *AuditEntry) error {
	return h.RecordAudits(ctx, []*AuditEntry{e})
}

// auditsPerStatement bounds the entries of one INSERT of RecordAudits: 7
// bind parameters each, under every dialect's limit.
const auditsPerStatement = 500

// RecordAudits records entries in one statement per auditsPerStatement of
// them, all or none in one transaction, filling in the IDs left empty:
// what RecordAudit does for each, with a round trip for many. An entry
// whose ID is taken fails the call with [ErrExists] and records none.
func (h *History) RecordAudits(ctx context.Context, entries []*AuditEntry) error {
	ids := make([]string, len(entries))
	args := make([]any, 0, 7*len(entries))
	for i, e := range entries {
		at := ""
		if len(entries) > 1 {
			at = fmt.Sprintf("[%d]", i)
		}
		if e == nil {
			return invalid("", "nil audit entry%s", at)
		}
		for _, f := range []struct {
			name, v  string
			required bool
		}{
			{"ID", e.ID, false}, {"Actor", e.Actor, true}, {"Action", string(e.Action), true}, {"Target", e.Target, false},
		} {
			if err := checkKey("AuditEntry"+at+"."+f.name, f.v, f.required); err != nil {
				return err
			}
		}
		if err := checkTime("AuditEntry"+at+".Time", e.Time, true); err != nil {
			return err
		}
		detail, err := encodeJSON("AuditEntry"+at+".Detail", e.Detail)
		if err != nil {
			return err
		}
		ids[i] = e.ID
		if ids[i] == "" {
			ids[i] = newID()
		}
		args = append(args, h.sched, ids[i], e.Time.UnixNano(), e.Actor, string(e.Action), e.Target, detail)
	}
	if len(entries) == 0 {
		return nil
	}
	what := "recording audit entry " + string(entries[0].Action) + " by " + entries[0].Actor
	if len(entries) > 1 {
		what = fmt.Sprintf("recording %d audit entries", len(entries))
	}
	err := h.insertAudits(ctx, args)
	switch {
	case h.st.IsUniqueViolation(err):
		if len(entries) == 1 {
			return fmt.Errorf("%w: audit entry %q", ErrExists, ids[0])
		}
		return fmt.Errorf("%w: an audit entry of the %d", ErrExists, len(entries))
	case err != nil:
		return dbErr(what, err)
	}
	for i, e := range entries {
		e.ID = ids[i]
	}
	return nil
}

// insertAudits inserts the entries whose arguments (7 each) args holds:
// one statement alone, several in one transaction.
func (h *History) insertAudits(ctx context.Context, args []any) error {
	const row = 7
	if len(args) == row {
		_, err := h.db.ExecContext(ctx, h.q.auditInsert, args...)
		return err
	}
	tx, err := h.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for chunk := range slices.Chunk(args, row*auditsPerStatement) {
		q := auditInsertHead + sqlstore.Rows(auditInsertRow, len(chunk)/row)
		if _, err := tx.ExecContext(ctx, h.st.SQL(q), chunk...); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// AuditQuery selects audit entries for [History.ListAudit]. Zero fields
// select everything.
type AuditQuery struct {
	// Actor, Action and Target select entries with exactly these values.
	Actor  string
	Action AuditAction
	Target string
	// From and To select entries by Time: From inclusive, To exclusive; a
	// zero time is no bound.
	From, To time.Time
	// Cursor continues a list: a previous AuditPage's Next.
	Cursor string
	// Limit is the page size, 1 to MaxLimit. Defaults to DefaultLimit.
	Limit int
}

// AuditPage is one page of the audit log.
type AuditPage struct {
	// Entries are newest first (by Time, then ID).
	Entries []AuditEntry
	// Next continues the list after the last entry of this page; empty on
	// the last page.
	Next string
}

// ListAudit returns a page of the audit entries q selects, newest first;
// the cursor works as List's.
func (h *History) ListAudit(ctx context.Context, q *AuditQuery) (*AuditPage, error) {
	if q == nil {
		q = &AuditQuery{}
	}
	limit, err := checkLimit("AuditQuery.Limit", q.Limit)
	if err != nil {
		return nil, err
	}
	w := where{}
	w.add("sched_name = ?", h.sched)
	for _, f := range []struct{ name, col, v string }{
		{"Actor", "actor", q.Actor}, {"Action", "action", string(q.Action)}, {"Target", "target", q.Target},
	} {
		if err := checkKey("AuditQuery."+f.name, f.v, false); err != nil {
			return nil, err
		}
		if f.v != "" {
			w.add(f.col+" = ?", f.v)
		}
	}
	if err := w.span("AuditQuery", "audit_time", q.From, q.To); err != nil {
		return nil, err
	}
	if err := w.after("AuditQuery.Cursor", "audit_time", q.Cursor); err != nil {
		return nil, err
	}
	rows, err := h.db.QueryContext(ctx, h.st.SQL("SELECT "+auditCols+" FROM {p}server_audit"+w.String()+
		" ORDER BY audit_time DESC, id DESC LIMIT ?"), append(w.args, limit+1)...)
	if err != nil {
		return nil, dbErr("listing the audit log", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		var (
			e      AuditEntry
			at     int64
			detail sql.NullString
		)
		if err := rows.Scan(&e.ID, &at, &e.Actor, &e.Action, &e.Target, &detail); err != nil {
			return nil, dbErr("listing the audit log", err)
		}
		e.Time = time.Unix(0, at).UTC()
		if err := decodeJSON(detail, &e.Detail); err != nil {
			return nil, dbErr("listing the audit log", fmt.Errorf("entry %s: detail: %w", e.ID, err))
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("listing the audit log", err)
	}
	p := &AuditPage{Entries: out}
	if len(out) > limit {
		p.Entries = out[:limit]
		last := out[limit-1]
		p.Next = encodeCursor(last.Time, last.ID)
	}
	return p, nil
}
