package chime_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/chime-scheduler/chime/schedule/cron"
)

// cronCase is one line of cron.jsonl.
type cronCase struct {
	ID      string   `json:"id"`
	Expr    string   `json:"expr"`
	TZ      string   `json:"tz"`
	After   string   `json:"after"`
	Next    []string `json:"next"`
	Horizon string   `json:"horizon"`
}

// cronParseCase is one line of cron_parse.jsonl.
type cronParseCase struct {
	ID          string   `json:"id"`
	Expr        string   `json:"expr"`
	QuartzValid bool     `json:"quartzValid"`
	Valid       bool     `json:"valid"`
	After       string   `json:"after"`
	TZ          string   `json:"tz"`
	Next        []string `json:"next"`
	Horizon     string   `json:"horizon"`
}

// checkCronCase checks the fire times of a Quartz cron expression.
func checkCronCase(line []byte) error {
	var c cronCase
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("decode case: %w", err)
	}
	expr, err := cron.ParseQuartz(c.Expr)
	if err != nil {
		return fmt.Errorf("%s: parse %q: %w", c.ID, c.Expr, err)
	}
	return compareCronFires(c.ID, expr, c.TZ, c.After, c.Next, c.Horizon, 10)
}

// checkCronParseCase checks that the parser accepts exactly the valid
// expressions, and the first fire times of the accepted ones.
func checkCronParseCase(line []byte) error {
	var c cronParseCase
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("decode case: %w", err)
	}
	expr, err := cron.ParseQuartz(c.Expr)
	if !c.Valid {
		if err == nil {
			return fmt.Errorf("%s: %q accepted as %q, want an error", c.ID, c.Expr, expr.String())
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: parse %q: %w", c.ID, c.Expr, err)
	}
	if c.After == "" {
		return nil
	}
	return compareCronFires(c.ID, expr, c.TZ, c.After, c.Next, c.Horizon, 5)
}

// compareCronFires compares the first fire times after after with want.
// A list shorter than asked means the series ends there, unless horizon is
// set: then Quartz stopped at its horizon and any further time must be
// after it. Quartz's horizon is the end of a calendar year in the zone the
// expression is evaluated in (it stops once the local year passes 2124), so
// the horizon's wall clock is read in that zone: in Pacific/Chatham,
// 2125-01-01T12:00 local is after the horizon although it is still 2124 in
// UTC.
func compareCronFires(id string, expr *cron.Expression, tz, after string, want []string, horizon string, asked int) error {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return fmt.Errorf("%s: load zone %q: %w", id, tz, err)
	}
	start, err := time.Parse(time.RFC3339Nano, after)
	if err != nil {
		return fmt.Errorf("%s: parse after %q: %w", id, after, err)
	}
	got := expr.NextN(start.In(loc), len(want)+1)
	for i, w := range want {
		wt, err := time.Parse(time.RFC3339Nano, w)
		if err != nil {
			return fmt.Errorf("%s: parse next[%d] %q: %w", id, i, w, err)
		}
		if i >= len(got) {
			return fmt.Errorf("%s: %q in %s after %s: fire %d missing, want %s", id, expr, tz, after, i, w)
		}
		if !got[i].Equal(wt) {
			return fmt.Errorf("%s: %q in %s after %s: fire %d is %s, want %s",
				id, expr, tz, after, i, formatInstant(got[i]), w)
		}
	}
	if len(want) >= asked || len(got) <= len(want) {
		return nil
	}
	extra := got[len(want)]
	if horizon == "" {
		return fmt.Errorf("%s: %q in %s after %s: series should end after %d fires, got %s",
			id, expr, tz, after, len(want), formatInstant(extra))
	}
	h, err := time.Parse(time.RFC3339Nano, horizon)
	if err != nil {
		return fmt.Errorf("%s: parse horizon %q: %w", id, horizon, err)
	}
	h = time.Date(h.Year(), h.Month(), h.Day(), h.Hour(), h.Minute(), h.Second(), h.Nanosecond(), loc)
	if !extra.After(h) {
		return fmt.Errorf("%s: %q in %s after %s: extra fire %s is not after the horizon %s",
			id, expr, tz, after, formatInstant(extra), horizon)
	}
	return nil
}

func formatInstant(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
