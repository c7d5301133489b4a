package lock_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/chime-scheduler/chime/lock"
	"github.com/chime-scheduler/chime/store/sqlstore"
)

// A nightly export runs on one process of the cluster at a time; the
// others skip it. Its writes carry the fencing token.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "chime-lock-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := sqlstore.Open(ctx, "sqlite:"+filepath.Join(dir, "chime.db"),
		&sqlstore.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	opts := lock.Options{AtMostFor: 10 * time.Minute, AtLeastFor: 30 * time.Second}
	err = lock.Run(ctx, st, "nightly-export", opts, func(ctx context.Context, lease lock.Lease) error {
		fmt.Println("exporting with fencing token", lease.Token)

		// Meanwhile another process (here, another call) finds the lock
		// held and skips its run.
		err := lock.Run(ctx, st, "nightly-export", opts, func(context.Context, lock.Lease) error {
			fmt.Println("never printed")
			return nil
		})
		fmt.Println("second run skipped:", errors.Is(err, lock.ErrHeld))
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}

	// The export returned, but AtLeastFor keeps the lock for 30 s after it
	// began.
	err = lock.Run(ctx, st, "nightly-export", opts, func(context.Context, lock.Lease) error { return nil })
	fmt.Println("run right after skipped:", errors.Is(err, lock.ErrHeld))
	// Output:
	// exporting with fencing token 1
	// second run skipped: true
	// run right after skipped: true
}
