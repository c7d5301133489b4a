// The calendar page: one exclusion calendar, the triggers that use it,
// and for operators its editor: a holiday calendar's dates (add one,
// remove one, paste a list), any other kind as JSON. Operators may also
// replace it from an iCalendar file or delete it. The calendars page
// shares the import dialog, the "new calendar" dialog and the helpers
// below.
import { h, replace, pageHead, panel, facts, badge, link, button, field, toast, confirmDialog, formDialog, showError, clearErrors, errorBox } from '../ui.js';
import { jobRoute } from './explain.js';

/** KINDS are the calendar types of package calendar's JSON form. */
export const KINDS = ['holiday', 'weekly', 'monthly', 'annual', 'daily', 'cron'];

// templates are starting points for the JSON editor of each kind.
const templates = {
  holiday: { excluded_dates: [] },
  weekly: { excluded_days_of_week: [1, 7] },
  monthly: { excluded_days_of_month: [] },
  annual: { excluded_days: ['12-25', '01-01'] },
  daily: { range_start: '09:00:00.000', range_end: '17:00:00.000', invert_time_range: false },
  cron: { expression: '* * 0-5 ? * *' },
};

const dayNames = ['', 'Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/** calendarRoute is the console route of a calendar. */
export function calendarRoute(name) {
  return '/calendars/' + encodeURIComponent(name);
}

/** calPath is the API path of a calendar. */
export function calPath(name) {
  return '/calendars/' + encodeURIComponent(name);
}

/** browserZone is the browser's IANA time zone. */
export function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** zoneList is a <datalist id=id> of IANA zones, for time zone inputs. */
export function zoneList(id) {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [browserZone(), 'UTC'];
  return h('datalist', { id }, zones.map(z => h('option', { value: z })));
}

/** summarize says in a few words what a calendar definition excludes. */
export function summarize(def) {
  if (!def) return '—';
  let s;
  switch (def.type) {
    case 'holiday': {
      const n = (def.excluded_dates || []).length;
      s = `${n} date${n === 1 ? '' : 's'}`;
      if (n) s += ` (${def.excluded_dates[0]} … ${def.excluded_dates[n - 1]})`;
      break;
    }
    case 'weekly': s = 'every ' + ((def.excluded_days_of_week || []).map(d => dayNames[d] || d).join(', ') || 'no day'); break;
    case 'monthly': s = 'days ' + ((def.excluded_days_of_month || []).join(', ') || 'none') + ' of each month'; break;
    case 'annual': s = 'every year on ' + ((def.excluded_days || []).join(', ') || 'no day'); break;
    case 'daily': s = `${def.invert_time_range ? 'outside' : 'from'} ${def.range_start} ${def.invert_time_range ? '–' : 'to'} ${def.range_end}`; break;
    case 'cron': s = `cron ${def.expression}`; break;
    default: s = def.type;
  }
  if (def.base) s += ', on top of a ' + def.base.type + ' calendar';
  return s;
}

/**
 * triggerJobs maps "group.trigger" keys (api.Calendar.used_by) to their
 * jobs, from a job list: a trigger's group is its job's group.
 */
export function triggerJobs(jobs) {
  const m = new Map();
  for (const j of jobs) {
    (j.triggers || []).forEach((t, i) => m.set(`${j.group}.${t.name || j.name + '-' + i}`, j));
  }
  return m;
}

/** usedByLinks lists the jobs whose triggers use a calendar, linked. */
export function usedByLinks(usedBy, byTrigger) {
  if (!usedBy || !usedBy.length) return h('span', { class: 'muted' }, 'unused');
  return h('ul', { class: 'plain-list' }, usedBy.map(key => {
    const j = byTrigger.get(key);
    return h('li', null, j
      ? [link(jobRoute(j.group, j.name), `${j.group}/${j.name}`), h('span', { class: 'muted' }, ` (trigger ${key.slice(j.group.length + 1)})`)]
      : h('span', { class: 'mono' }, key));
  }));
}

/** loadJobs returns every job (up to 500), or [] if they cannot be read. */
export async function loadJobs(ctx) {
  try {
    return (await ctx.api.get('/jobs', { limit: 500 }, { signal: ctx.signal })).jobs;
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    return [];
  }
}

/** parseDates splits pasted text into YYYY-MM-DD dates and the tokens that are not. */
export function parseDates(text) {
  const ok = [], bad = [];
  for (const tok of text.split(/[\s,;]+/).filter(Boolean)) {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(tok);
    const d = m && new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
    if (d && d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3]) ok.push(tok);
    else bad.push(tok);
  }
  return { ok, bad };
}

