package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/chime-scheduler/chime/store"
)

// calendarUpsertSQL replaces a calendar.
func (d *dialect) calendarUpsertSQL() string {
	return sqlCalendarInsert + d.upsert("{p}calendars", "sched_name, calendar_name", []string{"calendar_data"})
}

// CalendarUpsert stores a calendar; without Replace an existing name fails
// with [store.ErrCalendarExists].
func (s *Store) CalendarUpsert(ctx context.Context, p *store.CalendarUpsertParams) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	c := &p.Calendar
	if err := checkJSON("calendar "+c.Name, c.Data); err != nil {
		return err
	}
	tmpl := sqlCalendarInsert
	if p.Replace {
		tmpl = s.d.calendarUpsertSQL()
	}
	err := s.write(ctx, "storing a calendar", func(tx *txn) error {
		_, err := tx.exec(tmpl, s.sched, c.Name, jsonArg(c.Data))
		return err
	})
	return s.translate(fmt.Sprintf("storing calendar %q", c.Name), err, nil, store.ErrCalendarExists)
}

// CalendarGet returns a calendar or [store.ErrCalendarNotFound].
func (s *Store) CalendarGet(ctx context.Context, name string) (*store.CalendarRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	c, err := scanCalendar(s.db.QueryRowContext(ctx, s.q(sqlCalendarGet), s.sched, name))
	if err != nil {
		return nil, s.translate(fmt.Sprintf("reading calendar %q", name), err, store.ErrCalendarNotFound, nil)
	}
	return &c, nil
}

// CalendarDelete deletes a calendar and reports whether it existed. It fails
// with [store.ErrCalendarInUse] while a trigger references the calendar.
func (s *Store) CalendarDelete(ctx context.Context, name string) (bool, error) {
	if err := s.enter(ctx); err != nil {
		return false, err
	}
	var existed bool
	err := s.write(ctx, "deleting a calendar", func(tx *txn) error {
		existed = false
		_, err := scanCalendar(tx.queryRow(sqlCalendarGetForUpdate, s.sched, name))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		var refs int
		if err := tx.queryRow(sqlCalendarRefs, s.sched, name).Scan(&refs); err != nil {
			return err
		}
		if refs > 0 {
			return fmt.Errorf("%w: %q by %d triggers", store.ErrCalendarInUse, name, refs)
		}
		existed = true
		_, err = tx.exec(sqlCalendarDelete, s.sched, name)
		return err
	})
	if err != nil {
		return false, s.translate(fmt.Sprintf("deleting calendar %q", name), err, nil, nil)
	}
	return existed, nil
}

// CalendarList returns every calendar ordered by name.
func (s *Store) CalendarList(ctx context.Context) ([]store.CalendarRecord, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, s.q(sqlCalendarList), s.sched)
	cals, err := collect(rows, err, scanCalendar)
	if err != nil {
		return nil, s.translate("listing calendars", err, nil, nil)
	}
	return cals, nil
}
