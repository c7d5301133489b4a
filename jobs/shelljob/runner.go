package shelljob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/chime-scheduler/chime/jobs"
)

// DefaultGracePeriod is Runner.GracePeriod's default.
const DefaultGracePeriod = 5 * time.Second

// Runner runs the commands of "shell" jobs. Its zero value is ready to
// use, and it is safe for concurrent use.
type Runner struct {
	// GracePeriod is how long a command that is being stopped has between
	// SIGTERM and SIGKILL. It also bounds how long Run waits, once the
	// command's process group is dead, for output from processes that
	// left the group. Defaults to DefaultGracePeriod.
	GracePeriod time.Duration
	// Allow, when not nil, says which programs may run: Run refuses any
	// other before starting anything. Nil runs whatever a Spec names,
	// for a program that vets its specs itself.
	Allow *AllowList
}

// Result describes how a command ended.
type Result struct {
	// ExitCode is the command's exit status, or -1 when a signal ended
	// it.
	ExitCode int
	// Duration is how long the command ran.
	Duration time.Duration
}

// ExitError is the error Run returns for a command that exited with a
// status other than zero, or was ended by a signal it did not get from
// Run.
type ExitError struct {
	// Code is the exit status, or -1 when a signal ended the command.
	Code int
	// Signal is the signal that ended the command; nil when it exited.
	Signal os.Signal
}

// Error describes how the command ended.
func (e *ExitError) Error() string {
	if e.Signal != nil {
		return "shelljob: command killed by a signal: " + e.Signal.String()
	}
	return fmt.Sprintf("shelljob: command exited with status %d", e.Code)
}

// Run runs spec's command, with its templates expanded over v, and waits
// for it. Its stdout and stderr both go to out, interleaved as written;
// pass a *jobs.Capture to bound what is kept. A nil out discards them.
// Stdin is empty.
//
// The command runs as the leader of a new process group, and nothing of
// that group outlives Run: when spec.Timeout passes or ctx ends, the group
// gets SIGTERM, then SIGKILL after the Runner's grace period; when the
// command exits by itself, whatever it left running in its group is killed.
// Processes that leave the group (setsid, daemons, job control) escape
// this; Run stops reading their output after the grace period.
//
// Run returns a *jobs.FieldError when spec is invalid or its program is
// not in the Runner's allow-list, a template fails to
// expand or spec.Dir does not exist (nothing runs then), an *ExitError when
// the command fails, and an error wrapping context.DeadlineExceeded when
// spec.Timeout stopped it, or ctx's error (and cause) when ctx did. The
// Result is non-nil whenever the command started.
func (r *Runner) Run(ctx context.Context, spec Spec, v jobs.Vars, out io.Writer) (*Result, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if r.Allow != nil {
		if err := r.Allow.Check(spec); err != nil {
			return nil, err
		}
	}
	argv, env, err := spec.command(v)
	if err != nil {
		return nil, err
	}
	if err := checkDir(spec.Dir); err != nil {
		return nil, err
	}
	if out == nil {
		out = io.Discard
	}
	parent := ctx
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}
	if ctx.Err() != nil {
		return nil, stopError(parent, ctx, spec.Timeout)
	}

	// One pipe carries both stdout and stderr, so that they interleave as
	// the command wrote them. The command gets the write end as a file,
	// which exec.Cmd.Wait does not wait on: Run decides how long to read.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("shelljob: %w", err)
	}
	defer pr.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = env, spec.Dir, pw, pw
	startInGroup(cmd)
	start := time.Now()
	err = cmd.Start()
	_ = pw.Close()
	if err != nil {
		return nil, fmt.Errorf("shelljob: %w", err)
	}
	waitErr, outErr, stopped := supervise(ctx, cmd, pr, out, cmp.Or(r.GracePeriod, DefaultGracePeriod))
	res := &Result{ExitCode: cmd.ProcessState.ExitCode(), Duration: time.Since(start)}

	var exitErr *exec.ExitError
	switch {
	case stopped:
		return res, stopError(parent, ctx, spec.Timeout)
	case errors.As(waitErr, &exitErr):
		return res, &ExitError{Code: exitErr.ExitCode(), Signal: exitSignal(exitErr.ProcessState)}
	case waitErr != nil:
		return res, fmt.Errorf("shelljob: %w", waitErr)
	case outErr != nil:
		return res, fmt.Errorf("shelljob: writing the command's output: %w", outErr)
	}
	return res, nil
}

