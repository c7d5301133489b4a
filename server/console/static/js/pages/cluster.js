// The cluster page: every node the database knows, alive or not, with its
// last check-in and (for the node answering) its clock offset. It
// refreshes every 5 s.
import { h, replace, pageHead, panel, table, badge, timeEl, relTime, stat, errorBox, fmtGoDuration } from '../ui.js';

/** nodesTable renders api.Node rows; the dashboard shows it too. */
export function nodesTable(nodes) {
  return table([
    { label: 'Node', value: n => h('span', { class: 'mono' }, n.id, n.self ? h('span', { class: 'muted' }, ' (this node)') : null) },
    { label: 'State', value: n => n.alive ? badge('alive') : badge('dead') },
    { label: 'Last check-in', value: n => h('span', null, timeEl(n.last_check_in), ' ', h('span', { class: 'muted' }, relTime(n.last_check_in))) },
    { label: 'Clock offset', value: n => n.clock_offset ? h('span', { title: n.clock_offset }, fmtGoDuration(n.clock_offset)) : h('span', { class: 'muted', title: 'Not reported yet, or the node is dead' }, 'n/a') },
    { label: 'Epoch', value: n => String(n.epoch), num: true },
  ], nodes, { empty: 'No node has joined the cluster.', caption: 'Cluster nodes' });
}

export async function render(ctx) {
  const body = h('div');
  const load = async () => {
    let nodes;
    try {
      nodes = await ctx.api.get('/nodes', null, { signal: ctx.signal });
    } catch (err) {
      if (err.name !== 'AbortError') replace(body, errorBox(err));
      return;
    }
    const alive = nodes.filter(n => n.alive).length;
    replace(body,
      h('div', { class: 'stats' },
        stat('live nodes', String(alive), { 'data-testid': 'nodes-alive' }),
        stat('dead nodes', String(nodes.length - alive))),
      panel('Nodes', nodesTable(nodes)),
      h('p', { class: 'muted' },
        'A node is alive while it checks in before its lease runs out; a dead node\'s running jobs are recovered by the others. ',
        'Updated ', new Date().toLocaleTimeString(), '.'));
  };
  replace(ctx.main, pageHead('Cluster'), body);
  await load();
  ctx.every(5000, load);
}
