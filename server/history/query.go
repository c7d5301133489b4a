package history

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// where builds the WHERE clause of a list, with its arguments in order.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

// String returns " WHERE cond AND cond…", or "" for no condition.
func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// job selects a job (group and name), a group (name empty) or everything
// (both empty). owner prefixes the field names in errors ("Query" gives
// Query.JobGroup); without one they are group and name.
func (w *where) job(owner, group, name string) error {
	gf, nf := "group", "name"
	if owner != "" {
		gf, nf = owner+".JobGroup", owner+".JobName"
	}
	if err := checkKey(gf, group, false); err != nil {
		return err
	}
	if err := checkKey(nf, name, false); err != nil {
		return err
	}
	if name != "" && group == "" {
		return invalid(nf, "%q without %s: a job is named by both", name, gf)
	}
	if group != "" {
		w.add("job_group = ?", group)
	}
	if name != "" {
		w.add("job_name = ?", name)
	}
	return nil
}

// span selects rows whose col is in [from, to); a zero time is no bound.
// owner prefixes the field names in errors as in job.
func (w *where) span(owner, col string, from, to time.Time) error {
	ff, tf := "from", "to"
	if owner != "" {
		ff, tf = owner+".From", owner+".To"
	} else if to.IsZero() {
		ff = "since"
	}
	if err := checkTime(ff, from, false); err != nil {
		return err
	}
	if err := checkTime(tf, to, false); err != nil {
		return err
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return invalid(ff, "%s is not before %s %s", from.Format(time.RFC3339Nano), tf, to.Format(time.RFC3339Nano))
	}
	if !from.IsZero() {
		w.add(col+" >= ?", from.UnixNano())
	}
	if !to.IsZero() {
		w.add(col+" < ?", to.UnixNano())
	}
	return nil
}

// after selects the rows after a cursor in the order (col DESC, id DESC).
func (w *where) after(field, col, cursor string) error {
	if cursor == "" {
		return nil
	}
	t, id, err := decodeCursor(cursor)
	if err != nil {
		return invalid(field, "%q: not a cursor this server returned", cursor)
	}
	w.add("("+col+" < ? OR ("+col+" = ? AND id < ?))", t, t, id)
	return nil
}

// A cursor is a position in a list ordered newest first: the time and ID
// of the last row of a page, as "<unix nanoseconds>:<id>" in unpadded
// URL-safe base64. Clients treat it as opaque.
func encodeCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixNano(), 10) + ":" + id))
}

func decodeCursor(c string) (int64, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", err
	}
	ns, id, ok := strings.Cut(string(b), ":")
	if !ok || id == "" || len(id) > maxKey {
		return 0, "", strconv.ErrSyntax
	}
	t, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return 0, "", err
	}
	return t, id, nil
}
