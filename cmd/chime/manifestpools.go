package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/chime-scheduler/chime/api"
	"github.com/chime-scheduler/chime/apiclient"
)

// canonicalPool is a pool as a manifest keeps it: its name, description
// and limit, without what the server reports.
func canonicalPool(p api.Pool) api.Pool {
	return api.Pool{Name: p.Name, Description: p.Description, Limit: p.Limit}
}

// checkManifestPools checks the pools of a manifest read from name: each
// named once; the server checks the rest. They come back canonical.
func checkManifestPools(m *manifest, name string) error {
	seen := map[string]int{}
	for i, p := range m.Pools {
		where := fmt.Sprintf("%s: pools[%d]", name, i)
		if p.Name == "" {
			return fmt.Errorf("%s: name is required", where)
		}
		if prev, dup := seen[p.Name]; dup {
			return fmt.Errorf("%s: pool %q is also pools[%d]", where, p.Name, prev)
		}
		seen[p.Name] = i
		m.Pools[i] = canonicalPool(p)
	}
	return nil
}

// planPools compares each pool of m with the server's.
func planPools(ctx context.Context, c *apiclient.Client, m *manifest) ([]change, error) {
	var changes []change
	for _, p := range m.Pools {
		ch := change{kind: "pool", key: p.Name, pool: p}
		var current *api.Pool
		server, err := c.GetPool(ctx, p.Name)
		switch {
		case apiclient.IsCode(err, api.CodeNotFound):
		case err != nil:
			return nil, fmt.Errorf("pool %s: %w", p.Name, err)
		default:
			canon := canonicalPool(*server)
			current = &canon
		}
		if err := compare(&ch, current, p, 0); err != nil {
			return nil, err
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// applyPool creates or updates the pool of ch.
func (ch *change) applyPool(ctx context.Context, c *apiclient.Client) (string, error) {
	if _, _, err := c.PutPool(ctx, ch.pool); err != nil {
		return "", fmt.Errorf("pool %s: %w", ch.key, err)
	}
	if ch.action == actionCreate {
		return "created pool " + ch.key, nil
	}
	return "updated pool " + ch.key, nil
}

// exportPools adds to m the pools its jobs name.
func exportPools(ctx context.Context, c *apiclient.Client, m *manifest) error {
	var names []string
	for _, j := range m.Jobs {
		if j.Pool != "" {
			names = append(names, j.Pool)
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		p, err := c.GetPool(ctx, name)
		if err != nil {
			return fmt.Errorf("pool %s: %w", name, err)
		}
		m.Pools = append(m.Pools, canonicalPool(*p))
	}
	return nil
}
