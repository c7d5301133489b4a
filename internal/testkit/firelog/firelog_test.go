package firelog

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestWriteThenRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fires")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.UnixMilli(1_700_000_000_123)
	want := []Record{
		{Trigger: "load.t0001", Scheduled: at, Actual: at.Add(5 * time.Millisecond), Node: "a", Event: EventFire},
		{Trigger: "slow.s1", Scheduled: at, Actual: at, Node: "b", Recovering: true, Event: EventStart},
		{Trigger: "slow.s1", Scheduled: at, Actual: at.Add(time.Second), Node: "b", Recovering: true, Event: EventCancel, Detail: CauseLeaseLost},
	}
	for _, r := range want {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Trigger != w.Trigger || !g.Scheduled.Equal(w.Scheduled) || !g.Actual.Equal(w.Actual) || g.Node != w.Node ||
			g.Recovering != w.Recovering || g.Event != w.Event || g.Detail != w.Detail {
			t.Errorf("record %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestFireLineHasFiveFields(t *testing.T) {
	line, err := Record{Trigger: "g.t", Scheduled: time.UnixMilli(1000), Actual: time.UnixMilli(1002), Node: "n1"}.line()
	if err != nil {
		t.Fatal(err)
	}
	if want := "g.t,1000,1002,n1,false\n"; line != want {
		t.Errorf("line = %q, want %q", line, want)
	}
}

func TestParseRejectsMalformedLines(t *testing.T) {
	for _, line := range []string{
		"g.t,1000,1002,n1",
		"g.t,x,1002,n1,false",
		"g.t,1000,1002,n1,maybe",
		"g.t,1000,1002,n1,false,explode",
	} {
		if _, err := Parse(line); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", line)
		}
	}
}

func TestWriteRefusesCommas(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "fires"))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Write(Record{Trigger: "a,b", Node: "n"}); err == nil {
		t.Error("Write accepted a trigger key with a comma")
	}
}

func TestReadMissingFileHasNoRecords(t *testing.T) {
	recs, err := Read(filepath.Join(t.TempDir(), "none"))
	if err != nil || len(recs) != 0 {
		t.Errorf("Read = %v, %v; want no records and no error", recs, err)
	}
}

func TestFollowerReturnsEachCompletedLineOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fires")
	f := Follow(path)
	if recs, err := f.Next(); err != nil || len(recs) != 0 {
		t.Fatalf("Next on a missing file = %v, %v; want nothing", recs, err)
	}
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	steps := []struct {
		write string
		want  []string // triggers of the records Next returns
	}{
		{"g.a,1000,1001,n1,false\ng.b,1000,1002,n1,false\ng.c,10", []string{"g.a", "g.b"}},
		{"00,1003,n1,false\n", []string{"g.c"}},
		{"", nil},
		{"g.d,2000,2001,n2,true,start\n", []string{"g.d"}},
	}
	for i, s := range steps {
		if _, err := file.WriteString(s.write); err != nil {
			t.Fatal(err)
		}
		recs, err := f.Next()
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Trigger)
		}
		if !slices.Equal(got, s.want) {
			t.Errorf("step %d: Next returned %v, want %v", i, got, s.want)
		}
	}
}

// TestReadLeavesOutAHalfWrittenLine reads a file whose last line a writer
// has not finished: the complete lines are read, the half line left out
// rather than refused as malformed.
func TestReadLeavesOutAHalfWrittenLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fires")
	at := time.UnixMilli(1_700_000_000_123)
	whole, err := Record{Trigger: "load.t0001", Scheduled: at, Actual: at, Node: "b", Event: EventFire}.line()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(whole+"load.t0002,1700000000123,1700000000125,b,fa"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(got) != 1 || got[0].Trigger != "load.t0001" {
		t.Errorf("Read = %+v, want the one complete line", got)
	}
}