/** weekday names a YYYY-MM-DD date's day of the week. */
function weekday(date) {
  const [y, m, d] = date.split('-').map(Number);
  return dayNames[new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 1];
}

/**
 * newCalendarDialog asks for a new calendar's name, kind, zone and
 * description (and a holiday calendar's first dates, or another kind's
 * JSON), creates it, and resolves with its name (null if cancelled).
 */
export function newCalendarDialog(ctx) {
  return formDialog('New calendar', form => {
    const json = field('calendar', 'Definition (JSON)', { type: 'textarea', rows: 8, hint: 'Fields of this kind; type, time_zone and description come from above.' });
    const dates = field('calendar.excluded_dates', 'Dates', { type: 'textarea', rows: 4, placeholder: '2026-12-25\n2026-12-26', hint: 'YYYY-MM-DD, one per line or separated by commas. You can add more later.' });
    const kind = field('calendar.type', 'Kind', { type: 'select', value: 'holiday', options: KINDS.map(k => [k, k === 'holiday' ? 'holiday (dates)' : k]) });
    form.append(
      field('name', 'Name', { required: true, autocomplete: 'off', hint: 'Letters, digits, dots, dashes and underscores.' }),
      kind,
      field('calendar.time_zone', 'Time zone', { value: browserZone(), list: 'new-cal-zones', autocomplete: 'off' }),
      zoneList('new-cal-zones'),
      field('calendar.description', 'Description'),
      dates, json);
    const sel = kind.querySelector('select');
    const sync = () => {
      const holiday = sel.value === 'holiday';
      dates.hidden = !holiday;
      json.hidden = holiday;
      if (!holiday) json.querySelector('textarea').value = JSON.stringify(templates[sel.value], null, 2);
    };
    sel.addEventListener('change', sync);
    sync();
  }, async form => {
    const v = n => form.elements[n].value.trim();
    const type = v('calendar.type');
    const name = v('name');
    if (!name) throw { field: 'name', message: 'A calendar needs a name.' };
    let def;
    if (type === 'holiday') {
      const { ok, bad } = parseDates(v('calendar.excluded_dates'));
      if (bad.length) throw { field: 'calendar.excluded_dates', message: `Not a YYYY-MM-DD date: ${bad.join(', ')}` };
      def = { excluded_dates: [...new Set(ok)].sort() };
    } else {
      try {
        def = JSON.parse(v('calendar') || '{}');
      } catch (err) {
        throw { field: 'calendar', message: 'Not valid JSON: ' + err.message };
      }
    }
    const body = { name, calendar: { type, time_zone: v('calendar.time_zone'), description: v('calendar.description') || undefined, ...def, base: def.base ?? null } };
    await ctx.api.put(calPath(name), body);
    toast(`Calendar ${name} created.`);
    return name;
  }, { submitLabel: 'Create' });
}

/**
 * importDialog imports an iCalendar (.ics) file into a holiday calendar:
 * the file is read in the browser, previewed with a dry run (its dates and
 * event count), then imported. name fixes the calendar's name (replacing
 * it); without one the dialog asks. Resolves with the name, or null.
 */
