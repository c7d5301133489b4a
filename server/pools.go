package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chime-scheduler/chime"
	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/schedule"
	"github.com/chime-scheduler/chime/server/history"
	"github.com/chime-scheduler/chime/server/internal/httpjson"
	"github.com/chime-scheduler/chime/server/pool"
)

// Audit actions of the pools.
const (
	auditPoolCreate history.AuditAction = "pool.create"
	auditPoolUpdate history.AuditAction = "pool.update"
	auditPoolDelete history.AuditAction = "pool.delete"
)

// defaultPoolMaxWait is a job's pool_max_wait when it gives none.
const defaultPoolMaxWait = time.Minute

// poolRecheck is how often a firing that waited its maximum and waits on
// (see poolVerdict) checks again whether a later firing stands for it.
const poolRecheck = time.Second

// poolPlan is a job's pool: which, and how long a firing waits for it.
type poolPlan struct {
	name    string
	maxWait time.Duration
}

// compilePool checks a job's pool settings; the pool's existence is
// checked on write (checkPoolRef), not here, so that a node still runs a
// job whose pool was deleted.
func compilePool(st jobSettings) (*poolPlan, *api.Error) {
	if st.Pool == "" {
		if st.PoolMaxWait != "" {
			return nil, invalidf("pool", "is required with pool_max_wait (%q); to leave the pool, clear both", st.PoolMaxWait)
		}
		return nil, nil
	}
	if err := pool.CheckName("pool", st.Pool); err != nil {
		var fe *pool.InvalidError
		if errors.As(err, &fe) {
			return nil, invalidf(fe.Field, "%s", fe.Reason)
		}
		return nil, invalidf("pool", "%v", err)
	}
	wait, err := parseDuration("pool_max_wait", st.PoolMaxWait)
	if err != nil {
		return nil, err
	}
	switch {
	case st.PoolMaxWait == "":
		wait = defaultPoolMaxWait
	case wait == 0:
		return nil, invalidf("pool_max_wait", "%q: want more than 0; a firing waits for the pool's next look at least", st.PoolMaxWait)
	}
	return &poolPlan{name: st.Pool, maxWait: wait}, nil
}

// checkPoolRef refuses a job that names a pool that does not exist.
func (s *Server) checkPoolRef(ctx context.Context, p *plan) error {
	if p.pool == nil {
		return nil
	}
	_, err := s.pools.Get(ctx, p.pool.name)
	if errors.Is(err, pool.ErrNotFound) {
		return invalidf("pool", "no pool is named %q; create it first (PUT /api/v1/pools/%s)", p.pool.name, p.pool.name)
	}
	return err
}

// poolVerdict is what a firing that waited its pool_max_wait does.
type poolVerdict int

const (
	// poolWaitOn keeps waiting (IGNORE_MISFIRE_POLICY: every firing runs).
	poolWaitOn poolVerdict = iota
	// poolSkip skips the firing (DO_NOTHING and the RESCHEDULE_NEXT
	// instructions: missed fire times are passed over).
	poolSkip
	// poolOnce skips the firing only when a later firing of the job
	// waits behind it, which stands for it; otherwise it waits on (the
	// smart policy and the fire-now instructions: missed fire times
	// collapse into one run).
	poolOnce
)

// poolVerdictOf maps a firing trigger's misfire instruction to what a
// firing does once it waited its pool_max_wait.
func poolVerdictOf(m schedule.MisfireInstruction) poolVerdict {
	switch m {
	case schedule.MisfireIgnore:
		return poolWaitOn
	case schedule.MisfireDoNothing, schedule.MisfireRescheduleNextWithRemainingCount, schedule.MisfireRescheduleNextWithExistingCount:
		return poolSkip
	}
	return poolOnce
}

