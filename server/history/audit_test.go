package history_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/server/history"
)

func testAudit(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	var all []history.AuditEntry // newest first
	for i := range 12 {
		e := &history.AuditEntry{
			Time:   t0.Add(time.Duration(i/2) * time.Minute), // two entries a minute
			Actor:  []string{"ann", "ci-key"}[i%2],
			Action: []history.AuditAction{"job.create", "trigger.pause", "job.delete"}[i%3],
			Target: fmt.Sprintf("jobs/g/job%d", i%4),
			Detail: map[string]any{"i": i},
		}
		if i == 0 {
			e.Detail = nil
		}
		if err := h.RecordAudit(ctx, e); err != nil {
			t.Fatalf("RecordAudit #%d: %v", i, err)
		}
		stored := *e
		if stored.Detail != nil {
			stored.Detail = map[string]any{"i": json.Number(fmt.Sprint(i))}
		}
		all = append([]history.AuditEntry{stored}, all...)
	}
	// Entries of one minute are ordered by their random IDs.
	for i := 0; i+1 < len(all); i += 2 {
		if all[i].ID < all[i+1].ID {
			all[i], all[i+1] = all[i+1], all[i]
		}
	}

	var got []history.AuditEntry
	q := &history.AuditQuery{Limit: 5}
	for pages := 1; ; pages++ {
		p, err := h.ListAudit(ctx, q)
		if err != nil {
			t.Fatalf("ListAudit page %d: %v", pages, err)
		}
		got = append(got, p.Entries...)
		if p.Next == "" {
			if pages != 3 {
				t.Errorf("read %d pages of 5 for 12 entries, want 3", pages)
			}
			break
		}
		q.Cursor = p.Next
	}
	equal(t, "paged audit log", got, all)

	pick := func(keep func(e history.AuditEntry) bool) []history.AuditEntry {
		var out []history.AuditEntry
		for _, e := range all {
			if keep(e) {
				out = append(out, e)
			}
		}
		return out
	}
	tests := []struct {
		name string
		q    history.AuditQuery
		want []history.AuditEntry
	}{
		{"Actor", history.AuditQuery{Actor: "ann"}, pick(func(e history.AuditEntry) bool { return e.Actor == "ann" })},
		{"Action", history.AuditQuery{Action: "job.delete"}, pick(func(e history.AuditEntry) bool { return e.Action == "job.delete" })},
		{"Target", history.AuditQuery{Target: "jobs/g/job1", Actor: "ci-key"},
			pick(func(e history.AuditEntry) bool { return e.Target == "jobs/g/job1" && e.Actor == "ci-key" })},
		{"Range", history.AuditQuery{From: t0.Add(time.Minute), To: t0.Add(3 * time.Minute)},
			pick(func(e history.AuditEntry) bool {
				return !e.Time.Before(t0.Add(time.Minute)) && e.Time.Before(t0.Add(3*time.Minute))
			})},
	}
	for _, tc := range tests {
		p, err := h.ListAudit(ctx, &tc.q)
		if err != nil {
			t.Errorf("%s: ListAudit: %v", tc.name, err)
			continue
		}
		equal(t, tc.name, p.Entries, tc.want)
	}

	dup := &history.AuditEntry{ID: all[0].ID, Time: t0, Actor: "ann", Action: "x"}
	if err := h.RecordAudit(ctx, dup); !errors.Is(err, history.ErrExists) {
		t.Errorf("RecordAudit with a taken ID: %v, want ErrExists", err)
	}
	bad := []struct {
		name string
		e    history.AuditEntry
		want string
	}{
		{"NoActor", history.AuditEntry{Time: t0, Action: "x"}, "Actor"},
		{"NoAction", history.AuditEntry{Time: t0, Actor: "ann"}, "Action"},
		{"NoTime", history.AuditEntry{Actor: "ann", Action: "x"}, "Time"},
		{"BadDetail", history.AuditEntry{Time: t0, Actor: "ann", Action: "x", Detail: map[string]any{"c": make(chan int)}}, "Detail"},
	}
	for _, tc := range bad {
		wantInvalid(t, tc.name, h.RecordAudit(ctx, &tc.e), tc.want)
	}
	_, err := h.ListAudit(ctx, &history.AuditQuery{Cursor: "%%%"})
	wantInvalid(t, "ListAudit with a bad cursor", err, "Cursor")
	if p, err := h.ListAudit(ctx, nil); err != nil || len(p.Entries) != 12 {
		t.Errorf("ListAudit after refused records: %d entries, %v; want 12", len(p.Entries), err)
	}
}

// testAuditMany records 1,201 entries in one RecordAudits (three
// statements of at most 500 rows) and finds each listed with the ID it
// got; then a batch with one taken ID records none of its entries, and
// one with an invalid entry names it by its index.
func testAuditMany(t *testing.T, open opener) {
	h := open(nil)
	ctx := t.Context()
	entries := make([]*history.AuditEntry, 1201)
	for i := range entries {
		entries[i] = &history.AuditEntry{Time: t0.Add(time.Duration(i) * time.Second), Actor: "ann", Action: "job.create",
			Target: fmt.Sprintf("jobs/g/job%d", i), Detail: map[string]any{"batch": 1201}}
	}
	if err := h.RecordAudits(ctx, entries); err != nil {
		t.Fatalf("RecordAudits: %v", err)
	}
	byID := make(map[string]string)
	q := &history.AuditQuery{Limit: 500}
	for {
		p, err := h.ListAudit(ctx, q)
		if err != nil {
			t.Fatalf("ListAudit: %v", err)
		}
		for _, e := range p.Entries {
			byID[e.ID] = e.Target
		}
		if p.Next == "" {
			break
		}
		q.Cursor = p.Next
	}
	if len(byID) != len(entries) {
		t.Errorf("listed %d entries, want %d", len(byID), len(entries))
	}
	for i, e := range entries {
		if e.ID == "" || byID[e.ID] != e.Target {
			t.Fatalf("entry %d: ID %q lists target %q, want %q", i, e.ID, byID[e.ID], e.Target)
		}
	}

	again := []*history.AuditEntry{
		{Time: t0, Actor: "bob", Action: "x"},
		{ID: entries[7].ID, Time: t0, Actor: "bob", Action: "x"},
	}
	if err := h.RecordAudits(ctx, again); !errors.Is(err, history.ErrExists) {
		t.Errorf("RecordAudits with a taken ID: %v, want ErrExists", err)
	}
	if p, err := h.ListAudit(ctx, &history.AuditQuery{Actor: "bob"}); err != nil || len(p.Entries) != 0 {
		t.Errorf("entries of the refused batch: %d, %v; want none", len(p.Entries), err)
	}
	err := h.RecordAudits(ctx, []*history.AuditEntry{{Time: t0, Actor: "bob", Action: "x"}, {Time: t0, Action: "x"}})
	wantInvalid(t, "RecordAudits with an entry without actor", err, "AuditEntry[1].Actor")
}