export function importDialog(ctx, name = '') {
  return new Promise(resolve => {
    let ics = '';
    let previewed = null; // the request body of the last good preview
    let result = null;
    const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const preview = h('div', { class: 'import-preview', 'aria-live': 'polite', 'data-testid': 'import-preview' });
    const importBtn = h('button', { type: 'submit', class: 'btn-primary', disabled: true }, 'Import');
    const form = h('form', { class: 'stack', novalidate: true },
      h('h2', null, name ? `Import into ${name}` : 'Import an iCalendar file'),
      h('p', { class: 'muted' }, 'Every date an event of the file covers becomes an excluded date of a holiday calendar. ',
        name ? 'This replaces the calendar\'s definition.' : 'An existing calendar of that name is replaced.'),
      error,
      name ? null : field('name', 'Calendar name', { required: true, autocomplete: 'off' }),
      field('ics', 'iCalendar file', { type: 'file', accept: '.ics,text/calendar' }),
      h('div', { class: 'row' },
        field('time_zone', 'Time zone', { placeholder: 'from the file, else UTC', list: 'import-zones', autocomplete: 'off' }),
        field('years', 'Years of recurring events', { type: 'number', min: 1, max: 50, value: 5 })),
      zoneList('import-zones'),
      field('description', 'Description', { placeholder: 'from the file\'s name' }),
      preview,
      h('div', { class: 'actions' },
        h('button', { type: 'button', onclick: () => dlg.close() }, 'Cancel'),
        h('button', { type: 'button', onclick: () => runPreview() }, 'Preview'),
        importBtn));
    const dlg = h('dialog', { 'aria-label': 'Import an iCalendar file', class: 'wide' }, form);

    const target = () => name || form.elements.name.value.trim();
    const body = dryRun => {
      const b = { ics, dry_run: dryRun };
      const tz = form.elements.time_zone.value.trim();
      const desc = form.elements.description.value.trim();
      const years = form.elements.years.value.trim();
      if (tz) b.time_zone = tz;
      if (desc) b.description = desc;
      if (years) b.years = Number(years);
      return b;
    };
    const sameAsPreview = () => previewed && JSON.stringify({ ...body(true), name: target() }) === previewed;

    async function runPreview() {
      clearErrors(form);
      error.hidden = true;
      importBtn.disabled = true;
      previewed = null;
      if (!target()) { showError(form, { field: 'name', message: 'Name the calendar.' }, error); return; }
      if (!ics) { showError(form, { field: 'ics', message: 'Choose an .ics file.' }, error); return; }
      replace(preview, h('p', { class: 'loading' }, 'Reading the file…'));
      let res;
      try {
        res = await ctx.api.post(calPath(target()) + '/import', body(true));
      } catch (err) {
        replace(preview);
        showError(form, err, error);
        return;
      }
      previewed = JSON.stringify({ ...body(true), name: target() });
      importBtn.disabled = false;
      const def = res.calendar && res.calendar.calendar;
      const shown = res.dates.slice(0, 400);
      replace(preview,
        h('p', { 'data-testid': 'import-summary' },
          h('strong', null, `${res.events} event${res.events === 1 ? '' : 's'} → ${res.dates.length} date${res.dates.length === 1 ? '' : 's'}`),
          ` in ${def ? def.time_zone : 'UTC'}; `, res.created ? `creates calendar ${target()}.` : `replaces calendar ${target()}.`),
        def && def.description ? h('p', { class: 'muted' }, def.description) : null,
        h('ul', { class: 'chips' }, shown.map(d => h('li', { class: 'chip' }, d))),
        res.dates.length > shown.length ? h('p', { class: 'muted' }, `… and ${res.dates.length - shown.length} more.`) : null);
    }

    form.elements.ics.addEventListener('change', () => {
      const file = form.elements.ics.files[0];
      ics = '';
      previewed = null;
      importBtn.disabled = true;
      if (!file) return;
      const reader = new FileReader();
      reader.onload = () => { ics = String(reader.result); runPreview(); };
      reader.onerror = () => showError(form, { field: 'ics', message: 'The file cannot be read: ' + reader.error }, error);
      reader.readAsText(file);
    });
    // A changed option needs a new preview before importing.
    form.addEventListener('input', ev => {
      if (ev.target.name !== 'ics') importBtn.disabled = !sameAsPreview();
    });
    form.addEventListener('submit', async ev => {
      ev.preventDefault();
      if (!sameAsPreview()) { await runPreview(); return; }
      clearErrors(form);
      error.hidden = true;
      importBtn.disabled = true;
      try {
        const res = await ctx.api.post(calPath(target()) + '/import', body(false));
        toast(`Calendar ${target()} ${res.created ? 'created' : 'replaced'}: ${res.dates.length} dates from ${res.events} events.`);
        result = target();
        dlg.close();
      } catch (err) {
        importBtn.disabled = false;
        showError(form, err, error);
      }
    });
    dlg.addEventListener('close', () => { dlg.remove(); resolve(result); });
    document.body.append(dlg);
    dlg.showModal();
    form.querySelector('input').focus();
  });
}