// takePool waits for a slot of the job's pool for a, in the pool's
// order, across the cluster. Once a waited pool_max_wait, the firing
// trigger's misfire instruction decides (poolVerdictOf). It returns the
// function that releases the slot, or ok false with the reason to record
// the firing as skipped. A pool deleted since the job was saved limits
// nothing.
func (s *Server) takePool(ctx context.Context, jc *chime.JobContext, a *attempt, pp *poolPlan) (release func(), reason string, ok bool) {
	t := pool.Ticket{ID: a.id, Pool: pp.name, NodeID: s.NodeID(), JobGroup: a.job.Group, JobName: a.job.Name, Scheduled: a.scheduled}
	instr := schedule.MisfireSmartPolicy
	if jc.Trigger != nil && jc.Trigger.MisfireInstruction != "" {
		instr = jc.Trigger.MisfireInstruction
	}
	verdict := poolVerdictOf(instr)
	// free releases the slot; not named release, the result the returns
	// below set, which a closure calling it would then call itself.
	free := func() {
		_ = s.writes.persist(context.WithoutCancel(ctx), a.log, "the release of a pool slot", func(ctx context.Context) error {
			return s.pools.Release(ctx, pp.name, a.id)
		})
	}
	// hold is release for a slot the firing runs in: should the node fail
	// to renew the slot's lease in time, the run is cancelled before any
	// other node may take the slot back (see pool.Service.Hold).
	hold := func() func() {
		stop := s.pools.Hold(a.id, func(cause error) { s.local.cancel(a.id, cause) })
		return func() {
			stop()
			free()
		}
	}
	// leave withdraws the firing from the queue; a slot granted meanwhile
	// is released, unless the firing takes it (use).
	leave := func(use bool) bool {
		granted, err := s.pools.Withdraw(context.WithoutCancel(ctx), a.id)
		if err != nil {
			a.log.Warn("cannot leave the pool's queue; its lease frees the place", "pool", pp.name, "error", err)
		}
		if granted && !use {
			free()
		}
		return granted
	}
	start := time.Now()
	wait := pp.maxWait
	for {
		wctx, cancel := context.WithTimeout(ctx, wait)
		err := s.pools.Wait(wctx, t)
		cancel()
		waited := time.Since(start).Round(time.Millisecond)
		switch {
		case err == nil:
			if waited > 0 {
				a.log.Debug("got a pool slot", "pool", pp.name, "waited", waited)
			}
			return hold(), "", true
		case errors.Is(err, pool.ErrNotFound):
			a.log.Warn("the job's pool does not exist; running without it", "pool", pp.name)
			return func() {}, "", true
		case ctx.Err() != nil:
			leave(false)
			return nil, fmt.Sprintf("the execution ended (%v) after waiting %s for a slot of pool %s", context.Cause(ctx), waited, pp.name), false
		case !errors.Is(err, context.DeadlineExceeded):
			// The database: better to wait on than to run past the limit.
			a.log.Warn("cannot wait for a pool slot; trying again", "pool", pp.name, "error", err)
			wait = min(poolRecheck, pp.maxWait)
			continue
		}
		full := fmt.Sprintf("pool %s full for %s", pp.name, waited)
		switch verdict {
		case poolWaitOn:
			wait = pp.maxWait
			continue
		case poolOnce:
			behind, err := s.pools.Behind(ctx, t)
			if err != nil || !behind {
				wait = poolRecheck
				continue
			}
			if leave(true) {
				return hold(), "", true
			}
			return nil, fmt.Sprintf("%s; a later firing of the job waits for it and stands for this one (misfire instruction %s)", full, instr), false
		default:
			if leave(true) {
				return hold(), "", true
			}
			return nil, fmt.Sprintf("%s (pool_max_wait %s; misfire instruction %s skips it)", full, pp.maxWait, instr), false
		}
	}
}

// poolUsers returns the jobs ("group/name") that name each pool.
func (s *Server) poolUsers(ctx context.Context) (map[string][]string, error) {
	out := make(map[string][]string)
	err := s.eachJob(ctx, "", chime.MaxJobPageLimit, func(d *chime.JobDetail) error {
		if st, err := settingsOf(d); err == nil && st.Pool != "" {
			out[st.Pool] = append(out[st.Pool], d.Key.Group+"/"+d.Key.Name)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, jobs := range out {
		slices.Sort(jobs)
	}
	return out, nil
}

// poolToAPI translates a pool for the API.
func poolToAPI(p pool.Pool, users map[string][]string) api.Pool {
	created, updated := p.Created, p.Updated
	return api.Pool{
		Name: p.Name, Description: p.Description, Limit: p.Limit,
		Running: p.Running, Waiting: p.Waiting, Jobs: users[p.Name],
		Created: &created, Updated: &updated,
	}
}

// poolErr translates the errors of package pool for the API.
func poolErr(err error, name string) error {
	var fe *pool.InvalidError
	switch {
	case errors.As(err, &fe):
		return invalidf(fe.Field, "%s", fe.Reason)
	case errors.Is(err, pool.ErrNotFound):
		return httpjson.Errorf(api.CodeNotFound, "", "no pool is named %q", name)
	}
	return err
}

// ListPools lists the pools, by name, with their slots held and waited
// for and the jobs that name them.
func (s *Server) ListPools(ctx context.Context) ([]api.Pool, error) {
	all, err := s.pools.List(ctx)
	if err != nil {
		return nil, err
	}
	users, err := s.poolUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]api.Pool, 0, len(all))
	for _, p := range all {
		out = append(out, poolToAPI(p, users))
	}
	return out, nil
}

// GetPool returns one pool; not_found when absent.
func (s *Server) GetPool(ctx context.Context, name string) (*api.Pool, error) {
	p, err := s.pools.Get(ctx, name)
	if err != nil {
		return nil, poolErr(err, name)
	}
	users, err := s.poolUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := poolToAPI(*p, users)
	return &out, nil
}

// PutPool creates or replaces a pool, reporting which; p.Name is the
// path's. A bad field is refused, naming it, and nothing changes.
func (s *Server) PutPool(ctx context.Context, actor string, p api.Pool) (*api.Pool, bool, error) {
	created, err := s.pools.Put(ctx, pool.Pool{Name: p.Name, Description: p.Description, Limit: p.Limit})
	if err != nil {
		return nil, false, poolErr(err, p.Name)
	}
	action := auditPoolUpdate
	if created {
		action = auditPoolCreate
	}
	s.audit(ctx, actor, action, "pools/"+p.Name, map[string]any{"limit": p.Limit})
	stored, err := s.GetPool(ctx, p.Name)
	return stored, created, err
}

// DeletePool deletes a pool; conflict while a job names it.
func (s *Server) DeletePool(ctx context.Context, actor, name string) error {
	users, err := s.poolUsers(ctx)
	if err != nil {
		return err
	}
	if jobs := users[name]; len(jobs) > 0 {
		return httpjson.Errorf(api.CodeConflict, "", "pool %q is named by jobs %v; change them first", name, jobs)
	}
	if err := s.pools.Delete(ctx, name); err != nil {
		return poolErr(err, name)
	}
	s.audit(ctx, actor, auditPoolDelete, "pools/"+name, nil)
	return nil
}
