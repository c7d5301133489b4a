// A job's page: its state and actions (operators), the schedule in words,
// the next 10 fire times with DST instants marked, triggers and their
// calendars, recent executions and a duration / outcome chart; and, in its
// History tab, the job's versions, the diff of each against the one
// before, and (operators) a rollback to one of them.
import { h, replace, pageHead, panel, table, facts, badge, outcomeBadge, timeEl, fmtTime, fmtDuration, between,
  link, button, toast, confirmDialog, formDialog, field, toLocalInput, fromLocalInput, stat, errorBox, nameText, clipText, zoneLabel } from '../ui.js';
import { jobPath, ApiError } from '../api.js';
import { barChart, lineChart } from '../chart.js';
import { jobRoute, stateBadges } from './jobs.js';
import { schedOf, scheduleText, describeSchedule, fireTimesList, fromNow, browserZone } from './jobutil.js';

const CHART_RUNS = 50;
const TABLE_RUNS = 20;

export async function render(ctx) {
  const { group, name } = ctx.params;
  const path = jobPath(group, name);
  const key = `${group}/${name}`;
  ctx.setTitle(key);

  const head = h('div');
  const body = h('div', { id: 'job-tab-overview', role: 'tabpanel', 'aria-labelledby': 'job-tab-overview-btn' });
  const history = h('div', { id: 'job-tab-history', role: 'tabpanel', 'aria-labelledby': 'job-tab-history-btn', 'data-testid': 'history', hidden: true });
  const notice = h('p', { class: 'notice', 'data-testid': 'job-notice', role: 'status', hidden: true });
  const tabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Job views' });
  const showTab = which => {
    for (const b of tabs.children) b.setAttribute('aria-selected', String(b.dataset.tab === which));
    body.hidden = which !== 'overview';
    history.hidden = which !== 'history';
    if (which === 'history') loadHistory();
  };
  tabs.append(
    h('button', { type: 'button', role: 'tab', id: 'job-tab-overview-btn', 'aria-controls': 'job-tab-overview', 'aria-selected': 'true',
      dataset: { tab: 'overview' }, onclick: () => showTab('overview') }, 'Overview'),
    h('button', { type: 'button', role: 'tab', id: 'job-tab-history-btn', 'aria-controls': 'job-tab-history', 'aria-selected': 'false',
      dataset: { tab: 'history' }, 'data-testid': 'history-tab', onclick: () => showTab('history') }, 'History'));
  replace(ctx.main, head, notice, tabs, body, history);

  let job;
  // After an action the page refreshes every 3 s for a while, so a run
  // shows up; otherwise every 15 s.
  let fastUntil = 0;
  let lastLoad = 0;
  let loading = false;

  const say = text => { notice.textContent = text; notice.hidden = false; };

  // act runs an action of the head, then reloads; the focus moves to the
  // button that took the place of the one pressed (Pause ⇄ Resume).
  const act = async (label, fn) => {
    const had = head.contains(document.activeElement);
    try {
      await fn();
      fastUntil = Date.now() + 30000;
      await load();
      const b = head.querySelector('[data-testid="pause"], [data-testid="resume"]');
      if (had && b && !head.contains(document.activeElement)) b.focus();
    } catch (err) {
      toast(`${label}: ${err.message}`, 'error');
    }
  };

  const runNow = () => formDialog(`Run ${key} now`, form => {
    const rows = h('div', { class: 'kv-rows stack' });
    const addRow = () => rows.append(h('div', { class: 'row kv' },
      h('input', { name: 'param-key', 'aria-label': 'Parameter name', placeholder: 'name' }),
      h('input', { name: 'param-value', 'aria-label': 'Parameter value', placeholder: 'value' })));
    addRow();
    form.append(
      h('p', { class: 'muted' }, 'Parameters are merged over the job\'s data for this run only. Values are text unless they read as JSON (numbers, true, false, objects).'),
      h('fieldset', { class: 'field', dataset: { field: 'params' } },
        h('legend', null, 'Parameters'), rows,
        h('div', null, button('Add parameter', addRow)),
        h('div', { class: 'error', role: 'alert', hidden: true })),
      field('params_json', 'Or as a JSON object', { type: 'textarea', rows: 3, placeholder: '{"date": "2026-11-20"}' }));
  }, async form => {
    const params = {};
    const keys = [...form.querySelectorAll('input[name="param-key"]')];
    const values = [...form.querySelectorAll('input[name="param-value"]')];
    keys.forEach((k, i) => {
      const n = k.value.trim();
      if (!n) return;
      const v = values[i].value;
      try { params[n] = JSON.parse(v); } catch { params[n] = v; }
    });
    const raw = form.elements.params_json.value.trim();
    if (raw) {
      let obj;
      try { obj = JSON.parse(raw); } catch (err) { throw new ApiError(400, { message: `not JSON: ${err.message}`, field: 'params_json' }); }
      if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw new ApiError(400, { message: 'must be a JSON object', field: 'params_json' });
      Object.assign(params, obj);
    }
    return ctx.api.post(path + '/run', Object.keys(params).length ? { params } : {});
  }, { submitLabel: 'Run now' }).then(res => {
    if (!res) return;
    say(`Run accepted: ${res.count} run${res.count === 1 ? '' : 's'} started.`);
    fastUntil = Date.now() + 30000;
    load();
  });

  const backfill = () => {
    const now = new Date();
    const dayAgo = new Date(now.getTime() - 24 * 3600 * 1000);
    return formDialog(`Backfill ${key}`, form => {
      form.append(
        h('p', { class: 'muted' }, 'Runs the job once for each fire time of its triggers from the start (included) to the end (excluded).'),
        h('div', { class: 'row' },
          field('from', 'From', { type: 'datetime-local', value: toLocalInput(dayAgo), step: 1 }),
          field('to', 'To', { type: 'datetime-local', value: toLocalInput(now), step: 1 })),
        field('trigger', 'Trigger', { type: 'select', options: [['', 'all triggers'], ...(job.triggers || []).map(t => [t.name, t.name])] }));
    }, form => {
      const from = fromLocalInput(form.elements.from.value);
      const to = fromLocalInput(form.elements.to.value);
      if (!from) throw new ApiError(400, { message: 'is required', field: 'from' });
      if (!to) throw new ApiError(400, { message: 'is required', field: 'to' });
      return ctx.api.post(path + '/backfill', { from, to, trigger: form.elements.trigger.value || undefined });
    }, { submitLabel: 'Backfill' }).then(res => {
      if (!res) return;
      say(`Backfill accepted: ${res.count} run${res.count === 1 ? '' : 's'}.`);
      fastUntil = Date.now() + 30000;
      load();
    });
  };

  const del = async () => {
    const ok = await confirmDialog(`Delete ${key}?`,
      'The job and its triggers are deleted; its execution history stays. This cannot be undone.',
      { confirmLabel: 'Delete job', danger: true, typeToConfirm: name });
    if (!ok) return;
    try {
      await ctx.api.del(path);
      toast(`Deleted ${key}`);
      ctx.navigate('/jobs');
    } catch (err) {
      toast(`Delete: ${err.message}`, 'error');
    }
  };

  const actions = () => {
    if (!ctx.can('operator')) return [];
    return [
      job.paused
        ? button('Resume', () => act('Resume', () => ctx.api.post(path + '/resume')), { 'data-testid': 'resume' })
        : button('Pause', () => act('Pause', () => ctx.api.post(path + '/pause')), { 'data-testid': 'pause' }),
      button('Run now', runNow, { kind: 'primary' }),
      button('Backfill', backfill),
      link(jobRoute(group, name) + '/edit', 'Edit', { class: 'btn' }),
      button('Delete', del, { kind: 'danger' }),
    ];
  };

  const load = async () => {
    if (loading) return;
    loading = true;
    lastLoad = Date.now();
    try {
      const opts = { signal: ctx.signal };
      const [j, upcoming, runs] = await Promise.all([
        ctx.api.get(path, null, opts),
        ctx.api.get(path + '/upcoming', { count: 10 }, opts),
        ctx.api.get('/executions', { job: key, limit: CHART_RUNS }, opts),
      ]);
      const words = await Promise.all((j.triggers || []).map(t => describeSchedule(ctx.api, t, ctx.signal)));
      if (!ctx.current()) return;
      job = j;
      draw(upcoming || [], (runs && runs.executions) || [], words);
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.current()) return;
      if (err instanceof ApiError && err.status === 404) {
        replace(head, pageHead(key));
        replace(body, errorBox(`No job ${key}: it may have been deleted.`), h('p', null, link('/jobs', 'Back to the jobs')));
        return;
      }
      replace(body, errorBox(err));
    } finally {
      loading = false;
    }
  };

  // The head is redrawn only when it changes, so the periodic refresh
  // does not take the focus from its buttons.
  let headSig = '';
  const draw = (upcoming, runs, words) => {
    const st = job.status || {};
    const sig = JSON.stringify([job.paused, job.type, job.description, st.failing, st.running]);
    if (sig !== headSig) {
      headSig = sig;
      replace(head,
        pageHead(nameText(key), ...actions()),
        h('div', { class: 'job-sub' }, stateBadges(job), ' ', h('span', { class: 'muted' }, job.type, ' job'),
          job.description ? h('span', null, ' · ', job.description) : null));
    }

    const triggers = job.triggers || [];
    const schedulePanel = panel('Schedule',
      triggers.length === 0
        ? h('p', { class: 'empty' }, 'No triggers: the job runs only when asked (run now, backfill).')
        : h('ul', { class: 'schedule-words', 'data-testid': 'schedule-words' }, triggers.map((t, i) => h('li', null,
          h('strong', null, words[i]), ' ',
          h('span', { class: 'muted' }, `(${t.name}, ${schedOf(t).kind || '?'})`),
          t.calendar ? h('span', null, ' except on the days of calendar ', link('/calendars/' + encodeURIComponent(t.calendar), t.calendar)) : null,
          (t.state || '').toLowerCase() === 'paused' ? [' ', badge('paused')] : null))),
      h('p', null, link('/explain?job=' + encodeURIComponent(key), 'Why did it (not) fire?')));

    const next = panel('Next 10 fire times', h('p', { class: 'muted small' }, `In your time zone, ${browserZone()}.`),
      fireTimesList(upcoming, { testid: 'next-fire-times' }),
      upcoming.some(f => f.dst) ? h('p', { class: 'muted small' }, 'Times marked with a daylight-saving change fall after a change of the UTC offset in the schedule\'s zone.') : null);

    const overview = panel('Overview', facts([
      ['Type', job.type],
      target(job),
      ['Timeout', job.timeout || 'none'],
      ['Retries', job.retry ? `up to ${job.retry.max_attempts} attempts, ${job.retry.backoff || 'exponential'} backoff from ${job.retry.delay || '10s'}` : 'none'],
      ['Overlap', job.overlap || 'allow'],
      ['Pool', job.pool ? h('span', { 'data-testid': 'job-pool' }, link('/pools', job.pool), ` (waits up to ${job.pool_max_wait || '1m'})`) : 'none'],
      ['Last run', st.last_run ? h('span', null, timeEl(st.last_run), ' ', outcomeBadge(st.last_outcome)) : 'never'],
      ['Last success', st.last_success ? timeEl(st.last_success) : 'never'],
      ['Next fire', st.next_fire_time ? h('span', null, timeEl(st.next_fire_time), ' ', h('span', { class: 'muted' }, fromNow(st.next_fire_time))) : 'none'],
      ['Version', String(job.version || '')],
    ]));

    const triggerTable = panel('Triggers', table([
      { label: 'Name', value: t => h('span', { class: 'mono' }, t.name) },
      { label: 'Schedule', value: t => h('span', { class: 'mono' }, scheduleText(t)) },
      { label: 'Calendar', value: t => t.calendar ? link('/calendars/' + encodeURIComponent(t.calendar), t.calendar) : h('span', { class: 'muted' }, 'none') },
      { label: 'State', value: t => { const s = (t.state || 'unknown').toLowerCase(); return badge(s, s === 'normal' ? 'ok' : s === 'paused' ? 'paused' : s === 'error' ? 'failed' : 'info'); } },
      { label: 'Next', value: t => timeEl(t.next_fire_time) },
      { label: 'Previous', value: t => timeEl(t.previous_fire_time) },
      { label: 'Misfire', value: t => t.misfire || 'smart' },
    ], triggers, { empty: 'No triggers.', caption: 'Triggers' }));

    replace(body,
      h('div', { class: 'grid' }, schedulePanel, next),
      runsPanel(runs),
      h('div', { class: 'grid' }, overview, triggerTable),
      job.data && Object.keys(job.data).length ? panel('Job data', h('pre', null, JSON.stringify(job.data, null, 2))) : null);
  };

  // The History tab: the versions, newest first; selecting one shows its
  // diff against the version before it.
  let selected = 0;
  const diffBox = h('div', { 'data-testid': 'version-diff-box' });
  const showDiff = async v => {
    selected = v.number;
    for (const tr of history.querySelectorAll('tr[data-version]')) tr.classList.toggle('selected', tr.dataset.version === String(v.number));
    try {
      const d = await ctx.api.get(`${path}/versions/${v.number}/diff`, null, { signal: ctx.signal });
      if (!ctx.current() || selected !== v.number) return;
      const lines = (d.diff || '').split('\n').filter((l, i, all) => l !== '' || i < all.length - 1);
      replace(diffBox,
        h('h3', null, d.from ? `Version ${d.from} → version ${d.to}` : `Version ${d.to} (the oldest kept)`),
        lines.length === 0
          ? h('p', { class: 'empty' }, `Version ${d.to} changed nothing in the spec.`)
          : h('pre', { class: 'diff', 'data-testid': 'version-diff' }, lines.map(l => h('span', {
            class: /^(---|\+\+\+) /.test(l) ? null : l.startsWith('@@') ? 'hunk' : l.startsWith('+') ? 'add' : l.startsWith('-') ? 'del' : null }, l + '\n'))),
        ctx.can('operator') ? h('div', { class: 'actions' },
          button(`Roll back to this version`, () => rollback(v), { kind: 'primary', 'data-testid': 'rollback' })) : null);
    } catch (err) {
      if (err.name !== 'AbortError') replace(diffBox, errorBox(err));
    }
  };
  const rollback = async v => {
    const ok = await confirmDialog(`Roll back ${key} to version ${v.number}?`,
      `The job's spec becomes version ${v.number}'s, recorded by ${v.actor} ${fmtTime(v.time)}; the change is kept as a new version. ` +
      'Masked values (credentials) keep the job\'s current ones.',
      { confirmLabel: 'Roll back' });
    if (!ok) return;
    try {
      await ctx.api.post(`${path}/versions/${v.number}/rollback`, undefined, job && job.version ? { ifMatch: `"${job.version}"` } : {});
      toast(`Rolled ${key} back to version ${v.number}`);
      say(`Rolled back to version ${v.number}.`);
      await load();
      await loadHistory();
    } catch (err) {
      toast(`Roll back: ${err.message}`, 'error');
    }
  };
  const loadHistory = async () => {
    try {
      const list = await ctx.api.get(`${path}/versions`, { limit: 100 }, { signal: ctx.signal });
      if (!ctx.current()) return;
      const versions = (list && list.versions) || [];
      replace(history, panel('History',
        h('p', { class: 'muted small' }, 'Every change of the job is kept as a version. Select one to see what it changed.'),
        table([
          { label: 'Version', value: v => button(`Version ${v.number}`, () => showDiff(v), { 'data-testid': 'show-version' }) },
          { label: 'Change', value: v => h('span', null, badge(v.kind.replace('_', ' '), 'info'),
            v.rolled_back_from ? h('span', { class: 'muted' }, ` to version ${v.rolled_back_from}`) : null) },
          { label: 'By', value: v => nameText(v.actor) },
          { label: 'When', value: v => timeEl(v.time) },
        ], versions, { empty: 'No versions recorded.', caption: 'Versions', rowAttrs: v => ({ 'data-testid': 'version-row', 'data-version': String(v.number) }) }),
        diffBox));
      const again = versions.find(v => v.number === selected) || versions[0];
      if (again) showDiff(again);
    } catch (err) {
      if (err.name !== 'AbortError') replace(history, errorBox(err));
    }
  };

  await load();
  ctx.every(3000, () => {
    const wait = Date.now() < fastUntil ? 3000 : 15000;
    if (Date.now() - lastLoad >= wait - 100) load();
  });
}