/** deleteCalendar asks, deletes and resolves true once deleted; the API's refusal (in use) is shown. */
export async function deleteCalendar(ctx, cal) {
  const uses = (cal.used_by || []).length;
  const ok = await confirmDialog(`Delete calendar ${cal.name}?`,
    uses ? `Triggers still use it (${cal.used_by.join(', ')}): the server will refuse until they stop.` : 'No trigger uses it. This cannot be undone.',
    { confirmLabel: 'Delete', danger: true });
  if (!ok) return false;
  try {
    await ctx.api.del(calPath(cal.name));
  } catch (err) {
    toast(err.message, 'error');
    return false;
  }
  toast(`Calendar ${cal.name} deleted.`);
  return true;
}

export async function render(ctx) {
  const name = ctx.params.name;
  let cal, jobs;
  try {
    [cal, jobs] = await Promise.all([ctx.api.get(calPath(name), null, { signal: ctx.signal }), loadJobs(ctx)]);
  } catch (err) {
    if (err.name === 'AbortError') return;
    replace(ctx.main, pageHead(name), errorBox(err), h('p', null, link('/calendars', '← All calendars')));
    return;
  }
  ctx.setTitle(`Calendar ${name}`);
  const def = typeof cal.calendar === 'string' ? JSON.parse(cal.calendar) : cal.calendar;
  const operator = ctx.can('operator');
  const byTrigger = triggerJobs(jobs);

  const actions = operator ? [
    button('Import .ics', async () => {
      if (await importDialog(ctx, name)) render(ctx);
    }),
    button('Delete', async () => {
      if (await deleteCalendar(ctx, cal)) ctx.navigate('/calendars');
    }, { kind: 'danger' }),
  ] : [];

  replace(ctx.main,
    h('p', { class: 'crumbs' }, link('/calendars', '← Calendars')),
    pageHead(h('span', null, 'Calendar ', h('span', { class: 'mono-title' }, name), ' ', badge(def.type, 'info')), ...actions),
    h('div', { class: 'grid' },
      panel('About', facts([
        ['Kind', def.type],
        ['Time zone', def.time_zone],
        ['Description', def.description || h('span', { class: 'muted' }, 'none')],
        ['Excludes', summarize(def)],
      ])),
      panel('Used by', usedByLinks(cal.used_by, byTrigger),
        h('p', { class: 'muted small' }, 'Triggers that use a calendar do not fire at the times it excludes.'))),
    def.type === 'holiday' ? holidayEditor(ctx, name, def, operator) : jsonEditor(ctx, name, def, operator));
}

