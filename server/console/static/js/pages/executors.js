// The executors page: the worker processes registered to run the jobs of
// type executor, by group, live or not, with their instance, labels,
// handlers, version, last heartbeat and running runs, and the recent
// executions that found no executor or lost theirs. It refreshes every 5 s.
import { h, replace, pageHead, panel, table, badge, timeEl, fmtTime, relTime, stat, errorBox, nameText } from '../ui.js';
import { executionsTable } from './executions.js';

/** executorsTable renders the api.Executor rows of one group. */
function executorsTable(group, list) {
  return table([
    { label: 'Instance', value: e => nameText(e.instance || '—') },
    { label: 'State', value: e => e.live ? badge('live', 'alive') : badge('lapsed', 'dead') },
    { label: 'Labels', value: e => labelsOf(e.labels) },
    { label: 'Handlers', value: e => h('span', { class: 'mono' }, (e.handlers || []).join(', ')) },
    { label: 'Version', value: e => e.version ? h('span', { class: 'mono' }, e.version) : h('span', { class: 'muted' }, '—') },
    { label: 'Last heartbeat', value: e => h('span', null, h('span', { class: 'nowrap' }, timeEl(e.last_heartbeat)), ' ', h('span', { class: 'muted nowrap' }, relTime(e.last_heartbeat))) },
    { label: 'Running', num: true, value: e => String(e.running || 0) },
    { label: 'Runs', num: true, value: e => String(e.use_count || 0) },
    { label: 'ID', value: e => h('span', { class: 'mono' }, e.id) },
  ], list, { caption: `Executors of group ${group}`, rowAttrs: e => ({ dataset: { executor: e.id, instance: e.instance || '' }, 'data-testid': 'executor' }) });
}

// labelsOf shows an executor's labels as k=v badges.
function labelsOf(labels) {
  const keys = Object.keys(labels || {}).sort();
  if (!keys.length) return h('span', { class: 'muted' }, 'none');
  return h('span', { class: 'badges' }, ...keys.map(k => badge(`${k}=${labels[k]}`, 'info')));
}

export async function render(ctx) {
  const body = h('div');
  const load = async () => {
    let list, lost, none;
    try {
      const opts = { signal: ctx.signal };
      [list, lost, none] = await Promise.all([
        ctx.api.get('/executors', null, opts),
        ctx.api.get('/executions', { outcome: 'executor_lost', limit: 10 }, opts),
        ctx.api.get('/executions', { outcome: 'no_executor', limit: 10 }, opts),
      ]);
    } catch (err) {
      if (err.name !== 'AbortError') replace(body, errorBox(err));
      return;
    }
    const groups = new Map();
    for (const e of list) {
      if (!groups.has(e.group)) groups.set(e.group, []);
      groups.get(e.group).push(e);
    }
    const failures = [...lost.executions, ...none.executions]
      .sort((a, b) => String(b.scheduled_time).localeCompare(String(a.scheduled_time))).slice(0, 10);
    replace(body,
      h('div', { class: 'stats' },
        stat('groups', String(groups.size), { 'data-testid': 'executor-groups' }),
        stat('live executors', String(list.filter(e => e.live).length), { 'data-testid': 'executors-live' }),
        stat('running now', String(list.reduce((a, e) => a + (e.running || 0), 0)), { 'data-testid': 'executors-running' })),
      groups.size === 0
        ? panel('Executors', h('p', { class: 'empty' }, 'No executor has registered. Start one with a token of role executor: see docs/executors.md.'))
        : h('div', null, ...[...groups].map(([g, es]) => h('section', { dataset: { group: g } },
          panel(`Group ${g}`, executorsTable(g, es))))),
      panel('Recent failures: no executor, executor lost', h('div', { 'data-testid': 'executor-failures' },
        executionsTable(failures, { empty: 'No recent execution found no executor or lost its executor.' }))),
      h('p', { class: 'muted' },
        'An executor is live while its heartbeats renew its lease; a lapsed executor\'s runs are re-run elsewhere (jobs that request recovery) or recorded executor lost. ',
        'Updated ', fmtTime(new Date(), { date: false }), '.'));
  };
  replace(ctx.main, pageHead('Executors'), body);
  await load();
  ctx.every(5000, load);
}