function target(job) {
  if (job.type === 'http' && job.http) {
    const s = typeof job.http === 'string' ? JSON.parse(job.http) : job.http;
    return ['Request', h('span', { class: 'mono' }, `${s.method || 'GET'} ${s.url}`)];
  }
  if (job.type === 'shell' && job.shell) {
    const s = typeof job.shell === 'string' ? JSON.parse(job.shell) : job.shell;
    return ['Command', h('span', { class: 'mono' }, s.shell ? s.shell : (s.argv || []).join(' '))];
  }
  return null;
}

// runsPanel is the recent executions: success rate and durations over the
// last 50, and a table of the last 20.
function runsPanel(runs) {
  const finished = runs.filter(e => e.outcome !== 'running' && e.outcome !== 'skipped');
  const ok = finished.filter(e => e.outcome === 'succeeded').length;
  const rate = finished.length ? Math.round((ok / finished.length) * 100) : null;
  const durations = finished.map(e => between(e.started_time, e.finished_time)).filter(d => d !== null);
  const avg = durations.length ? durations.reduce((a, b) => a + b, 0) / durations.length : null;
  const sorted = [...durations].sort((a, b) => a - b);
  const p95 = sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] : null;

  // Oldest first, for the charts. Their times carry seconds when the runs
  // span less than ten minutes, where minutes alone would repeat.
  const at = e => new Date(e.started_time || e.scheduled_time).getTime();
  const seconds = runs.length > 0 && at(runs[0]) - at(runs[runs.length - 1]) < 600000;
  const chrono = [...runs].reverse().map(e => ({
    label: fmtTime(e.started_time || e.scheduled_time, { date: false, seconds, zone: false }),
    duration: between(e.started_time, e.finished_time),
    ok: e.outcome === 'succeeded' ? 1 : 0,
    bad: ['failed', 'timed_out', 'node_lost'].includes(e.outcome) ? 1 : 0,
    other: ['cancelled', 'skipped', 'running', 'killed'].includes(e.outcome) ? 1 : 0,
  }));

  return panel(`Recent executions`,
    h('div', { class: 'stats' },
      stat('success rate', rate === null ? '—' : `${rate}%`, { 'data-testid': 'success-rate' }),
      stat('finished runs', `${finished.length}`, { title: `of the last ${CHART_RUNS} executions` }),
      stat('mean duration', fmtDuration(avg)),
      stat('p95 duration', fmtDuration(p95))),
    runs.length ? h('div', { class: 'grid charts' },
      lineChart(`Duration of the last ${chrono.length} executions`, chrono, [{ key: 'duration', label: 'duration', color: 0 }],
        { label: r => r.label, fmtY: v => fmtDuration(v, { fine: true }), height: 160, note: `times in ${zoneLabel()}` }),
      barChart(`Outcome of the last ${chrono.length} executions`, chrono,
        [{ key: 'ok', label: 'succeeded', color: 2 }, { key: 'bad', label: 'failed', color: 1 }, { key: 'other', label: 'other', color: 3 }],
        { label: r => r.label, fmtY: () => '', height: 160, note: `times in ${zoneLabel()}` })) : null,
    table([
      { label: 'Started', value: e => link('/executions/' + encodeURIComponent(e.id), fmtTime(e.started_time || e.scheduled_time), { class: 'nowrap' }) },
      { label: 'Outcome', value: e => outcomeBadge(e.outcome) },
      { label: 'Attempt', value: e => String(e.attempt), num: true },
      { label: 'Duration', value: e => fmtDuration(between(e.started_time, e.finished_time)), num: true },
      { label: 'Trigger', value: e => e.manual ? h('span', { class: 'muted' }, 'manual') : (e.trigger_name || '—') },
      { label: 'Node', value: e => nameText(e.node_id, { class: 'mono' }) },
      { label: 'Error', value: e => e.error ? clipText(e.error, { class: 'err-text' }) : '' },
    ], runs.slice(0, TABLE_RUNS), { empty: 'No executions yet.', caption: 'Recent executions', rowAttrs: () => ({ 'data-testid': 'execution-row' }) }),
    runs.length ? h('p', null, link('/executions?job=' + encodeURIComponent(runs[0].job_group + '/' + runs[0].job_name), 'All executions of this job')) : null);
}
