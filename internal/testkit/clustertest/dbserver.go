package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// Server controls a database server running on this machine, for the
// scenario that restarts it. Restarting disrupts every other user of the
// server, so only that scenario uses it, and only when asked to.
type Server interface {
	// Restart stops the server, keeps it down for downFor, starts it
	// again and returns once it accepts connections.
	Restart(ctx context.Context, downFor time.Duration) error
	// EnsureRunning starts the server when it is down and returns once it
	// accepts connections.
	EnsureRunning(ctx context.Context) error
}

// PostgresServer is the local PostgreSQL cluster managed by pg_ctlcluster
// (Debian's postgresql-common): the only version under /etc/postgresql,
// cluster "main".
type PostgresServer struct{}

func (PostgresServer) version() (string, error) {
	entries, err := os.ReadDir("/etc/postgresql")
	if err != nil {
		return "", fmt.Errorf("postgres: find the cluster version: %w", err)
	}
	if len(entries) != 1 {
		return "", fmt.Errorf("postgres: %d versions under /etc/postgresql, want 1", len(entries))
	}
	return entries[0].Name(), nil
}

func postgresReady(ctx context.Context) error {
	return command(ctx, "pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432")
}

// Restart runs pg_ctlcluster restart, or stop and start downFor apart.
func (s PostgresServer) Restart(ctx context.Context, downFor time.Duration) error {
	v, err := s.version()
	if err != nil {
		return err
	}
	if downFor == 0 {
		if err := command(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", v, "main", "restart"); err != nil {
			return err
		}
		return waitUntil(ctx, postgresReady)
	}
	if err := command(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", v, "main", "stop"); err != nil {
		return err
	}
	if err := sleep(ctx, downFor); err != nil {
		return err
	}
	return s.EnsureRunning(ctx)
}

// EnsureRunning starts the cluster unless pg_isready says it accepts
// connections.
func (s PostgresServer) EnsureRunning(ctx context.Context) error {
	if postgresReady(ctx) == nil {
		return nil
	}
	v, err := s.version()
	if err != nil {
		return err
	}
	// Fails when the cluster is running already but not ready yet; the wait
	// below decides.
	startErr := command(ctx, "pg_ctlcluster", "--skip-systemctl-redirect", v, "main", "start")
	if err := waitUntil(ctx, postgresReady); err != nil {
		return errors.Join(startErr, err)
	}
	return nil
}

// MariaDBServer is the local MariaDB server /usr/sbin/mariadbd, run by
// start-stop-daemon and reached as root over TCP on 127.0.0.1.
type MariaDBServer struct{}

const mariadbd = "/usr/sbin/mariadbd"

func mariadbPing(ctx context.Context) error {
	return command(ctx, "mysqladmin", "--protocol=tcp", "-h127.0.0.1", "-uroot", "ping")
}

// Restart shuts the server down, waits until its process is gone and
// downFor more, starts it again and waits until it answers.
func (MariaDBServer) Restart(ctx context.Context, downFor time.Duration) error {
	if err := command(ctx, "mysqladmin", "--protocol=tcp", "-h127.0.0.1", "-uroot", "shutdown"); err != nil {
		return err
	}
	// start-stop-daemon --start --oknodo does nothing while the old process
	// still runs, so wait until it is gone.
	err := waitUntil(ctx, func(ctx context.Context) error {
		if command(ctx, "start-stop-daemon", "--status", "--exec", mariadbd) == nil {
			return errors.New("mariadbd still running")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := sleep(ctx, downFor); err != nil {
		return err
	}
	return MariaDBServer{}.EnsureRunning(ctx)
}

// EnsureRunning starts the server unless it is running, and waits until it
// answers.
func (MariaDBServer) EnsureRunning(ctx context.Context) error {
	if mariadbPing(ctx) == nil {
		return nil
	}
	if err := command(ctx, "start-stop-daemon", "--start", "--oknodo", "--background", "--exec", mariadbd); err != nil {
		return err
	}
	return waitUntil(ctx, mariadbPing)
}

// command runs a command and returns its output in the error when it
// fails.
func command(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %v: %w: %s", name, args, err, out)
	}
	return nil
}

// waitUntil polls check every 200ms until it succeeds or ctx ends.
func waitUntil(ctx context.Context, check func(context.Context) error) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %w)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
