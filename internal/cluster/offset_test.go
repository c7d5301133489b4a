package cluster

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/logtest"
	"github.com/chime-scheduler/chime/store/memstore"
)

// driftingClock is a store clock whose offset from true time the test sets.
type driftingClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *driftingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *driftingClock) set(d time.Duration) {
	c.mu.Lock()
	c.offset = d
	c.mu.Unlock()
}

func TestClockOffsetWarningIsEdgeTriggered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		storeClock := &driftingClock{}
		st := memstore.New(&memstore.Options{Now: storeClock.now})
		logs, logger := logtest.New(slog.LevelInfo)
		m, err := New(Config{Store: st, NodeID: "n", Logger: logger, CheckInInterval: time.Second, OffsetWarning: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Start(ctx); err != nil {
			t.Fatal(err)
		}
		// Each step holds for three check-ins.
		steps := []time.Duration{0, 5 * time.Second, 5500 * time.Millisecond, 7 * time.Second, -200 * time.Millisecond, 0, -3 * time.Second}
		for _, off := range steps {
			storeClock.set(off)
			time.Sleep(3 * time.Second)
			if got := m.Offset(); got != off {
				t.Errorf("Offset() = %s, want %s", got, off)
			}
		}
		if err := m.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		type line struct {
			level  slog.Level
			msg    string
			offset time.Duration
		}
		var got []line
		for _, r := range logs.Records() {
			if v, ok := r.Attrs["clock_offset"]; ok {
				got = append(got, line{r.Level, r.Message, v.Duration()})
			}
		}
		want := []line{
			{slog.LevelWarn, "node clock differs from the store's clock; firing on corrected time", 5 * time.Second},
			// 5.5s is within the threshold of the 5s warned about: quiet.
			{slog.LevelWarn, "node clock offset from the store's clock changed; firing on corrected time", 7 * time.Second},
			{slog.LevelInfo, "node clock agrees with the store's clock again", -200 * time.Millisecond},
			{slog.LevelWarn, "node clock differs from the store's clock; firing on corrected time", -3 * time.Second},
		}
		if len(got) != len(want) {
			t.Fatalf("offset logs %+v, want %+v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("offset log %d = %+v, want %+v", i, got[i], want[i])
			}
		}
	})
}
