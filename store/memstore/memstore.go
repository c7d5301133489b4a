package memstore

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/chime-scheduler/chime/store"
)

// Options configure a Store.
type Options struct {
	// Now is the store's clock, used for check-ins, dead-node detection and
	// the times the store stamps on executions. Defaults to time.Now.
	Now func() time.Time
}

// Store is an in-memory [store.Store]. The zero value is not usable; create
// one with [New]. A Store is safe for concurrent use.
type Store struct {
	now func() time.Time

	mu     sync.Mutex
	closed bool

	jobs        map[store.Key]*store.JobRecord
	triggers    map[store.Key]*trigger
	jobTriggers map[store.Key]map[store.Key]struct{} // job key -> its trigger keys
	due         dueQueue                             // WAITING triggers with a next fire time

	calendars    map[string]*store.CalendarRecord
	calendarRefs map[string]int // calendar name -> triggers naming it

	pausedTriggerGroups map[string]struct{}
	pausedJobGroups     map[string]struct{}
	pausedAll           bool

	executions  map[string]*store.ExecutionRecord
	fired       map[firedKey]string // (trigger, scheduled time) -> execution ID
	running     map[string]struct{} // IDs of EXECUTING and RECOVERABLE executions
	runningJobs map[store.Key]int   // job key -> running executions
	lastExecID  uint64              // counter behind generated execution IDs
	nodes       map[string]*node    // every node ever registered
}

// trigger is a stored trigger and its place in the due queue.
type trigger struct {
	rec       store.TriggerRecord
	heapIndex int // index in Store.due, -1 when absent
}

// node is a node record; unregistered nodes are kept so that a later
// registration under the same ID gets a greater epoch.
type node struct {
	rec        store.NodeRecord
	registered bool
}

// firedKey is the unique key of an execution.
type firedKey struct {
	trigger   store.Key
	scheduled int64 // Unix nanoseconds: instants, not wall clocks, are compared
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Batcher = (*Store)(nil)
)

// New returns an empty store. opts may be nil.
func New(opts *Options) *Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Store{
		now:                 o.Now,
		jobs:                make(map[store.Key]*store.JobRecord),
		triggers:            make(map[store.Key]*trigger),
		jobTriggers:         make(map[store.Key]map[store.Key]struct{}),
		calendars:           make(map[string]*store.CalendarRecord),
		calendarRefs:        make(map[string]int),
		pausedTriggerGroups: make(map[string]struct{}),
		pausedJobGroups:     make(map[string]struct{}),
		executions:          make(map[string]*store.ExecutionRecord),
		fired:               make(map[firedKey]string),
		running:             make(map[string]struct{}),
		runningJobs:         make(map[store.Key]int),
		nodes:               make(map[string]*node),
	}
}

// Now returns the store's clock.
func (s *Store) Now(ctx context.Context) (time.Time, error) {
	if err := s.lock(ctx); err != nil {
		return time.Time{}, err
	}
	defer s.mu.Unlock()
	return s.now(), nil
}

// Close makes every later call fail with [store.ErrClosed]. Closing twice is
// harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// lock takes the store's mutex unless ctx is done or the store is closed.
// On success the caller must unlock.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	return nil
}

// checkLease returns the lease's node when the lease is current.
func (s *Store) checkLease(l store.Lease) (*node, error) {
	n, ok := s.nodes[l.NodeID]
	if !ok {
		return nil, fmt.Errorf("%w: %q", store.ErrNodeNotFound, l.NodeID)
	}
	switch {
	case !n.registered:
		return nil, fmt.Errorf("%w: node %q unregistered", store.ErrFenced, l.NodeID)
	case n.rec.Dead:
		return nil, fmt.Errorf("%w: node %q declared dead", store.ErrFenced, l.NodeID)
	case n.rec.Epoch != l.Epoch:
		return nil, fmt.Errorf("%w: node %q epoch %d, current %d", store.ErrFenced, l.NodeID, l.Epoch, n.rec.Epoch)
	}
	return n, nil
}

func copyJob(j *store.JobRecord) store.JobRecord {
	c := *j
	c.Data = bytes.Clone(j.Data)
	c.Meta = bytes.Clone(j.Meta)
	return c
}

func copyTrigger(t *store.TriggerRecord) store.TriggerRecord {
	c := *t
	c.Schedule = bytes.Clone(t.Schedule)
	c.Data = bytes.Clone(t.Data)
	c.Meta = bytes.Clone(t.Meta)
	return c
}

func copyCalendar(c *store.CalendarRecord) store.CalendarRecord {
	d := *c
	d.Data = bytes.Clone(c.Data)
	return d
}

func keyLess(a, b store.Key) bool {
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	return a.Name < b.Name
}

func keyCompare(a, b store.Key) int {
	switch {
	case keyLess(a, b):
		return -1
	case keyLess(b, a):
		return 1
	}
	return 0
}
