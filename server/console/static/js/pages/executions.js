// The executions page: the execution history of every job, newest first,
// filtered by job, outcome, node and a range of start times. The filters
// and the page's cursor live in the fragment's query, so a filtered view
// can be bookmarked and the browser's Back button returns to newer pages.
// The newest page refreshes itself every 5 s.
import { h, replace, pageHead, panel, table, outcomeBadge, timeEl, fmtTime, fmtDuration, between, link, field, errorBox, toLocalInput, fromLocalInput,
  nameText, clipText, copyButton } from '../ui.js';
import { jobRoute } from './explain.js';
import { jobPicker } from '../picker.js';

/** OUTCOMES are the outcomes GET /executions?outcome= accepts. */
export const OUTCOMES = ['running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'skipped', 'node_lost', 'killed', 'no_executor', 'executor_lost'];

/** executionRoute is the console route of an execution. */
export function executionRoute(id) {
  return '/executions/' + encodeURIComponent(id);
}

/** lagOf is an execution's lag (start − scheduled) in ms, or null when it has none: retries and manual runs. */
export function lagOf(e) {
  if (e.manual || e.attempt > 1 || e.recovering) return null;
  return between(e.scheduled_time, e.started_time);
}

/** durationOf is how long an execution ran (so far, while running), in ms. */
export function durationOf(e) {
  if (!e.started_time) return null;
  return between(e.started_time, e.finished_time || new Date().toISOString());
}

/** executionsTable renders api.Execution rows; the job page may show it too. */
export function executionsTable(execs, { showJob = true, empty = 'No execution matches.' } = {}) {
  return table([
    // The ID is cut to fit; its title and the copy button hold all of it.
    { label: 'Execution', value: e => h('span', { class: 'id-cell' },
      link(executionRoute(e.id), clipText(e.id, { class: 'mono id' }), { 'aria-label': `Execution ${e.id}` }), copyButton(e.id, 'execution ID')) },
    showJob ? { label: 'Job', cls: 'name-col', value: e => link(jobRoute(e.job_group, e.job_name), nameText(`${e.job_group}/${e.job_name}`)) } : null,
    { label: 'Scheduled', value: e => timeEl(e.scheduled_time) },
    { label: 'Started', value: e => timeEl(e.started_time) },
    { label: 'Duration', num: true, value: e => e.outcome === 'running' ? h('span', { class: 'muted' }, fmtDuration(durationOf(e)) + '…') : fmtDuration(durationOf(e)) },
    { label: 'Lag', num: true, value: e => {
      const lag = lagOf(e);
      if (lag !== null) return fmtDuration(lag);
      return h('span', { class: 'muted', title: 'Lag is measured for the first attempt of a scheduled firing only' }, e.manual ? 'manual' : e.attempt > 1 ? 'retry' : '—');
    } },
    { label: 'Outcome', value: e => outcomeBadge(e.outcome) },
    { label: 'Attempt', num: true, value: e => String(e.attempt) },
    { label: 'Node', cls: 'node-col', value: e => e.node_id ? nameText(e.node_id, { class: 'mono' }) : '—' },
    { label: 'Error', cls: 'err-col', value: e => e.error ? clipText(e.error, { class: 'err-text', 'data-testid': 'exec-error' }) : '' },
  ].filter(Boolean), execs, { empty, caption: 'Executions', rowAttrs: e => ({ dataset: { outcome: e.outcome, id: e.id } }) });
}

export async function render(ctx) {
  const q = ctx.query;
  const filters = {
    job: q.get('job') || '',
    outcome: q.get('outcome') || '',
    node: q.get('node') || '',
    from: q.get('from') || '',
    to: q.get('to') || '',
  };
  const cursor = q.get('cursor') || '';

  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter executions' },
    jobPicker(ctx, 'job', 'Job', { value: filters.job }),
    field('outcome', 'Outcome', { type: 'select', value: filters.outcome, options: [['', 'any'], ...OUTCOMES.map(o => [o, o.replaceAll('_', ' ')])] }),
    field('node', 'Node', { value: filters.node, placeholder: 'node ID' }),
    field('from', 'Started from', { type: 'datetime-local', step: 1, value: filters.from ? toLocalInput(filters.from) : '' }),
    field('to', 'Started before', { type: 'datetime-local', step: 1, value: filters.to ? toLocalInput(filters.to) : '' }),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'btn-primary' }, 'Filter'),
      h('button', { type: 'button', onclick: () => ctx.navigate('/executions') }, 'Clear')));
  // Choosing an outcome applies at once; text fields apply on submit.
  form.elements.outcome.addEventListener('change', () => form.requestSubmit());
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    const qs = new URLSearchParams();
    const v = name => form.elements[name].value.trim();
    if (v('job')) qs.set('job', v('job'));
    if (v('outcome')) qs.set('outcome', v('outcome'));
    if (v('node')) qs.set('node', v('node'));
    if (v('from')) qs.set('from', fromLocalInput(v('from')));
    if (v('to')) qs.set('to', fromLocalInput(v('to')));
    const s = qs.toString();
    ctx.navigate('/executions' + (s ? '?' + s : ''));
  });

  const body = h('div');
  const status = h('p', { class: 'muted', 'aria-live': 'polite' });
  replace(ctx.main, pageHead('Executions'), panel(null, form), body, status);

  const pageRoute = c => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(filters)) if (v) qs.set(k, v);
    if (c) qs.set('cursor', c);
    return '/executions?' + qs.toString();
  };

  const load = async () => {
    let list;
    try {
      list = await ctx.api.get('/executions', { ...filters, cursor, limit: 50 }, { signal: ctx.signal });
    } catch (err) {
      if (err.name === 'AbortError') return;
      replace(body, errorBox(err));
      if (err.field) {
        const f = form.querySelector(`.field[data-field="${CSS.escape(err.field)}"]`);
        if (f) f.classList.add('invalid');
      }
      return;
    }
    if (!ctx.current()) return;
    const nav = h('div', { class: 'actions pager' },
      cursor ? link(pageRoute(''), '← Newest', { class: 'btn' }) : null,
      list.next ? link(pageRoute(list.next), 'Older →', { class: 'btn', 'data-testid': 'older' }) : null);
    replace(body, panel(null, executionsTable(list.executions), nav));
    replace(status, cursor
      ? 'An older page: it does not refresh itself.'
      : `Newest first; refreshes every 5 s. Updated ${fmtTime(new Date(), { date: false })}.`);
  };
  await load();
  if (!cursor) ctx.every(5000, load);
}
