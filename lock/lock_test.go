package lock_test

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/dbtest"
	"github.com/chime-scheduler/chime/lock"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// eachDatabase runs test on a fresh database of every dialect, in
// parallel subtests.
func eachDatabase(t *testing.T, test func(t *testing.T, url string)) {
	t.Helper()
	t.Parallel()
	for _, db := range dbtest.Databases() {
		t.Run(db.Name, func(t *testing.T) {
			t.Parallel()
			test(t, db.URL(t))
		})
	}
}

// openStore opens a store of scheduler sched on url, closed when the test
// ends. Two stores of one scheduler stand for two processes.
func openStore(t *testing.T, url, sched string) *sqlstore.Store {
	t.Helper()
	o := &sqlstore.Options{SchedulerName: sched, Logger: slog.New(slog.DiscardHandler)}
	if !strings.HasPrefix(url, "sqlite:") {
		o.MaxOpenConns = 4
	}
	st, err := sqlstore.Open(t.Context(), url, o)
	if err != nil {
		t.Fatalf("sqlstore.Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newLocker returns a Locker on a new store of sched on url.
func newLocker(t *testing.T, url, sched string) *lock.Locker {
	t.Helper()
	l, err := lock.New(t.Context(), openStore(t, url, sched))
	if err != nil {
		t.Fatalf("lock.New: %v", err)
	}
	return l
}

// held is what hold's fn got.
type held struct {
	lease lock.Lease
	ctx   context.Context
}

// hold runs l.Run in a goroutine whose fn blocks until release is closed
// or its context ends. It returns what fn got once fn runs, and the
// channel on which Run's error arrives.
func hold(t *testing.T, l *lock.Locker, name string, opts lock.Options, release <-chan struct{}) (held, <-chan error) {
	t.Helper()
	got := make(chan held, 1)
	result := make(chan error, 1)
	go func() {
		result <- l.Run(t.Context(), name, opts, func(ctx context.Context, lease lock.Lease) error {
			got <- held{lease: lease, ctx: ctx}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
	}()
	select {
	case h := <-got:
		return h, result
	case err := <-result:
		t.Fatalf("Run returned %v before calling fn", err)
	}
	return held{}, nil
}

// runOnce runs an fn that records its lease and returns at once.
func runOnce(ctx context.Context, l *lock.Locker, name string, opts lock.Options) (lock.Lease, bool, error) {
	var got lock.Lease
	called := false
	err := l.Run(ctx, name, opts, func(_ context.Context, lease lock.Lease) error {
		got, called = lease, true
		return nil
	})
	return got, called, err
}

func TestHeldLockIsSkipped(t *testing.T) {
	eachDatabase(t, func(t *testing.T, url string) {
		sched := "test-" + rand.Text()
		a, b := newLocker(t, url, sched), newLocker(t, url, sched)
		opts := lock.Options{AtMostFor: 30 * time.Second}
		release := make(chan struct{})
		h, result := hold(t, a, "export", opts, release)

		_, called, err := runOnce(t.Context(), b, "export", opts)
		if called {
			t.Fatal("fn ran while another holder had the lock")
		}
		var he *lock.HeldError
		if !errors.Is(err, lock.ErrHeld) || !errors.As(err, &he) {
			t.Fatalf("Run on a held lock: got %v, want a *HeldError", err)
		}
		if he.Token != h.lease.Token || he.Name != "export" || !strings.Contains(he.Holder, "/") {
			t.Errorf("HeldError = %+v, want the holder's token %d", he, h.lease.Token)
		}
		if !he.Until.After(h.lease.Acquired) {
			t.Errorf("HeldError.Until %s is not after the acquisition %s", he.Until, h.lease.Acquired)
		}

		// Another name, or another scheduler's lock of the same name, is
		// another lock.
		if _, called, err := runOnce(t.Context(), b, "import", opts); err != nil || !called {
			t.Errorf("Run of another name: called %v, err %v", called, err)
		}
		other := newLocker(t, url, sched+"-other")
		if _, called, err := runOnce(t.Context(), other, "export", opts); err != nil || !called {
			t.Errorf("Run of another scheduler's lock: called %v, err %v", called, err)
		}

		close(release)
		if err := <-result; err != nil {
			t.Fatalf("holder's Run: %v", err)
		}
		lease, called, err := runOnce(t.Context(), b, "export", opts)
		if err != nil || !called {
			t.Fatalf("Run after release: called %v, err %v", called, err)
		}
		if lease.Token != h.lease.Token+1 {
			t.Errorf("token after release = %d, want %d", lease.Token, h.lease.Token+1)
		}
	})
}

func TestTokenGrowsAcrossRestarts(t *testing.T) {
	eachDatabase(t, func(t *testing.T, url string) {
		sched := "test-" + rand.Text()
		opts := lock.Options{AtMostFor: 10 * time.Second}
		l := newLocker(t, url, sched)
		var tokens []int64
		for range 3 {
			lease, _, err := runOnce(t.Context(), l, "n", opts)
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, lease.Token)
		}
		// A new process, on a new connection pool, carries on the count;
		// so does lock.Run.
		lease, _, err := runOnce(t.Context(), newLocker(t, url, sched), "n", opts)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, lease.Token)
		err = lock.Run(t.Context(), openStore(t, url, sched), "n", opts, func(_ context.Context, lease lock.Lease) error {
			tokens = append(tokens, lease.Token)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{1, 2, 3, 4, 5}
		if len(tokens) != len(want) {
			t.Fatalf("tokens = %v, want %v", tokens, want)
		}
		for i := range want {
			if tokens[i] != want[i] {
				t.Fatalf("tokens = %v, want %v", tokens, want)
			}
		}
	})
}

func TestAtLeastForKeepsTheLock(t *testing.T) {
	eachDatabase(t, func(t *testing.T, url string) {
		sched := "test-" + rand.Text()
		a, b := newLocker(t, url, sched), newLocker(t, url, sched)
		opts := lock.Options{AtMostFor: 10 * time.Second, AtLeastFor: 1500 * time.Millisecond}
		first, _, err := runOnce(t.Context(), a, "n", opts)
		if err != nil {
			t.Fatal(err)
		}
		// fn returned at once, but the lock stays taken until AtLeastFor
		// after the acquisition, on the database clock.
		_, called, err := runOnce(t.Context(), b, "n", opts)
		var he *lock.HeldError
		if called || !errors.As(err, &he) {
			t.Fatalf("Run right after a short fn: called %v, err %v; want ErrHeld", called, err)
		}
		if want := first.Acquired.Add(opts.AtLeastFor); !he.Until.Equal(want) {
			t.Errorf("held until %s, want the acquisition plus AtLeastFor, %s", he.Until, want)
		}
		second := acquireEventually(t, b, "n", opts)
		if second.Acquired.Before(he.Until) {
			t.Errorf("acquired again at %s, before AtLeastFor ended at %s", second.Acquired, he.Until)
		}
	})
}

// acquireEventually runs l.Run until it calls fn, for up to a minute,
// and returns the lease fn got.
func acquireEventually(t *testing.T, l *lock.Locker, name string, opts lock.Options) lock.Lease {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		lease, called, err := runOnce(t.Context(), l, name, opts)
		switch {
		case called && err == nil:
			return lease
		case !errors.Is(err, lock.ErrHeld):
			t.Fatalf("Run: called %v, err %v", called, err)
		}
		time.Sleep(20 * time.Millisecond) // polling another holder's lease
	}
	t.Fatalf("lock %q was not free within a minute", name)
	return lock.Lease{}
}

func TestLeaseLapsesAfterAtMostForWithoutRenewal(t *testing.T) {
	eachDatabase(t, func(t *testing.T, url string) {
		sched := "test-" + rand.Text()
		deadStore := openStore(t, url, sched)
		dead, err := lock.New(t.Context(), deadStore)
		if err != nil {
			t.Fatal(err)
		}
		b := newLocker(t, url, sched)
		opts := lock.Options{AtMostFor: 600 * time.Millisecond}
		release := make(chan struct{})
		defer close(release)
		h, result := hold(t, dead, "n", opts, release)
		// The holder loses its database: it can renew no more.
		if err := deadStore.Close(); err != nil {
			t.Fatal(err)
		}
		var last *lock.HeldError
		deadline := time.Now().Add(time.Minute)
		var lease lock.Lease
		for {
			got, called, err := runOnce(t.Context(), b, "n", opts)
			if called {
				lease = got
				break
			}
			if !errors.As(err, &last) {
				t.Fatalf("Run while the holder was cut off: %v", err)
			}
			if time.Now().After(deadline) {
				t.Fatal("the lease did not lapse within a minute")
			}
			time.Sleep(20 * time.Millisecond) // polling the lapse
		}
		if last == nil {
			t.Fatal("the lock was free at once after the holder was cut off")
		}
		if lease.Acquired.Before(last.Until) {
			t.Errorf("taken over at %s, before the lease lapsed at %s", lease.Acquired, last.Until)
		}
		if lease.Token != h.lease.Token+1 {
			t.Errorf("token = %d, want %d", lease.Token, h.lease.Token+1)
		}
		// The cut-off holder's fn learned it lost the lease.
		<-h.ctx.Done()
		if cause := context.Cause(h.ctx); !errors.Is(cause, lock.ErrLost) {
			t.Errorf("cut-off holder's context cause = %v, want ErrLost", cause)
		}
		if err := <-result; !errors.Is(err, lock.ErrLost) {
			t.Errorf("cut-off holder's Run = %v, want ErrLost", err)
		}
	})
}

func TestContextCancelledWhenLeaseIsTaken(t *testing.T) {
	eachDatabase(t, func(t *testing.T, url string) {
		sched := "test-" + rand.Text()
		st := openStore(t, url, sched)
		a, err := lock.New(t.Context(), st)
		if err != nil {
			t.Fatal(err)
		}
		b := newLocker(t, url, sched)
		opts := lock.Options{AtMostFor: 3 * time.Second}
		release := make(chan struct{})
		defer close(release)
		h, result := hold(t, a, "n", opts, release)
		// As if the holder had been paused past its lease: the database
		// lets the lease lapse, and another holder takes the lock.
		if _, err := st.DB().ExecContext(t.Context(),
			st.SQL("UPDATE {p}lock_leases SET locked_until = {now} WHERE lock_name = ?"), "n"); err != nil {
			t.Fatal(err)
		}
		lease, called, err := runOnce(t.Context(), b, "n", lock.Options{AtMostFor: time.Minute})
		if err != nil || !called {
			t.Fatalf("Run after the lapse: called %v, err %v", called, err)
		}
		if lease.Token != h.lease.Token+1 {
			t.Errorf("token = %d, want %d", lease.Token, h.lease.Token+1)
		}
		// The first holder's next renewal is refused.
		<-h.ctx.Done()
		if cause := context.Cause(h.ctx); !errors.Is(cause, lock.ErrLost) || !strings.Contains(cause.Error(), "refused") {
			t.Errorf("context cause = %v, want a refused renewal (ErrLost)", cause)
		}
		if err := <-result; !errors.Is(err, lock.ErrLost) {
			t.Errorf("Run = %v, want ErrLost", err)
		}
	})
}

func TestFnErrorIsReturnedAndReleases(t *testing.T) {
	eachDatabase(t, func(t *testing.T, url string) {
		l := newLocker(t, url, "test-"+rand.Text())
		opts := lock.Options{AtMostFor: time.Minute}
		boom := errors.New("boom")
		err := l.Run(t.Context(), "n", opts, func(context.Context, lock.Lease) error { return boom })
		if !errors.Is(err, boom) || errors.Is(err, lock.ErrLost) {
			t.Fatalf("Run = %v, want fn's error alone", err)
		}
		if _, called, err := runOnce(t.Context(), l, "n", opts); err != nil || !called {
			t.Fatalf("Run after a failed fn: called %v, err %v", called, err)
		}
	})
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	l := newLocker(t, dbtest.SQLiteURL(t), "test")
	fn := func(context.Context, lock.Lease) error { return nil }
	tests := []struct {
		name string
		lock string
		opts lock.Options
		fn   func(context.Context, lock.Lease) error
	}{
		{"empty name", "", lock.Options{AtMostFor: time.Second}, fn},
		{"long name", strings.Repeat("x", 201), lock.Options{AtMostFor: time.Second}, fn},
		{"no AtMostFor", "n", lock.Options{}, fn},
		{"negative AtLeastFor", "n", lock.Options{AtMostFor: time.Second, AtLeastFor: -1}, fn},
		{"AtLeastFor above AtMostFor", "n", lock.Options{AtMostFor: time.Second, AtLeastFor: 2 * time.Second}, fn},
		{"nil fn", "n", lock.Options{AtMostFor: time.Second}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := l.Run(t.Context(), tc.lock, tc.opts, tc.fn); !errors.Is(err, lock.ErrInvalid) {
				t.Errorf("Run = %v, want ErrInvalid", err)
			}
		})
	}
	if _, err := lock.New(t.Context(), nil); !errors.Is(err, lock.ErrInvalid) {
		t.Errorf("New(nil) = %v, want ErrInvalid", err)
	}
}
