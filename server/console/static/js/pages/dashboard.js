// The dashboard: live nodes, fires and failures over the last hours, fire
// lag, the next firings across all jobs, failing jobs and what runs now.
// A banner shows the maintenance window in force (reason, who, since),
// with a control to start or end one for operators and admins.
// It refreshes every 20 s; the window (1 h, 6 h, 24 h) is in the
// fragment's query (#/?window=6h).
import { h, replace, panel, table, stat, link, timeEl, relTime, fmtTime, fmtDuration, outcomeBadge, errorBox, nameText, zoneLabel,
  button, toast, confirmDialog, formDialog, field } from '../ui.js';
import { ApiError } from '../api.js';
import { barChart, lineChart } from '../chart.js';
import { nodesTable } from './cluster.js';
import { jobRoute, stateBadges } from './jobs.js';
import { fromNow } from './jobutil.js';

// windows are the time windows offered: [name, hours, bucket width].
const WINDOWS = [['1h', 1, '1m'], ['6h', 6, '5m'], ['24h', 24, '15m']];
const REFRESH_MS = 20000;

function fmtLag(ms) {
  return fmtDuration(ms, { fine: true });
}

export async function render(ctx) {
  let win = WINDOWS.find(w => w[0] === ctx.query.get('window')) || WINDOWS[1];

  const picker = h('div', { class: 'segmented', role: 'group', 'aria-label': 'Time window' },
    WINDOWS.map(w => h('button', { type: 'button', 'aria-pressed': String(w === win), dataset: { window: w[0] },
      onclick: () => {
        win = w;
        for (const b of picker.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.window === w[0]));
        history.replaceState(null, '', '#/?window=' + w[0]);
        loadActivity();
      } }, w[0])));

  const stats = h('div', { class: 'stats', 'data-testid': 'dash-stats' });
  const charts = h('div', { class: 'stack', 'data-testid': 'activity' }, h('p', { class: 'loading' }, 'Loading…'));
  const nodes = h('div');
  const upcoming = h('div', { 'data-testid': 'upcoming' });
  const failing = h('div', { 'data-testid': 'failing' });
  const running = h('div', { 'data-testid': 'running' });
  const updated = h('p', { class: 'muted small' });
  const maintenance = h('div', { 'data-testid': 'maintenance' });

  replace(ctx.main,
    h('div', { class: 'page-head' }, h('h1', null, 'Dashboard'), h('div', { class: 'actions' }, picker)),
    maintenance,
    stats,
    panel('Activity', charts),
    h('div', { class: 'grid' },
      panel('Next firings', upcoming),
      panel('Failing jobs', failing)),
    h('div', { class: 'grid' },
      panel('Running now', running),
      panel('Nodes', nodes)),
    updated);

  const opts = { signal: ctx.signal };
  let activity = null;
  let nodeList = null;

  const figures = () => {
    const alive = nodeList ? nodeList.filter(n => n.alive).length : null;
    const a = activity;
    const sum = k => a ? a.buckets.reduce((s, b) => s + (b[k] || 0), 0) : null;
    replace(stats,
      stat('live nodes', alive === null ? '—' : String(alive), { 'data-testid': 'stat-nodes' }),
      stat('running now', a ? String(a.running) : '—', { 'data-testid': 'stat-running' }),
      stat(`fires, last ${win[0]}`, a ? String(sum('fires')) : '—', { 'data-testid': 'stat-fires' }),
      stat(`failures, last ${win[0]}`, a ? String(sum('failed')) : '—', { 'data-testid': 'stat-failed', class: a && sum('failed') ? 'stat bad' : 'stat' }),
      stat('fire lag p50', a && a.lag_sampled ? fmtLag(a.lag_p50_ms) : '—', { 'data-testid': 'lag-p50' }),
      stat('fire lag p95', a && a.lag_sampled ? fmtLag(a.lag_p95_ms) : '—', { 'data-testid': 'lag-p95' }),
      stat('fire lag p99', a && a.lag_sampled ? fmtLag(a.lag_p99_ms) : '—', { 'data-testid': 'lag-p99' }));
  };

  const loadActivity = async () => {
    const [, hours, bucket] = win;
    try {
      const a = await ctx.api.get('/activity', { since: new Date(Date.now() - hours * 3600000).toISOString(), bucket }, opts);
      if (!ctx.current()) return;
      activity = a;
      const width = a.bucket_seconds >= 60 ? `${a.bucket_seconds / 60} min` : `${a.bucket_seconds} s`;
      const rows = a.buckets.map(b => ({
        label: fmtTime(b.start, { date: false, seconds: false, zone: false }),
        succeeded: b.succeeded,
        failed: b.failed,
        other: Math.max(0, b.fires - b.succeeded - b.failed),
        lag_avg: b.fires ? b.lag_avg_ms : null,
        lag_max: b.fires ? b.lag_max_ms : null,
      }));
      const note = `times in ${zoneLabel()}`;
      replace(charts,
        h('div', { class: 'grid charts' },
          h('div', null, h('h3', null, `Fires per ${width}`),
            barChart(`Fires per ${width}, last ${win[0]}`, rows,
              [{ key: 'succeeded', label: 'succeeded', color: 2 }, { key: 'failed', label: 'failed', color: 1 }, { key: 'other', label: 'running or other', color: 0 }],
              { label: r => r.label, note })),
          h('div', null, h('h3', null, `Failures per ${width}`),
            barChart(`Failures per ${width}, last ${win[0]}`, rows, [{ key: 'failed', label: 'failed, timed out or lost', color: 1 }], { label: r => r.label, note })),
          h('div', null, h('h3', null, 'Fire lag'),
            lineChart(`Fire lag per ${width}, last ${win[0]}`, rows,
              [{ key: 'lag_avg', label: 'mean', color: 0 }, { key: 'lag_max', label: 'max', color: 3 }],
              { label: r => r.label, fmtY: v => fmtLag(v), note }))),
        h('p', { class: 'muted small' }, `Fire lag is the start minus the scheduled time of scheduled firings: p50 ${fmtLag(a.lag_p50_ms)}, p95 ${fmtLag(a.lag_p95_ms)}, p99 ${fmtLag(a.lag_p99_ms)} over the window's ${a.lag_sampled} runs.`));
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(charts, errorBox(err));
    }
    figures();
  };

  const loadNodes = async () => {
    try {
      nodeList = await ctx.api.get('/nodes', null, opts);
      replace(nodes, nodesTable(nodeList), h('p', null, link('/cluster', 'Cluster')));
    } catch (err) {
      if (err.name !== 'AbortError') replace(nodes, errorBox(err));
    }
  };

  const loadUpcoming = async () => {
    try {
      const list = await ctx.api.get('/upcoming', { count: 10 }, opts);
      replace(upcoming, table([
        { label: 'When', value: f => h('div', { class: f.dst ? 'dst' : null }, h('span', { class: 'nowrap' }, timeEl(f.time)), ' ', h('span', { class: 'muted small nowrap' }, fromNow(f.time)),
          f.dst ? h('span', { class: 'dst-note' }, ' (daylight-saving change)') : null) },
        { label: 'Job', cls: 'name-col', value: f => link(jobRoute(f.job_group, f.job_name), nameText(`${f.job_group}/${f.job_name}`)) },
        { label: 'Trigger', value: f => nameText(f.trigger_name, { class: 'mono' }) },
      ], list, { empty: 'Nothing is scheduled.', caption: 'Next firings' }));
    } catch (err) {
      if (err.name !== 'AbortError') replace(upcoming, errorBox(err));
    }
  };

  const loadFailing = async () => {
    try {
      const page = await ctx.api.get('/jobs', { failing: true, limit: 20 }, opts);
      replace(failing, table([
        { label: 'Job', cls: 'name-col', value: j => link(jobRoute(j.group, j.name), nameText(`${j.group}/${j.name}`)) },
        { label: 'Last run', value: j => h('span', null, outcomeBadge(j.status && j.status.last_outcome), ' ', h('span', { class: 'muted small' }, relTime(j.status && j.status.last_run))) },
        { label: 'Last success', value: j => j.status && j.status.last_success ? relTime(j.status.last_success) : 'never' },
        { label: 'State', value: j => stateBadges(j) },
      ], page.jobs || [], { empty: 'No job is failing.', caption: 'Failing jobs' }),
      page.next ? h('p', null, link('/jobs?failing=true', 'All failing jobs')) : null);
    } catch (err) {
      if (err.name !== 'AbortError') replace(failing, errorBox(err));
    }
  };

  const loadRunning = async () => {
    try {
      const page = await ctx.api.get('/executions', { outcome: 'running', limit: 10 }, opts);
      replace(running, table([
        { label: 'Job', cls: 'name-col', value: e => link(jobRoute(e.job_group, e.job_name), nameText(`${e.job_group}/${e.job_name}`)) },
        { label: 'Started', value: e => link('/executions/' + encodeURIComponent(e.id), relTime(e.started_time)) },
        { label: 'Node', value: e => nameText(e.node_id, { class: 'mono' }) },
      ], page.executions || [], { empty: 'Nothing is running.', caption: 'Running executions' }));
    } catch (err) {
      if (err.name !== 'AbortError') replace(running, errorBox(err));
    }
  };

  const startMaintenance = async () => {
    const m = await formDialog('Start maintenance', form => {
      form.append(
        h('p', { class: 'muted' }, 'Pauses every job, or the jobs of one group, jobs added meanwhile included, until maintenance ends. Jobs paused by hand stay paused after it.'),
        field('group', 'Job group', { hint: 'Leave empty to pause every job.' }),
        field('reason', 'Reason', { hint: 'Shown on the dashboard and in the audit log.', required: true }));
    }, form => {
      const reason = form.elements.reason.value.trim();
      if (!reason) throw new ApiError(400, { message: 'is required', field: 'reason' });
      return ctx.api.post('/maintenance', { group: form.elements.group.value.trim() || undefined, reason });
    }, { submitLabel: 'Start maintenance' });
    if (!m) return;
    toast('Maintenance started');
    loadMaintenance();
  };

  const endMaintenance = async () => {
    const ok = await confirmDialog('End maintenance?',
      'Its jobs resume; fire times missed meanwhile follow each trigger\'s misfire instruction. Jobs paused by hand stay paused.',
      { confirmLabel: 'End maintenance' });
    if (!ok) return;
    try {
      await ctx.api.del('/maintenance');
      toast('Maintenance ended');
    } catch (err) {
      toast(`End maintenance: ${err.message}`, 'error');
    }
    loadMaintenance();
  };

  const loadMaintenance = async () => {
    try {
      const m = await ctx.api.get('/maintenance', null, opts);
      if (!ctx.current()) return;
      if (!m.active) {
        replace(maintenance, ctx.can('operator')
          ? h('p', { class: 'actions' }, button('Start maintenance', startMaintenance, { 'data-testid': 'maintenance-start' }))
          : null);
        return;
      }
      const scope = m.group ? h('span', null, 'the jobs of group ', nameText(m.group, { class: 'mono' })) : 'every job';
      replace(maintenance, h('div', { class: 'warn-note maintenance', role: 'status', 'data-testid': 'maintenance-banner' },
        h('p', null, h('strong', null, 'Maintenance: '), scope, ' paused. Reason: ', h('span', { 'data-testid': 'maintenance-reason' }, m.reason)),
        h('p', { class: 'muted small' }, 'Started by ', h('span', { 'data-testid': 'maintenance-by' }, m.by), ' ', relTime(m.since), ' (', timeEl(m.since), ').'),
        ctx.can('operator') ? h('p', null, button('End maintenance', endMaintenance, { 'data-testid': 'maintenance-end' })) : null));
    } catch (err) {
      if (err.name !== 'AbortError') replace(maintenance, errorBox(err));
    }
  };

  const loadAll = async () => {
    await Promise.all([loadMaintenance(), loadNodes(), loadActivity(), loadUpcoming(), loadFailing(), loadRunning()]);
    if (ctx.current()) updated.textContent = `Updated ${fmtTime(new Date(), { date: false })}; refreshes every ${REFRESH_MS / 1000} s.`;
  };

  figures();
  await loadAll();
  ctx.every(REFRESH_MS, loadAll);
}