/** holidayEditor lists a holiday calendar's dates and, for operators, edits them. */
function holidayEditor(ctx, name, def, operator) {
  let dates = new Set(def.excluded_dates || []);
  let dirty = false;
  const list = h('div', { 'data-testid': 'dates' });
  const count = h('span', { class: 'muted' });
  const saveBtn = operator ? button('Save changes', () => save(), { kind: 'primary', disabled: true }) : null;
  const dirtyNote = h('span', { class: 'muted', 'aria-live': 'polite' });
  const form = h('form', { class: 'stack', novalidate: true });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });

  const changed = () => {
    dirty = true;
    if (saveBtn) saveBtn.disabled = false;
    dirtyNote.textContent = 'Unsaved changes.';
    draw();
  };
  const draw = () => {
    const sorted = [...dates].sort();
    count.textContent = ` ${sorted.length} date${sorted.length === 1 ? '' : 's'}`;
    const years = new Map();
    for (const d of sorted) {
      const y = d.slice(0, 4);
      if (!years.has(y)) years.set(y, []);
      years.get(y).push(d);
    }
    replace(list, sorted.length === 0 ? h('p', { class: 'empty' }, 'No date is excluded yet.') : [...years].map(([y, ds]) =>
      h('div', { class: 'year' }, h('h3', null, y),
        h('ul', { class: 'chips' }, ds.map(d => h('li', { class: 'chip', 'data-date': d },
          h('span', null, d, ' ', h('span', { class: 'muted' }, weekday(d))),
          operator ? h('button', { type: 'button', class: 'chip-x', 'aria-label': `Remove ${d}`, title: `Remove ${d}`, onclick: () => { dates.delete(d); changed(); } }, '×') : null))))));
  };

  async function save() {
    clearErrors(form);
    error.hidden = true;
    const tz = form.elements['calendar.time_zone'].value.trim();
    const description = form.elements['calendar.description'].value.trim();
    const body = { name, calendar: { ...def, time_zone: tz, description: description || undefined, excluded_dates: [...dates].sort(), base: def.base ?? null } };
    saveBtn.disabled = true;
    try {
      await ctx.api.put(calPath(name), body);
    } catch (err) {
      saveBtn.disabled = false;
      showError(form, err, error);
      return;
    }
    dirty = false;
    toast(`Calendar ${name} saved.`);
    render(ctx);
  }

  draw();
  if (!operator) return panel('Excluded dates', h('p', null, count), list);

  const addInput = field('add', 'Add a date', { type: 'date' });
  const addBtn = button('Add', () => {
    const v = addInput.querySelector('input').value;
    if (!v) { showError(form, { field: 'add', message: 'Pick a date first.' }, null); return; }
    clearErrors(form);
    dates.add(v);
    changed();
  });
  // Enter in the date adds it, rather than saving the form.
  addInput.querySelector('input').addEventListener('keydown', ev => {
    if (ev.key === 'Enter') { ev.preventDefault(); addBtn.click(); }
  });
  const paste = field('paste', 'Paste a list', { type: 'textarea', rows: 3, placeholder: '2026-12-24, 2026-12-25\n2026-12-31', hint: 'YYYY-MM-DD dates separated by spaces, commas or new lines.' });
  const pasteBtn = button('Add these', () => {
    const ta = paste.querySelector('textarea');
    const { ok, bad } = parseDates(ta.value);
    clearErrors(form);
    if (bad.length) { showError(form, { field: 'paste', message: `Not a YYYY-MM-DD date: ${bad.join(', ')}` }, null); return; }
    if (!ok.length) { showError(form, { field: 'paste', message: 'Paste at least one date.' }, null); return; }
    ok.forEach(d => dates.add(d));
    ta.value = '';
    changed();
  });
  form.addEventListener('submit', ev => { ev.preventDefault(); save(); });
  form.append(error,
    h('div', { class: 'row' },
      field('calendar.time_zone', 'Time zone', { value: def.time_zone, list: 'cal-zones', autocomplete: 'off' }),
      field('calendar.description', 'Description', { value: def.description || '' })),
    zoneList('cal-zones'),
    h('div', { class: 'field', dataset: { field: 'calendar.excluded_dates' } },
      h('span', { class: 'label' }, 'Excluded dates', count), list, h('div', { class: 'error', role: 'alert', hidden: true })),
    h('div', { class: 'row narrow' }, addInput, h('div', { class: 'actions' }, addBtn)),
    h('div', { class: 'row narrow' }, paste, h('div', { class: 'actions' }, pasteBtn)),
    h('div', { class: 'actions' }, saveBtn, dirtyNote));
  form.addEventListener('input', ev => { if (['calendar.time_zone', 'calendar.description'].includes(ev.target.name)) changed(); });
  // Leaving with unsaved dates asks first.
  const beforeUnload = ev => { if (dirty) { ev.preventDefault(); ev.returnValue = ''; } };
  window.addEventListener('beforeunload', beforeUnload);
  ctx.onCleanup(() => window.removeEventListener('beforeunload', beforeUnload));
  return panel('Excluded dates', form);
}

/** jsonEditor shows another kind's definition and, for operators, edits it as JSON. */
function jsonEditor(ctx, name, def, operator) {
  const text = JSON.stringify(def, null, 2);
  if (!operator) return panel('Definition', h('pre', null, text));
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const form = h('form', { class: 'stack', novalidate: true },
    error,
    field('calendar', 'Definition (JSON)', { type: 'textarea', rows: 12, value: text, hint: 'Package calendar\'s JSON form; the server checks it and names what is wrong.' }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn-primary' }, 'Save')));
  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    clearErrors(form);
    error.hidden = true;
    let parsed;
    try {
      parsed = JSON.parse(form.elements.calendar.value);
    } catch (err) {
      showError(form, { field: 'calendar', message: 'Not valid JSON: ' + err.message }, error);
      return;
    }
    try {
      await ctx.api.put(calPath(name), { name, calendar: parsed });
    } catch (err) {
      showError(form, err, error);
      return;
    }
    toast(`Calendar ${name} saved.`);
    render(ctx);
  });
  return panel('Definition', form);
}
