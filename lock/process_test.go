package lock_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/nodeproc"
	"github.com/chime-scheduler/chime/lock"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// The test binary acts as a holder process when helperEnv is set: it
// opens the store at urlEnv as scheduler schedEnv, and calls lock.Run in a
// loop for durationEnv, recording what it did in the file outEnv.
const (
	helperEnv   = "LOCK_TEST_HELPER"
	urlEnv      = "LOCK_TEST_URL"
	schedEnv    = "LOCK_TEST_SCHED"
	outEnv      = "LOCK_TEST_OUT"
	durationEnv = "LOCK_TEST_DURATION"
)

// soakEnv sets how long TestProcesses runs its holders (a Go duration);
// the issue asks for a minute. Defaults to processDuration.
const soakEnv = "CHIME_LOCK_SOAK"

const (
	processDuration = 15 * time.Second
	processCount    = 5
	// processLease is the holders' AtMostFor: renewed every 667 ms, it
	// leaves room for a slow round trip on a loaded machine.
	processLease = 2 * time.Second
	// lockName is the lock the holders share.
	lockName = "nightly-export"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		if err := holder(); err != nil {
			fmt.Fprintln(os.Stderr, "holder:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fenceMigrations are the fenced-write table of the process test: one row
// whose token a write may only raise, as a store that honours fencing
// tokens would keep it.
func fenceMigrations() []sqlstore.Migration {
	return []sqlstore.Migration{{
		Version:     1,
		Description: "the fenced writes of the lock process test",
		Tables: []sqlstore.Table{{
			Name:    "locktest_fence",
			Columns: []string{"id INTEGER NOT NULL", "token BIGINT NOT NULL", "writes BIGINT NOT NULL"},
			Primary: "id",
		}},
		Statements: []string{"INSERT INTO {p}locktest_fence (id, token, writes) VALUES (1, 0, 0)"},
	}}
}

// Record kinds, one a line of a holder's file: "<kind> <token> <unix ns>"
// for a start or an end, "<kind> <token> <sent unix ns> <answered unix ns>"
// for a fenced write. A write is applied somewhere between the two: a
// holder may be stopped after it took the time and before the database
// saw the write, or after the write and before it read the answer.
const (
	recStart   = "start"   // fn began
	recEnd     = "end"     // fn is returning
	recWrote   = "wrote"   // a fenced write was accepted
	recRefused = "refused" // a fenced write was refused: a higher token had written
)

// holder is the child process: it runs lock.Run in a loop until its
// duration ends. fn holds the lock for 150 to 550 ms, making a fenced
// write every 50 ms, and a last one when it ends, even when its context
// was cancelled: the writes ignore fn's context on purpose, standing for
// the writes of a process paused past its lease, which only the fence can
// stop.
func holder() error {
	d, err := time.ParseDuration(os.Getenv(durationEnv))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	st, err := sqlstore.Open(ctx, os.Getenv(urlEnv), &sqlstore.Options{
		SchedulerName: os.Getenv(schedEnv), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	defer st.Close()
	l, err := lock.New(ctx, st)
	if err != nil {
		return err
	}
	out, err := os.OpenFile(os.Getenv(outEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	record := func(kind string, token int64, at time.Time) error {
		// One write a line, so that a kill -9 leaves whole lines.
		_, err := fmt.Fprintf(out, "%s %d %d\n", kind, token, at.UnixNano())
		return err
	}
	recordWrite := func(kind string, token int64, sent, answered time.Time) error {
		_, err := fmt.Fprintf(out, "%s %d %d %d\n", kind, token, sent.UnixNano(), answered.UnixNano())
		return err
	}
	write := st.SQL("UPDATE {p}locktest_fence SET token = ?, writes = writes + 1 WHERE id = 1 AND token <= ?")
	fmt.Println(nodeproc.ReadyLine)
	for ctx.Err() == nil {
		err := l.Run(ctx, lockName, lock.Options{AtMostFor: processLease}, func(ctx context.Context, lease lock.Lease) error {
			if err := record(recStart, lease.Token, time.Now()); err != nil {
				return err
			}
			fenced := func() error {
				sent := time.Now()
				res, err := st.DB().ExecContext(context.WithoutCancel(ctx), write, lease.Token, lease.Token)
				if err != nil {
					return err
				}
				n, err := res.RowsAffected()
				if err != nil {
					return err
				}
				kind := recWrote
				if n == 0 {
					kind = recRefused
				}
				return recordWrite(kind, lease.Token, sent, time.Now())
			}
			steps := 3 + mrand.IntN(9)
			for i := 0; i < steps && ctx.Err() == nil; i++ {
				time.Sleep(50 * time.Millisecond) // the work fn does
				if err := fenced(); err != nil {
					return err
				}
			}
			// The result, written whether or not the lease was lost
			// meanwhile, as a careless fn would.
			if err := fenced(); err != nil {
				return err
			}
			return record(recEnd, lease.Token, time.Now())
		})
		switch {
		case err == nil, errors.Is(err, lock.ErrHeld), errors.Is(err, lock.ErrLost), ctx.Err() != nil:
		default:
			return err
		}
		time.Sleep(time.Duration(mrand.IntN(100)) * time.Millisecond) // between runs, as a schedule would
	}
	return nil
}

// record is one line of a holder's file.
type record struct {
	proc  int
	kind  string
	token int64
	at    time.Time // when fn began or ended, or when a write was sent
	// answered is when a write's answer came back; zero for a start or
	// an end.
	answered time.Time
}

// readRecords reads holder proc's file.
func readRecords(t *testing.T, path string, proc int) []record {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		write := len(fields) > 0 && (fields[0] == recWrote || fields[0] == recRefused)
		want := 3
		if write {
			want = 4
		}
		if len(fields) != want {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		token, err1 := strconv.ParseInt(fields[1], 10, 64)
		ns, err2 := strconv.ParseInt(fields[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad line %q", path, sc.Text())
		}
		r := record{proc: proc, kind: fields[0], token: token, at: time.Unix(0, ns)}
		if write {
			ns, err := strconv.ParseInt(fields[3], 10, 64)
			if err != nil {
				t.Fatalf("%s: bad line %q", path, sc.Text())
			}
			r.answered = time.Unix(0, ns)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// holding reports whether holder proc's file ends inside fn, and with
// which token.
func holding(t *testing.T, path string, proc int) (int64, bool) {
	t.Helper()
	recs := readRecords(t, path, proc)
	if len(recs) == 0 || recs[len(recs)-1].kind == recEnd {
		return 0, false
	}
	return recs[len(recs)-1].token, true
}

// TestProcesses runs five holder processes of one lock, kills one with
// SIGKILL while it holds the lock and pauses another with SIGSTOP while it
// holds it, past its lease, then resumes it. The intervals in which fn ran
// never overlap, except the paused holder's with its successors', and the
// paused holder's write after it resumed is refused by its token.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: skipped with -short")
	}
	duration := processDuration
	if v := os.Getenv(soakEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", soakEnv, err)
		}
		duration = d
	}
	eachDatabase(t, func(t *testing.T, url string) {
		sched := "test-" + rand.Text()
		st := openStore(t, url, sched)
		if err := st.MigrateComponent(t.Context(), "locktest", fenceMigrations()); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		files := make([]string, processCount)
		procs := make([]*nodeproc.Process, processCount)
		for i := range procs {
			files[i] = filepath.Join(dir, fmt.Sprintf("holder-%d", i))
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=1", urlEnv+"="+url, schedEnv+"="+sched,
				outEnv+"="+files[i], durationEnv+"="+duration.String())
			cmd.Stderr = os.Stderr
			p, err := nodeproc.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			procs[i] = p
			t.Cleanup(func() { _ = p.Kill() })
		}
		for _, p := range procs {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			err := p.WaitReady(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
		started := time.Now()

		// A third of the way in, kill -9 a holder.
		sleepUntil(started.Add(duration / 3))
		killed, killedAt := -1, time.Time{}
		for killed < 0 {
			for i, p := range procs {
				if _, ok := holding(t, files[i], i); ok {
					if err := p.Kill(); err != nil {
						t.Fatal(err)
					}
					killed, killedAt = i, time.Now()
					break
				}
			}
			time.Sleep(5 * time.Millisecond) // polling the holders' files
		}
		t.Logf("killed holder %d", killed)

		// Halfway, SIGSTOP another holder while it holds the lock, until
		// the lock has changed hands twice, then SIGCONT it.
		sleepUntil(started.Add(duration / 2))
		stopped, stoppedToken := -1, int64(0)
		var stoppedAt, resumedAt time.Time
		for stopped < 0 {
			for i, p := range procs {
				if i == killed {
					continue
				}
				if _, ok := holding(t, files[i], i); !ok {
					continue
				}
				stop := time.Now()
				if err := syscall.Kill(p.PID(), syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				// Read again now that it cannot write: it may have left fn
				// in between.
				if token, ok := holding(t, files[i], i); ok {
					stopped, stoppedToken, stoppedAt = i, token, stop
					break
				}
				if err := syscall.Kill(p.PID(), syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(5 * time.Millisecond) // polling the holders' files
		}
		for !tokenStarted(t, files, stoppedToken+2) {
			if time.Since(stoppedAt) > time.Minute {
				t.Fatal("no other holder took the lock within a minute of the SIGSTOP")
			}
			time.Sleep(20 * time.Millisecond) // polling the holders' files
		}
		resumedAt = time.Now()
		if err := syscall.Kill(procs[stopped].PID(), syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		t.Logf("stopped holder %d with token %d for %s", stopped, stoppedToken, resumedAt.Sub(stoppedAt))

		for i, p := range procs {
			if i == killed {
				continue
			}
			select {
			case <-p.Exited():
				if err := p.ExitErr(); err != nil {
					t.Errorf("holder %d: %v", i, err)
				}
			case <-time.After(duration + time.Minute):
				t.Fatalf("holder %d did not end", i)
			}
		}

		var recs []record
		for i := range files {
			recs = append(recs, readRecords(t, files[i], i)...)
		}
		checkIntervals(t, recs, killed, killedAt, stoppedToken, stoppedAt)
		checkFence(t, recs, stoppedToken, resumedAt)
	})
}

// sleepUntil sleeps until at: the scenario's faults come at set points of
// its run.
func sleepUntil(at time.Time) { time.Sleep(time.Until(at)) }

// tokenStarted reports whether any holder's fn began with token.
func tokenStarted(t *testing.T, files []string, token int64) bool {
	t.Helper()
	for i, f := range files {
		for _, r := range readRecords(t, f, i) {
			if r.kind == recStart && r.token >= token {
				return true
			}
		}
	}
	return false
}

// interval is one run of fn.
type interval struct {
	proc       int
	token      int64
	start, end time.Time
}

// checkIntervals checks that every token was given once, in the order of
// the runs, and that no run overlaps the next one except the paused
// holder's, whose successor began after the pause. The killed holder's
// last run ends at the kill.
func checkIntervals(t *testing.T, recs []record, killed int, killedAt time.Time, stoppedToken int64, stoppedAt time.Time) {
	t.Helper()
	byToken := map[int64]*interval{}
	for _, r := range recs {
		switch r.kind {
		case recStart:
			if prev, ok := byToken[r.token]; ok {
				t.Fatalf("token %d given to holder %d and holder %d", r.token, prev.proc, r.proc)
			}
			byToken[r.token] = &interval{proc: r.proc, token: r.token, start: r.at}
		case recEnd:
			byToken[r.token].end = r.at
		}
	}
	var runs []*interval
	for _, iv := range byToken {
		if iv.end.IsZero() {
			if iv.proc != killed {
				t.Errorf("token %d (holder %d): fn began and never ended", iv.token, iv.proc)
				continue
			}
			iv.end = killedAt
		}
		runs = append(runs, iv)
	}
	slices.SortFunc(runs, func(a, b *interval) int { return int(a.token - b.token) })
	if len(runs) < 10 {
		t.Fatalf("only %d runs of fn", len(runs))
	}
	for i := 1; i < len(runs); i++ {
		prev, cur := runs[i-1], runs[i]
		if !cur.start.After(prev.start) {
			t.Errorf("token %d (holder %d) began at %s, not after token %d (holder %d) at %s",
				cur.token, cur.proc, cur.start, prev.token, prev.proc, prev.start)
		}
		if prev.token == stoppedToken {
			// The paused holder's lease lapsed while it was stopped.
			if !cur.start.After(stoppedAt) {
				t.Errorf("token %d (holder %d) began at %s, before its predecessor was stopped at %s",
					cur.token, cur.proc, cur.start, stoppedAt)
			}
			continue
		}
		if !cur.start.After(prev.end) {
			t.Errorf("token %d (holder %d) began at %s, before token %d (holder %d) ended at %s",
				cur.token, cur.proc, cur.start, prev.token, prev.proc, prev.end)
		}
	}
	t.Logf("%d runs of fn, tokens %d to %d", len(runs), runs[0].token, runs[len(runs)-1].token)
}

// checkFence checks the fence from the writes' windows, each from the
// moment it was sent to the moment its answer came back, since a write is
// applied at some unknown point between the two:
//   - an accepted write was sent before any write with a higher token was
//     answered as accepted: the database never took a lower token after
//     a higher one;
//   - a refused write was answered after some write with a higher token
//     was sent: it was refused for a reason;
//   - the paused holder made a write answered after it resumed, and every
//     write it sent after it resumed was refused.
func checkFence(t *testing.T, recs []record, stoppedToken int64, resumedAt time.Time) {
	t.Helper()
	var accepted []record
	for _, r := range recs {
		if r.kind == recWrote {
			accepted = append(accepted, r)
		}
	}
	refusedLate := false
	for _, r := range recs {
		switch r.kind {
		case recWrote:
			for _, w := range accepted {
				if w.token > r.token && w.answered.Before(r.at) {
					t.Errorf("holder %d's write with token %d, sent at %s, was accepted after holder %d's with token %d had been at %s",
						r.proc, r.token, r.at, w.proc, w.token, w.answered)
					break
				}
			}
			if r.token == stoppedToken && r.at.After(resumedAt) {
				t.Errorf("the paused holder %d wrote with token %d after it resumed", r.proc, r.token)
			}
		case recRefused:
			if r.token == stoppedToken && r.answered.After(resumedAt) {
				refusedLate = true
			}
			if !slices.ContainsFunc(accepted, func(w record) bool { return w.token > r.token && w.at.Before(r.answered) }) {
				t.Errorf("holder %d's write with token %d (sent at %s, answered at %s) was refused, and no higher token had written",
					r.proc, r.token, r.at, r.answered)
			}
		}
	}
	if !refusedLate {
		t.Errorf("the paused holder made no refused write with token %d after it resumed", stoppedToken)
	}
}
