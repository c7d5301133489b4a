package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chime-scheduler/chime/internal/testkit/clustertest"
)

// faultKind is one kind of fault the suite injects.
type faultKind string

// The kinds of fault, in the order the figures list them.
const (
	faultKill9     faultKind = "kill9"
	faultSIGSTOP   faultKind = "sigstop"
	faultCut       faultKind = "cut"
	faultDBRestart faultKind = "dbrestart"
)

// faultOrder returns every kind of fault, in the order of the figures.
func faultOrder() []faultKind {
	return []faultKind{faultKill9, faultSIGSTOP, faultCut, faultDBRestart}
}

// fault is one fault injected.
type fault struct {
	kind  faultKind
	node  string        // empty for a database restart
	at    time.Duration // since the injector began
	start time.Time
	held  time.Duration // how long the node was down, stopped or cut off
}

func (f fault) String() string {
	target := "node=" + f.node
	if f.node == "" {
		target = "database"
	}
	return fmt.Sprintf("+%6.1fs %-9s %s for %s", f.at.Seconds(), f.kind, target, f.held.Round(10*time.Millisecond))
}

// injector injects one fault at a time into a cluster, on a schedule drawn
// from its random source.
type injector struct {
	t      *testing.T
	rng    *rand.Rand
	nodes  []*node
	kinds  []faultKind
	server clustertest.Server // restarts the database; nil without dbrestart
	began  time.Time
	faults []fault
	queue  []faultKind // the current round: every kind once, shuffled
}

// readyTimeout bounds the wait for a node to be ready again after a fault.
const readyTimeout = 90 * time.Second

// run injects faults until until: after each a pause of 2 to 6 s, then a
// kind (every kind once per round, in a shuffled order) on a random node.
// Each fault is over, and every node ready again, before the next begins.
func (in *injector) run(ctx context.Context, until time.Time) {
	in.began = time.Now()
	for {
		gap := 2*time.Second + time.Duration(in.rng.Int64N(int64(4*time.Second)))
		if time.Now().Add(gap).After(until) {
			return
		}
		if err := sleep(ctx, gap); err != nil {
			return
		}
		kind := in.next()
		n := in.nodes[in.rng.IntN(len(in.nodes))]
		f, err := in.inject(ctx, kind, n)
		if err != nil {
			in.t.Errorf("chaos: injecting %s: %v", kind, err)
			return
		}
		in.faults = append(in.faults, f)
		in.t.Logf("chaos: fault %s", f)
		if err := in.waitAllReady(ctx); err != nil {
			in.t.Errorf("chaos: after %s: %v", f, err)
			return
		}
	}
}

// next returns the next kind of fault of the current round.
func (in *injector) next() faultKind {
	if len(in.queue) == 0 {
		for _, i := range in.rng.Perm(len(in.kinds)) {
			in.queue = append(in.queue, in.kinds[i])
		}
	}
	k := in.queue[0]
	in.queue = in.queue[1:]
	return k
}

// inject injects one fault and reverts it.
func (in *injector) inject(ctx context.Context, kind faultKind, n *node) (fault, error) {
	f := fault{kind: kind, node: n.id, at: time.Since(in.began), start: time.Now()}
	var err error
	switch kind {
	case faultKill9:
		// Down for 0.5 s to twice DeadAfter: restarted under the same ID
		// before or after the others declared it dead.
		f.held = 500*time.Millisecond + time.Duration(in.rng.Int64N(int64(2*deadAfter)))
		if err = n.kill9(); err == nil {
			if err = sleep(ctx, f.held); err == nil {
				err = n.start()
			}
		}
	case faultSIGSTOP:
		// Stopped past DeadAfter: declared dead while it holds work.
		f.held = deadAfter + time.Second + time.Duration(in.rng.Int64N(int64(2*time.Second)))
		if err = n.signal(syscall.SIGSTOP); err == nil {
			serr := sleep(ctx, f.held)
			err = n.signal(syscall.SIGCONT)
			if serr != nil {
				err = serr
			}
		}
	case faultCut:
		// Half the cuts are short, 0.5 to 1.5 s: the node keeps its lease,
		// and what it writes meanwhile fails. The others are longer than
		// DeadAfter: it loses its lease, and its work is taken over.
		if in.rng.IntN(2) == 0 {
			f.held = 500*time.Millisecond + time.Duration(in.rng.Int64N(int64(time.Second)))
		} else {
			f.held = deadAfter + time.Duration(in.rng.Int64N(int64(deadAfter)))
		}
		n.proxy.Cut()
		err = sleep(ctx, f.held)
		n.proxy.Restore()
	case faultDBRestart:
		f.node = ""
		// A plain restart, or an outage longer than DeadAfter.
		var down time.Duration
		if in.rng.IntN(2) == 1 {
			down = deadAfter + time.Second
		}
		began := time.Now()
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err = in.server.Restart(rctx, down)
		cancel()
		f.held = time.Since(began)
	default:
		err = fmt.Errorf("unknown fault kind %q", kind)
	}
	return f, err
}

// waitAllReady waits until every node is ready.
func (in *injector) waitAllReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	for _, n := range in.nodes {
		if err := n.waitReady(ctx); err != nil {
			return err
		}
	}
	return nil
}

// counts returns the faults by kind, "kill9:2,sigstop:1,cut:1", in a
// fixed order; kinds not injected are left out.
func (in *injector) counts() string {
	by := make(map[faultKind]int)
	for _, f := range in.faults {
		by[f.kind]++
	}
	var parts []string
	for _, k := range faultOrder() {
		if by[k] > 0 || slices.Contains(in.kinds, k) {
			parts = append(parts, fmt.Sprintf("%s:%d", k, by[k]))
		}
	}
	return strings.Join(parts, ",")
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

// loses reports whether the fault made its node lose its lease (killed,
// stopped past DeadAfter, cut off or without its database for longer
// than DeadAfter) at some time in [from, to].
func (f fault) loses(node string, from, to time.Time) bool {
	switch {
	case f.node != node && f.node != "":
		return false
	case f.kind == faultCut || f.kind == faultDBRestart:
		if f.held < deadAfter {
			return false
		}
	}
	return !f.start.After(to) && !f.start.Add(f.held).Before(from)
}