// checkDir reports whether dir, when set, is an existing directory.
func checkDir(dir string) error {
	if dir == "" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &jobs.FieldError{Field: "shell.dir", Message: "no such directory " + strconv.Quote(dir), Err: err}
	case err != nil:
		return &jobs.FieldError{Field: "shell.dir", Message: err.Error(), Err: err}
	case !fi.IsDir():
		return &jobs.FieldError{Field: "shell.dir", Message: "not a directory: " + strconv.Quote(dir)}
	}
	return nil
}

// supervise waits for cmd, started in a process group of its own, while
// copying its output from pr to out. When ctx ends first it stops the
// group: SIGTERM, then SIGKILL after grace. Either way it kills whatever is
// left of the group once the command has exited, and then reads the output
// until its end, or for at most grace more, since a process that left the
// group may hold it open forever. It returns cmd.Wait's error, the
// output's error, and whether ctx stopped the command.
func supervise(ctx context.Context, cmd *exec.Cmd, pr *os.File, out io.Writer, grace time.Duration) (waitErr, outErr error, stopped bool) {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	drained := make(chan error, 1)
	go func() { drained <- drain(out, pr) }()

	var leaderDone, outputDone bool
	select {
	case waitErr = <-exited:
		leaderDone = true
	case <-ctx.Done():
		stopped = true
		terminateGroup(cmd.Process)
		// The group has the grace period to end: the leader exits and the
		// last process holding the output closes it.
		timer := time.NewTimer(grace)
	terminating:
		for !leaderDone || !outputDone {
			select {
			case waitErr = <-exited:
				leaderDone = true
			case outErr = <-drained:
				outputDone = true
			case <-timer.C:
				break terminating
			}
		}
		timer.Stop()
	}
	// Once the leader is reaped its pid is free, but the kernel does not
	// hand out a pid still in use as a process group id: while any member
	// of the group lives, the id is this group's.
	killGroup(cmd.Process)
	if !leaderDone {
		waitErr = <-exited
	}
	if !outputDone {
		timer := time.NewTimer(grace)
		select {
		case outErr = <-drained:
		case <-timer.C:
			// A process outside the group holds the pipe open. Closing
			// the read end ends drain; that process's later writes fail.
			_ = pr.Close()
			outErr = <-drained
		}
		timer.Stop()
	}
	return waitErr, outErr, stopped
}

// drain copies the command's output from r to out until r ends or is
// closed. When out fails it keeps reading, so that the command never
// blocks on a full pipe, and returns out's error.
func drain(out io.Writer, r io.Reader) error {
	var writeErr error
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 && writeErr == nil {
			_, writeErr = out.Write(buf[:n])
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				return writeErr
			}
			return cmp.Or(writeErr, err)
		}
	}
}

// stopError says why ctx, a child of parent with the spec's timeout (or
// parent itself), ended the command. It wraps the context's error, and
// parent's cancellation cause when it has one.
func stopError(parent, ctx context.Context, timeout time.Duration) error {
	if parent.Err() == nil {
		return fmt.Errorf("shelljob: command ran longer than its %s timeout and was stopped: %w", timeout, ctx.Err())
	}
	err := parent.Err()
	//nolint:errorlint // identity: was the context cancelled with a cause of its own?
	if cause := context.Cause(parent); cause != err {
		return fmt.Errorf("shelljob: command stopped (%w): %w", cause, err)
	}
	return fmt.Errorf("shelljob: command stopped: %w", err)
}
