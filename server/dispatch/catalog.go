package dispatch

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// catalogComponent names the tables of the catalog, what the executors of
// each group have ever advertised: {p}executor_catalog_…. It is a
// component of its own because the executors' rows are pruned a day
// after their lease lapsed, while a job saved for a group must stay
// savable when the group's executors are all down.
const catalogComponent = "executor_catalog"

// catalogMigrations are the catalog's schema, oldest first.
func catalogMigrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "the handlers the executors of each group have ever advertised",
		Tables: []sqlstore.Table{{
			Name: "executor_catalog_handlers",
			Columns: []string{
				"sched_name {key} NOT NULL",
				"grp {key} NOT NULL",
				"handler {key} NOT NULL",
				// When an executor first advertised it, on the database's
				// clock.
				"first_seen BIGINT NOT NULL",
			},
			Primary: "sched_name, grp, handler",
		}},
	}}
}

// catalogQueries are the catalog's statements.
type catalogQueries struct {
	handlers, insert, any, executors string
}

func renderCatalogQueries(render func(string) string) catalogQueries {
	return catalogQueries{
		handlers: render(`SELECT handler FROM {p}executor_catalog_handlers WHERE sched_name = ? AND grp = ? ORDER BY handler`),
		insert: render(`INSERT INTO {p}executor_catalog_handlers (sched_name, grp, handler, first_seen)
			VALUES (?, ?, ?, {now})`),
		any:       render(`SELECT COUNT(*) FROM {p}executor_catalog_handlers WHERE sched_name = ?`),
		executors: render(`SELECT grp, handlers FROM {p}dispatch_executors WHERE sched_name = ?`),
	}
}

// catalogHandlers returns the handlers the executors of group have ever
// advertised, in byte order.
func (s *Service) catalogHandlers(ctx context.Context, group string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.cq.handlers, s.sched, group)
	if err != nil {
		return nil, fmt.Errorf("dispatch: reading the catalog of group %q: %w", group, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("dispatch: reading the catalog of group %q: %w", group, err)
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return out, rows.Err()
}

// recordHandlers adds to the catalog the handlers of group it lacks. Two
// nodes adding the same one at once is harmless: the second's insert
// is a unique violation, ignored.
func (s *Service) recordHandlers(ctx context.Context, group string, handlers []string) error {
	known, err := s.catalogHandlers(ctx, group)
	if err != nil {
		return err
	}
	for _, h := range handlers {
		if slices.Contains(known, h) {
			continue
		}
		if _, err := s.db.ExecContext(ctx, s.cq.insert, s.sched, group, h); err != nil && !s.st.IsUniqueViolation(err) {
			return fmt.Errorf("dispatch: recording handler %q of group %q: %w", h, group, err)
		}
	}
	return nil
}

// fillCatalog fills an empty catalog from the executors registered
// before it existed, so that their jobs stay savable.
func (s *Service) fillCatalog(ctx context.Context) error {
	var n int
	if err := s.db.QueryRowContext(ctx, s.cq.any, s.sched).Scan(&n); err != nil {
		return fmt.Errorf("dispatch: reading the catalog: %w", err)
	}
	if n > 0 {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, s.cq.executors, s.sched)
	if err != nil {
		return fmt.Errorf("dispatch: reading the executors: %w", err)
	}
	byGroup := make(map[string][]string)
	for rows.Next() {
		var (
			group    string
			handlers sql.NullString
			list     []string
		)
		if err := rows.Scan(&group, &handlers); err != nil {
			rows.Close()
			return fmt.Errorf("dispatch: reading the executors: %w", err)
		}
		if err := decodeJSON(handlers, &list); err != nil {
			rows.Close()
			return fmt.Errorf("dispatch: reading the executors: %w", err)
		}
		byGroup[group] = append(byGroup[group], list...)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("dispatch: reading the executors: %w", err)
	}
	for group, handlers := range byGroup {
		slices.Sort(handlers)
		if err := s.recordHandlers(ctx, group, slices.Compact(handlers)); err != nil {
			return err
		}
	}
	return nil
}

// CheckAdvertised refuses a target, for the job's field prefix
// ("executor"), whose group no executor has ever registered in (a
// *FieldError on field.group), or whose handler no executor of the group
// has ever advertised (on field.handler), unless it allows unregistered
// ones. The executors need not be live: the catalog remembers what they
// advertised after their rows are pruned.
func (s *Service) CheckAdvertised(ctx context.Context, field string, t api.ExecutorTarget) error {
	if t.AllowUnregistered {
		return nil
	}
	known, err := s.catalogHandlers(ctx, t.Group)
	if err != nil {
		return err
	}
	escape := fmt.Sprintf("start one first, or set %s.allow_unregistered to save the job before its executors register", field)
	if len(known) == 0 {
		return invalid(field+".group", "no executor of group %q has ever registered with this server; %s", t.Group, escape)
	}
	if slices.Contains(known, t.Handler) {
		return nil
	}
	list := known
	more := ""
	if len(list) > 10 {
		list, more = list[:10], fmt.Sprintf(" and %d more", len(known)-10)
	}
	return invalid(field+".handler", "no executor of group %q has ever advertised handler %q (they advertised %s%s); %s",
		t.Group, t.Handler, strings.Join(list, ", "), more, escape)
}
