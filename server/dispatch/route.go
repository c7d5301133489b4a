package dispatch

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/chime-scheduler/chime/api"
)

// CheckTarget checks where a job of type "executor" runs, for the job's
// field prefix ("executor"): group and handler names, a known routing
// (sharding_broadcast makes every live executor run one shard), labels, and a
// hash key only for consistent_hash.
func CheckTarget(field string, t *api.ExecutorTarget) error {
	if t == nil {
		return invalid(field, `is required for a job of type executor, such as {"group":"billing","handler":"invoice.close"}`)
	}
	if err := CheckName(field+".group", t.Group); err != nil {
		return err
	}
	if err := CheckName(field+".handler", t.Handler); err != nil {
		return err
	}
	switch t.Routing {
	case "", api.RoutingFirst, api.RoutingLast, api.RoutingRoundRobin, api.RoutingRandom, api.RoutingConsistentHash,
		api.RoutingLRU, api.RoutingLFU, api.RoutingFailover, api.RoutingBusyOver, api.RoutingShardingBroadcast:
	default:
		return invalid(field+".routing", "%q: want first, last, round_robin, random, consistent_hash, lru, lfu, failover, busy_over or sharding_broadcast", t.Routing)
	}
	if err := CheckLabels(field+".labels", t.Labels); err != nil {
		return err
	}
	if t.HashKey != "" {
		if t.Routing != api.RoutingConsistentHash {
			return invalid(field+".hash_key", "is only for routing consistent_hash")
		}
		if err := CheckName(field+".hash_key", t.HashKey); err != nil {
			return err
		}
	}
	return nil
}

// candidate is a live executor a hand-over may pick.
type candidate struct {
	id            string
	registered    time.Time
	lastHeartbeat time.Time
	lastUsed      time.Time // zero: never used
	useCount      int64
	running       int
}

// pickInput is what pick needs besides the candidates.
type pickInput struct {
	routing api.Routing
	// key is what consistent_hash hashes.
	key string
	// rrLast is the executor the round robin picked last.
	rrLast string
	// now and heartbeat (the heartbeat interval) tell failover which
	// executors missed a heartbeat.
	now       time.Time
	heartbeat time.Duration
	// intn draws random numbers for random; rand.IntN when nil.
	intn func(int) int
}

// pick chooses one of cands, which are in registration order (registered,
// then ID) and not empty, by the routing.
func pick(cands []candidate, in pickInput) candidate {
	switch in.routing {
	case api.RoutingFirst:
		return cands[0]
	case api.RoutingLast:
		return cands[len(cands)-1]
	case api.RoutingRandom:
		intn := in.intn
		if intn == nil {
			intn = rand.IntN
		}
		return cands[intn(len(cands))]
	case api.RoutingConsistentHash:
		// Rendezvous hashing: the candidate with the highest hash of
		// (key, ID) wins, so that a candidate leaving or joining moves
		// only the keys it wins.
		best, bestScore := cands[0], uint64(0)
		for i, c := range cands {
			h := fnv.New64a()
			_, _ = h.Write([]byte(in.key))
			_, _ = h.Write([]byte{0})
			_, _ = h.Write([]byte(c.id))
			if score := h.Sum64(); i == 0 || score > bestScore {
				best, bestScore = c, score
			}
		}
		return best
	case api.RoutingLRU:
		return slices.MinFunc(cands, func(a, b candidate) int {
			if c := a.lastUsed.Compare(b.lastUsed); c != 0 {
				return c
			}
			return strings.Compare(a.id, b.id)
		})
	case api.RoutingLFU:
		return slices.MinFunc(cands, func(a, b candidate) int {
			if a.useCount != b.useCount {
				return cmpInt(a.useCount, b.useCount)
			}
			return strings.Compare(a.id, b.id)
		})
	case api.RoutingFailover:
		for _, c := range cands {
			if in.now.Sub(c.lastHeartbeat) <= in.heartbeat {
				return c
			}
		}
		return cands[0]
	case api.RoutingBusyOver:
		best := cands[0]
		for _, c := range cands {
			if c.running == 0 {
				return c
			}
			if c.running < best.running {
				best = c
			}
		}
		return best
	default: // round_robin
		byID := slices.SortedFunc(slices.Values(cands), func(a, b candidate) int { return strings.Compare(a.id, b.id) })
		for _, c := range byID {
			if c.id > in.rrLast {
				return c
			}
		}
		return byID[0]
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hashKey returns what consistent_hash hashes for a run: the parameter
// named by the target's hash key when the run has it, else the job's key.
func hashKey(t api.ExecutorTarget, jobGroup, jobName string, params map[string]any) string {
	if t.HashKey != "" {
		if v, ok := params[t.HashKey]; ok {
			return fmt.Sprint(v)
		}
	}
	return jobGroup + "." + jobName
}

// serves reports whether an executor runs handler and carries labels.
func serves(e *Executor, handler string, labels map[string]string) bool {
	if !slices.Contains(e.Handlers, handler) {
		return false
	}
	for k, v := range labels {
		if have, ok := e.Labels[k]; !ok || have != v {
			return false
		}
	}
	return true
}
