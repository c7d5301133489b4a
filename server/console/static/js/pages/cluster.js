// The cluster page: every node the database knows, alive or not, with its
// last check-in, clock offset, chime version, worker pool and the
// executions it runs now. It refreshes every 5 s.
import { h, replace, pageHead, panel, table, badge, timeEl, fmtTime, relTime, stat, errorBox, fmtGoDuration, nameText, link } from '../ui.js';

/** nodesTable renders api.Node rows; the dashboard shows it too. */
export function nodesTable(nodes) {
  return table([
    { label: 'Node', value: n => h('span', null, nameText(n.id, { class: 'mono' }), n.self ? h('span', { class: 'muted' }, ' (this node)') : null) },
    { label: 'State', value: n => n.alive ? badge('alive') : badge('dead') },
    { label: 'Version', value: n => n.version ? h('span', { class: 'mono' }, n.version) : notReported() },
    { label: 'Workers', num: true, value: n => n.workers ? String(n.workers) : notReported() },
    // Running links to the node's running executions.
    { label: 'Running', num: true, value: n => n.running
      ? link('/executions?' + new URLSearchParams({ node: n.id, outcome: 'running' }).toString(), String(n.running), { title: `The executions ${n.id} runs now` })
      : '0' },
    { label: 'Last check-in', value: n => h('span', null, h('span', { class: 'nowrap' }, timeEl(n.last_check_in)), ' ', h('span', { class: 'muted nowrap' }, relTime(n.last_check_in))) },
    { label: 'Clock offset', num: true, value: n => n.clock_offset ? h('span', { title: n.clock_offset }, fmtGoDuration(n.clock_offset)) : h('span', { class: 'muted', title: 'Not reported yet, or the node is dead' }, 'n/a') },
    { label: 'Epoch', value: n => String(n.epoch), num: true },
  ], nodes, { empty: 'No node has joined the cluster.', caption: 'Cluster nodes', rowAttrs: n => ({ dataset: { node: n.id } }) });
}

// notReported stands for a figure a node has not reported: it has not
// checked in long enough, or runs an older chime.
function notReported() {
  return h('span', { class: 'muted', title: 'Not reported yet, or the node runs an older chime' }, 'n/a');
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
        stat('dead nodes', String(nodes.length - alive)),
        stat('workers of live nodes', String(nodes.filter(n => n.alive).reduce((a, n) => a + (n.workers || 0), 0))),
        stat('running now', String(nodes.reduce((a, n) => a + (n.running || 0), 0)), { 'data-testid': 'nodes-running' })),
      panel('Nodes', nodesTable(nodes)),
      h('p', { class: 'muted' },
        'A node is alive while it checks in before its lease runs out; a dead node\'s running jobs are recovered by the others. ',
        'Updated ', fmtTime(new Date(), { date: false }), '.'));
  };
  replace(ctx.main, pageHead('Cluster'), body);
  await load();
  ctx.every(5000, load);
}
