// The "why did it (not) fire?" page: pick a job and an instant, and the
// server says what its schedule meant then and what the scheduler did
// (GET /jobs/{group}/{name}/explain?at=…). The question lives in the
// fragment's query (?job=group/name&at=RFC3339), so an execution page can
// link straight to the answer for its firing.
import { h, replace, pageHead, panel, table, badge, outcomeBadge, timeEl, fmtTime, fmtDuration, between, link, field, showError, clearErrors, toLocalInput, fromLocalInput,
  nameText, zoneLabel, clipText, instantEcho } from '../ui.js';
import { jobPath } from '../api.js';
import { jobPicker } from '../picker.js';

/** jobRoute is the console route of a job. */
export function jobRoute(group, name) {
  return '/jobs/' + encodeURIComponent(group) + '/' + encodeURIComponent(name);
}

/** splitJob splits "group/name" at its first slash; null if either part is empty. */
export function splitJob(key) {
  const i = key.indexOf('/');
  if (i <= 0 || i === key.length - 1) return null;
  return [key.slice(0, i), key.slice(i + 1)];
}

// decisionKinds colours a decision's kind.
const decisionKinds = { fired: 'ok', misfired: 'warn', skipped: 'skipped', vetoed: 'warn', paused: 'paused', retry_scheduled: 'info' };

export async function render(ctx) {
  const jobKey = ctx.query.get('job') || '';
  const at = ctx.query.get('at') || '';
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const form = h('form', { class: 'row', 'aria-label': 'Question' },
    jobPicker(ctx, 'job', 'Job', { value: jobKey, required: true }),
    field('at', `At (your time, ${zoneLabel()})`, { type: 'datetime-local', step: 1, value: toLocalInput(at || new Date()), required: true }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn-primary' }, 'Explain')));
  form.elements.at.after(instantEcho(form.elements.at));
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    clearErrors(form);
    error.hidden = true;
    const key = form.elements.job.value.trim();
    if (!splitJob(key)) {
      showError(form, { field: 'job', message: 'Choose a job from the list, or type its key as group/name.' }, null);
      return;
    }
    const when = form.elements.at.value;
    if (!when) {
      showError(form, { field: 'at', message: 'Pick an instant.' }, null);
      return;
    }
    const qs = new URLSearchParams({ job: key, at: fromLocalInput(when) });
    const route = '/explain?' + qs.toString();
    if (location.hash === '#' + route) answer(); else ctx.navigate(route);
  });

  const result = h('div', { 'aria-live': 'polite' });
  replace(ctx.main,
    pageHead('Why did it (not) fire?'),
    panel(null, h('p', { class: 'muted' }, 'Choose a job (search by group, name or description) and an instant: the server looks at the job\'s schedule around it and what the scheduler recorded.'), form, error),
    result);

  async function answer() {
    const parts = splitJob(jobKey);
    if (!parts || !at) return;
    replace(result, h('p', { class: 'loading' }, 'Asking the server…'));
    let ex;
    try {
      ex = await ctx.api.get(jobPath(...parts) + '/explain', { at }, { signal: ctx.signal });
    } catch (err) {
      if (err.name === 'AbortError') return;
      // An unknown job is the job field's fault; other refusals name their field.
      showError(form, err.status === 404 ? { field: 'job', message: err.message } : err, error);
      replace(result);
      return;
    }
    if (!ctx.current()) return;
    ctx.setTitle(`Why ${jobKey} at ${fmtTime(at)}`);
    replace(result, renderExplanation(ex, parts));
  }
  await answer();
}

// rfc3339 matches the instants the server writes into a summary.
const rfc3339 = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})/g;

/**
 * localTimes shows a summary with its instants in the browser's zone (to
 * the millisecond when the server gave a fraction), each a <time> whose
 * title is the server's original text.
 */
function localTimes(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(rfc3339)) {
    out.push(text.slice(last, m.index));
    out.push(h('time', { datetime: m[0], title: m[0] }, fmtTime(new Date(m[0]), { ms: !!m[1] })));
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

/** renderExplanation shows an api.Explanation: the verdict first, then the evidence. */
function renderExplanation(ex, [group, name]) {
  const at = new Date(ex.at).getTime();
  // The fire time the question is about: the last one at or before the instant.
  const past = (ex.fire_times || []).filter(t => new Date(t).getTime() <= at);
  const fire = past.length ? past[past.length - 1] : null;
  return [
    h('section', { class: 'panel verdict', 'aria-label': 'Verdict', 'data-testid': 'verdict' },
      h('h2', null, 'Verdict'),
      h('p', { class: 'verdict-text' }, localTimes(ex.summary)),
      h('p', { class: 'muted' }, 'Job ', link(jobRoute(group, name), nameText(`${group}/${name}`)), ' at ', timeEl(ex.at), '.')),
    h('div', { class: 'grid' },
      panel('Fire times around the instant',
        ex.fire_times && ex.fire_times.length
          ? h('ul', { class: 'fire-times' }, ex.fire_times.map(t => {
            const ms = new Date(t).getTime();
            const mark = t === fire ? ' ← the fire time in question' : ms > at ? ' (after)' : '';
            return h('li', { class: t === fire ? 'current' : null }, timeEl(t), h('span', { class: 'muted' }, mark));
          }))
          : h('p', { class: 'empty' }, 'The job\'s schedules have no fire time near this instant (no trigger, or all ended).')),
      panel('What the scheduler decided',
        table([
          { label: 'At', value: d => h('span', { class: 'nowrap' }, timeEl(d.at)) },
          { label: 'Decision', value: d => badge(d.kind.replace('_', ' '), decisionKinds[d.kind] || 'info') },
          { label: 'Why', value: d => d.reason || '—' },
          { label: 'For fire time', value: d => h('span', { class: 'nowrap' }, timeEl(d.scheduled_time)) },
          { label: 'Trigger', value: d => d.trigger_name || '—' },
          { label: 'Node', value: d => h('span', { class: 'mono' }, d.node_id || '—') },
          { label: 'Execution', value: d => d.execution_id ? link('/executions/' + encodeURIComponent(d.execution_id), 'open') : '—' },
        ], ex.decisions, { empty: 'No decision was recorded around this instant.', caption: 'Decisions' }))),
    panel('Executions of that fire time',
      table([
        { label: 'Attempt', num: true, value: e => link('/executions/' + encodeURIComponent(e.id), `#${e.attempt}`) },
        { label: 'Outcome', value: e => outcomeBadge(e.outcome) },
        { label: 'Scheduled', value: e => timeEl(e.scheduled_time) },
        { label: 'Started', value: e => timeEl(e.started_time) },
        { label: 'Lag', num: true, value: e => e.attempt === 1 && !e.manual ? fmtDuration(between(e.scheduled_time, e.started_time)) : '—' },
        { label: 'Node', value: e => h('span', { class: 'mono' }, e.node_id || '—') },
        { label: 'Error', value: e => e.error ? clipText(e.error, { class: 'err-text' }) : '' },
      ], ex.executions, { empty: 'No execution ran for that fire time.', caption: 'Executions' })),
  ];
}
