// The calendars page: every exclusion calendar with its kind, what it
// excludes and the jobs whose triggers use it. Operators create calendars
// (a holiday calendar's dates, or another kind as JSON), import one from
// an iCalendar file, and delete unused ones.
import { h, replace, pageHead, panel, table, badge, link, button, errorBox } from '../ui.js';
import { calendarRoute, summarize, triggerJobs, usedByLinks, loadJobs, newCalendarDialog, importDialog, deleteCalendar } from './calendar.js';

export async function render(ctx) {
  let cals, jobs;
  try {
    [cals, jobs] = await Promise.all([ctx.api.get('/calendars', null, { signal: ctx.signal }), loadJobs(ctx)]);
  } catch (err) {
    if (err.name === 'AbortError') return;
    replace(ctx.main, pageHead('Calendars'), errorBox(err));
    return;
  }
  if (!ctx.current()) return;
  const operator = ctx.can('operator');
  const byTrigger = triggerJobs(jobs);
  const defOf = c => (typeof c.calendar === 'string' ? JSON.parse(c.calendar) : c.calendar) || {};

  const actions = operator ? [
    button('Import .ics', async () => {
      const name = await importDialog(ctx);
      if (name) ctx.navigate(calendarRoute(name));
    }),
    button('New calendar', async () => {
      const name = await newCalendarDialog(ctx);
      if (name) ctx.navigate(calendarRoute(name));
    }, { kind: 'primary' }),
  ] : [];

  replace(ctx.main,
    pageHead('Calendars', ...actions),
    h('p', { class: 'muted' }, 'A calendar excludes times from the triggers that use it: holidays, weekends, nights. A trigger names its calendar in the job\'s definition.'),
    panel(null, table([
      { label: 'Name', value: c => link(calendarRoute(c.name), c.name, { class: 'job-link' }) },
      { label: 'Kind', value: c => badge(defOf(c).type || '?', 'info') },
      { label: 'Description', value: c => defOf(c).description || h('span', { class: 'muted' }, '—') },
      { label: 'Excludes', value: c => h('span', null, summarize(defOf(c)), h('span', { class: 'muted' }, ` (${defOf(c).time_zone})`)) },
      { label: 'Used by', value: c => usedByLinks(c.used_by, byTrigger) },
      operator ? { label: h('span', { class: 'visually-hidden' }, 'Actions'), value: c => button('Delete', async () => {
        if (await deleteCalendar(ctx, c)) render(ctx);
      }, { 'aria-label': `Delete calendar ${c.name}` }) } : null,
    ].filter(Boolean), cals, {
      empty: operator ? 'No calendar yet: create one, or import an .ics file of holidays.' : 'No calendar yet.',
      caption: 'Calendars',
      rowAttrs: c => ({ dataset: { calendar: c.name } }),
    })));
}
