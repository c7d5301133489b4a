// The jobs list: search as you type, filters by group, state and failing,
// cursor paging. The filters live in the fragment's query (#/jobs?q=…), so
// a link or the back button shows the same list.
import { fromNow, schedOf, scheduleText, describeSchedule } from './jobutil.js';
import { h, replace, pageHead, panel, table, badge, outcomeBadge, timeEl, relTime, link, field, debounce, moreButton, errorBox, nameText } from '../ui.js';

const PAGE = 50;
// FOLLOW bounds the requests of one load that fill a short filtered page.
const FOLLOW = 5;

/** jobRoute is the console route of a job's page. */
export function jobRoute(group, name) {
  return '/jobs/' + encodeURIComponent(group) + '/' + encodeURIComponent(name);
}

/** stateBadges shows whether a job is paused or active, failing or running. */
export function stateBadges(job) {
  const st = job.status || {};
  return h('span', { class: 'badges' },
    job.paused ? badge('paused') : badge('active'),
    st.failing ? badge('failing') : null,
    st.running ? badge(`${st.running} running`, 'running') : null);
}

export async function render(ctx) {
  const q = ctx.query;
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter jobs' },
    field('q', 'Search', { type: 'search', value: q.get('q') || '', placeholder: 'group, name or description', autocomplete: 'off' }),
    field('group', 'Group', { value: q.get('group') || '', autocomplete: 'off' }),
    field('state', 'State', { type: 'select', value: q.get('state') || '', options: [['', 'any'], ['active', 'active'], ['paused', 'paused']] }),
    h('div', { class: 'field checkbox-field' },
      h('label', null, h('input', { type: 'checkbox', name: 'failing', checked: q.get('failing') === 'true' }), ' Failing only')));
  filters.addEventListener('submit', ev => ev.preventDefault());

  const results = h('div', { 'data-testid': 'jobs-results' });
  const count = h('p', { class: 'muted', 'aria-live': 'polite' });
  const actions = ctx.can('operator') ? [link('/jobs/new', 'New job', { class: 'btn btn-primary' })] : [];
  replace(ctx.main, pageHead('Jobs', ...actions), panel(null, filters, count, results));

  let jobs = [];
  let next = '';
  let seq = 0;

  // words caches the schedules in words that the API explains (cron
  // expressions), by schedule, for as long as the page is shown.
  const words = new Map();
  const scheduleCell = j => {
    const triggers = j.triggers || [];
    if (triggers.length === 0) return h('span', { class: 'muted' }, 'on demand');
    // A cron expression shows with its meaning under it; a simple
    // schedule says its interval; the other kinds say themselves in words.
    return h('ul', { class: 'plain-list', 'data-testid': 'schedule' }, triggers.map(t => {
      const kind = schedOf(t).kind;
      const li = h('li', null, kind === 'cron' || kind === 'simple' ? h('span', { class: kind === 'cron' ? 'mono' : null }, scheduleText(t)) : null);
      if (kind !== 'simple') {
        const key = JSON.stringify([t.schedule, t.start_time]);
        if (!words.has(key)) words.set(key, describeSchedule(ctx.api, t, ctx.signal).catch(() => ''));
        words.get(key).then(text => { if (text) li.append(h('div', { class: kind === 'cron' ? 'muted small' : null }, text)); });
      }
      return li;
    }));
  };

  const current = () => {
    const f = filters.elements;
    return {
      q: f.q.value.trim(),
      group: f.group.value.trim(),
      state: f.state.value,
      failing: f.failing.checked ? 'true' : '',
    };
  };

  const draw = () => {
    const more = next ? moreButton(() => load(true)) : null;
    replace(results,
      table([
        { label: 'Job', cls: 'name-col', value: j => h('div', null, link(jobRoute(j.group, j.name), nameText(`${j.group}/${j.name}`), { class: 'job-link' }),
          j.description ? h('div', { class: 'muted small' }, j.description) : null) },
        { label: 'Schedule', value: j => scheduleCell(j) },
        { label: 'Type', value: j => j.type },
        { label: 'State', value: j => stateBadges(j) },
        { label: 'Last outcome', value: j => j.status && j.status.last_outcome
          ? h('span', null, outcomeBadge(j.status.last_outcome), ' ', h('span', { class: 'muted small' }, relTime(j.status.last_run)))
          : h('span', { class: 'muted' }, 'never run') },
        { label: 'Next fire', value: j => j.status && j.status.next_fire_time
          ? h('span', null, timeEl(j.status.next_fire_time), ' ', h('span', { class: 'muted small' }, fromNow(j.status.next_fire_time)))
          : h('span', { class: 'muted' }, j.paused ? 'paused' : 'none') },
      ], jobs, { empty: 'No job matches these filters.', caption: 'Jobs', rowAttrs: j => ({ 'data-job': `${j.group}/${j.name}` }) }),
      more ? h('div', { class: 'more' }, more) : null);
    count.textContent = `${jobs.length}${next ? '+' : ''} job${jobs.length === 1 ? '' : 's'}`;
  };

  const load = async (append = false) => {
    const f = current();
    const mine = ++seq;
    try {
      // A filtered page may come short, even empty, with a next cursor:
      // the server reads a bounded number of jobs a request. Follow it a
      // few times to fill the page; the "more" button takes it from there.
      let got = [];
      let cursor = append ? next : '';
      for (let i = 0; i < FOLLOW; i++) {
        const page = await ctx.api.get('/jobs', { ...f, limit: PAGE - got.length, cursor }, { signal: ctx.signal });
        if (mine !== seq || !ctx.current()) return;
        got = got.concat(page.jobs || []);
        cursor = page.next || '';
        if (!cursor || got.length >= PAGE) break;
      }
      jobs = append ? jobs.concat(got) : got;
      next = cursor;
      draw();
    } catch (err) {
      if (err.name === 'AbortError' || mine !== seq) return;
      replace(results, errorBox(err));
    }
  };

  // The filters go in the fragment without a new history entry per key
  // typed (replaceState fires no hashchange, so the page is not redrawn).
  const apply = () => {
    const qs = new URLSearchParams(Object.entries(current()).filter(([, v]) => v)).toString();
    history.replaceState(null, '', '#/jobs' + (qs ? '?' + qs : ''));
    load();
  };
  const typed = debounce(apply, 250);
  filters.elements.q.addEventListener('input', typed);
  filters.elements.group.addEventListener('input', typed);
  filters.elements.state.addEventListener('change', apply);
  filters.elements.failing.addEventListener('change', apply);

  await load();
}
