// Small DOM helpers shared by the pages. Text always goes in as text
// nodes, never as HTML, so nothing the API returns can inject markup.

/**
 * h builds an element: h('a', {href: '#/jobs', class: 'btn'}, 'Jobs').
 * Attributes named on* take functions (event listeners); false, null and
 * undefined attributes and children are left out; arrays are flattened.
 */
export function h(tag, attrs, ...children) {
  const el = tag.includes(':') || tag === 'svg'
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.replace(/^svg:/, ''))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** replace empties el and fills it with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** pageHead is a page's title row with its action buttons. */
export function pageHead(title, ...actions) {
  return h('div', { class: 'page-head' }, h('h1', null, title), h('div', { class: 'actions' }, actions));
}

/** panel is a titled box. */
export function panel(title, ...children) {
  return h('section', { class: 'panel', 'aria-label': title || null }, title ? h('h2', null, title) : null, children);
}

/** stat is one figure of a row of figures. */
export function stat(label, value, attrs = {}) {
  return h('div', { class: 'stat', ...attrs }, h('div', { class: 'value' }, value), h('div', { class: 'label' }, label));
}

/** facts is a definition list of [label, value] pairs. */
export function facts(pairs) {
  return h('dl', { class: 'facts' }, pairs.filter(Boolean).map(([k, v]) => [h('dt', null, k), h('dd', null, v ?? '—')]));
}

/**
 * table renders rows under columns [{label, value: row => node|string, num,
 * cls}]: num aligns figures right, cls is a class for the column's cells.
 * empty is shown when there are no rows.
 */
export function table(columns, rows, { empty = 'Nothing to show.', caption, rowAttrs } = {}) {
  if (!rows || rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h('div', { class: 'table-wrap' },
    h('table', null,
      caption ? h('caption', { class: 'visually-hidden' }, caption) : null,
      h('thead', null, h('tr', null, columns.map(c => h('th', { class: c.num ? 'num' : null, scope: 'col' }, c.label)))),
      h('tbody', null, rows.map(r => h('tr', rowAttrs ? rowAttrs(r) : null,
        columns.map(c => h('td', { class: [c.num ? 'num' : '', c.cls || ''].join(' ').trim() || null }, c.value(r))))))));
}

/** badge is a small coloured label; kind picks the colour (an outcome, "ok", "warn"…). */
export function badge(text, kind = text) {
  return h('span', { class: `badge ${kind}` }, text);
}

/** button is a <button type=button>; kind is '', 'primary' or 'danger'. */
export function button(label, onClick, { kind = '', ...attrs } = {}) {
  return h('button', { type: 'button', class: kind ? `btn-${kind}` : null, onclick: onClick, ...attrs }, label);
}

/** link is an in-console link to a route such as '/jobs'. */
export function link(route, text, attrs = {}) {
  return h('a', { href: '#' + route, ...attrs }, text);
}

/**
 * nameText shows a name (a job's group/name, a node ID…) so that it wraps
 * only at its own boundaries, after "/", ".", "-", "_" or ":", never
 * inside a word; a part too long for its box is cut with an ellipsis (the
 * full name is in the title).
 */
export function nameText(name, attrs = {}) {
  const { class: cls, ...rest } = attrs;
  const parts = String(name).split(/(?<=[/._:-])/);
  return h('span', { class: cls ? `name ${cls}` : 'name', title: String(name), ...rest },
    parts.map((p, i) => [i ? h('wbr') : null, h('span', { class: 'name-part' }, p)]));
}

/**
 * clipText shows text cut to one line with an ellipsis; the title holds
 * the whole text, shown on hover.
 */
export function clipText(text, attrs = {}) {
  const { class: cls, ...rest } = attrs;
  return h('span', { class: cls ? `clip ${cls}` : 'clip', title: text, ...rest }, text);
}

/**
 * copyButton copies text to the clipboard when pressed; what names what
 * is copied ("execution ID") for its label and the message.
 */
export function copyButton(text, what) {
  return h('button', { type: 'button', class: 'copy', title: `Copy the ${what}: ${text}`, 'aria-label': `Copy the ${what}`, dataset: { copy: text },
    onclick: async () => {
      if (await copyText(text)) toast(`Copied the ${what}.`);
      else toast(`The browser refused to copy; the ${what} is ${text}`, 'error');
    } }, 'Copy');
}

// copyText puts text on the clipboard: through the Clipboard API where
// the page may use it (HTTPS, localhost), else through a selected
// text area. It reports whether either worked.
async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* try the other way */ }
  const ta = h('textarea', { class: 'visually-hidden', readonly: true, 'aria-hidden': 'true' });
  ta.value = text;
  document.body.append(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

// Times and durations.

// zoneName names a time zone for people at an instant ("UTC", "CET",
// "BST", "GMT-5"): the abbreviation in effect then, DST included.
const zoneName = new Intl.DateTimeFormat('en-GB', { timeZoneName: 'short' });

/** zoneLabel is the browser's zone's short name at d ("UTC", "CEST"). */
export function zoneLabel(d = new Date()) {
  const part = zoneName.formatToParts(d).find(p => p.type === 'timeZoneName');
  return part ? part.value : '';
}

/**
 * fmtTime formats an RFC 3339 time (or Date) in the browser's zone, in the
 * console's one clock format: 24-hour, "2026-11-25 14:05:09 CET". Every
 * time the console shows goes through it. Options leave parts out or add
 * milliseconds: date (false: "14:05:09 CET"), seconds (false: "14:05"),
 * zone (false: no zone label, where the zone is said nearby), ms (true:
 * "14:05:09.012").
 */
export function fmtTime(t, { date = true, seconds = true, zone = true, ms = false } = {}) {
  if (!t) return '—';
  const d = t instanceof Date ? t : new Date(t);
  if (Number.isNaN(d.getTime())) return String(t);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  let s = `${p(d.getHours())}:${p(d.getMinutes())}`;
  if (seconds) s += `:${p(d.getSeconds())}`;
  if (seconds && ms) s += `.${p(d.getMilliseconds(), 3)}`;
  if (date) s = `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${s}`;
  if (zone) s += ` ${zoneLabel(d)}`;
  return s;
}

/**
 * timeEl is a <time> element showing fmtTime and, on hover, how long ago.
 * Squeezed, it wraps between the date and the time, nowhere else.
 */
export function timeEl(t, opts) {
  if (!t) return '—';
  const text = fmtTime(t, opts);
  const cut = opts && opts.date === false ? -1 : text.indexOf(' ');
  return h('time', { datetime: t instanceof Date ? t.toISOString() : t, title: relTime(t) },
    cut < 0 ? text : [h('span', { class: 'nowrap' }, text.slice(0, cut)), ' ', h('span', { class: 'nowrap' }, text.slice(cut + 1))]);
}

/**
 * fmtDuration formats milliseconds: 850 ms, 12.3 s, 4 min 5 s, 2 h 3 min;
 * with fine, durations under 10 ms keep two decimals (0.42 ms). A
 * negative duration takes a minus sign, unless it rounds to zero: never
 * "−0 ms".
 */
export function fmtDuration(ms, { fine = false } = {}) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  const abs = Math.abs(ms);
  let s;
  if (Math.round(abs) < 1000) {
    s = fine && abs < 10 ? `${Number(abs.toFixed(2))} ms` : `${Math.round(abs)} ms`;
  } else if (abs < 59950) {
    const sec = abs / 1000;
    s = `${sec.toFixed(sec < 10 ? 2 : 1)} s`;
  } else {
    const m = Math.floor(abs / 60000);
    const hours = Math.floor(m / 60);
    if (m < 60) s = `${m} min ${Math.round((abs % 60000) / 1000)} s`;
    else if (hours < 48) s = `${hours} h ${m % 60} min`;
    else s = `${Math.floor(hours / 24)} d ${hours % 24} h`;
  }
  return ms < 0 && /[1-9]/.test(s) ? '−' + s : s;
}

/**
 * fmtGoDuration rounds a duration as Go prints it ("-13.828253ms",
 * "1.5s", "2m3.1s") for reading: "−14 ms", "1.50 s". Other text is
 * returned as is.
 */
export function fmtGoDuration(s) {
  if (!s) return '—';
  const units = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  const m = /^(-?)((?:[\d.]+(?:ns|us|µs|ms|s|m|h))+)$/.exec(s);
  if (!m) return s;
  let ms = 0;
  for (const [, n, u] of m[2].matchAll(/([\d.]+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * units[u];
  return fmtDuration(m[1] ? -ms : ms);
}

/** between is the duration from a to b (RFC 3339 times) in ms, or null. */
export function between(a, b) {
  if (!a || !b) return null;
  return new Date(b).getTime() - new Date(a).getTime();
}

/** relTime says how long ago (or from now) t is: "3 min ago", "in 12 s". */
export function relTime(t) {
  if (!t) return '';
  const diff = new Date(t).getTime() - Date.now();
  const abs = Math.abs(diff);
  const s = fmtDuration(abs).replace(/\.\d+ s$/, ' s');
  return diff < 0 ? `${s} ago` : `in ${s}`;
}

/** toLocalInput turns a time into a datetime-local input's value. */
export function toLocalInput(t) {
  const d = t instanceof Date ? t : new Date(t);
  const p = n => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * instantEcho is a hint that repeats the instant a datetime-local input
 * holds in the console's one clock format: the browser draws the input in
 * its own locale's format, 12-hour in some.
 */
export function instantEcho(input) {
  const echo = h('div', { class: 'hint', 'data-testid': 'instant-echo' });
  const show = () => { echo.textContent = input.value ? `= ${fmtTime(new Date(input.value))}` : ''; };
  input.addEventListener('input', show);
  input.addEventListener('change', show);
  show();
  return echo;
}

/** fromLocalInput turns a datetime-local input's value into RFC 3339, or '' if empty. */
export function fromLocalInput(v) {
  return v ? new Date(v).toISOString() : '';
}

// Feedback.

/** toast shows a short message for a few seconds; kind 'error' stays longer. */
export function toast(message, kind = 'ok') {
  const box = document.getElementById('toasts');
  const el = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : null }, message);
  box.append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

/**
 * confirmDialog asks a question in a modal dialog and resolves true if
 * the user confirms. With typeToConfirm, the confirm button stays
 * disabled until that text is typed.
 */
export function confirmDialog(title, message, { confirmLabel = 'Confirm', danger = false, typeToConfirm = '' } = {}) {
  return new Promise(resolve => {
    const input = typeToConfirm
      ? h('input', { type: 'text', 'aria-label': `Type ${typeToConfirm} to confirm`, autocomplete: 'off' })
      : null;
    const ok = h('button', { type: 'submit', class: danger ? 'btn-danger' : 'btn-primary', disabled: !!typeToConfirm, value: 'ok' }, confirmLabel);
    const dlg = h('dialog', { 'aria-labelledby': 'dlg-title' },
      h('form', { method: 'dialog', class: 'stack' },
        h('h2', { id: 'dlg-title' }, title),
        h('p', null, message),
        input ? h('label', { class: 'field' }, h('span', { class: 'label' }, `Type "${typeToConfirm}" to confirm`), input) : null,
        h('div', { class: 'actions' },
          h('button', { type: 'submit', value: 'cancel' }, 'Cancel'), ok)));
    if (input) input.addEventListener('input', () => { ok.disabled = input.value !== typeToConfirm; });
    dlg.addEventListener('close', () => { dlg.remove(); resolve(dlg.returnValue === 'ok'); });
    document.body.append(dlg);
    dlg.showModal();
    (input || ok).focus();
  });
}

/**
 * formDialog shows a modal form built by build(form) and resolves with
 * the result of submit(form) once it succeeds, or null if cancelled.
 * An ApiError from submit is shown in the form, which stays open.
 */
export function formDialog(title, build, submit, { submitLabel = 'Save' } = {}) {
  return new Promise(resolve => {
    const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const form = h('form', { class: 'stack', novalidate: true });
    let result = null;
    const dlg = h('dialog', { 'aria-label': title }, form);
    form.append(h('h2', null, title), error);
    build(form);
    form.append(h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => dlg.close() }, 'Cancel'),
      h('button', { type: 'submit', class: 'btn-primary' }, submitLabel)));
    form.addEventListener('submit', async ev => {
      ev.preventDefault();
      clearErrors(form);
      error.hidden = true;
      try {
        result = await submit(form);
        dlg.close();
      } catch (err) {
        showError(form, err, error);
      }
    });
    dlg.addEventListener('close', () => { dlg.remove(); resolve(result); });
    document.body.append(dlg);
    dlg.showModal();
    const first = form.querySelector('input, select, textarea');
    if (first) first.focus();
  });
}

/**
 * field is a labelled input. opts: type, value, hint, required,
 * options (for a select: [value, label] pairs or strings), rows (textarea),
 * and any other attribute. The control's name is name; the error box
 * under it shows API errors whose field is name.
 */
export function field(name, label, opts = {}) {
  const { type = 'text', value, hint, options, rows, ...attrs } = opts;
  const id = 'f-' + name.replace(/[^a-zA-Z0-9_-]/g, '-') + '-' + Math.random().toString(36).slice(2, 7);
  let control;
  if (type === 'select') {
    control = h('select', { id, name, ...attrs },
      (options || []).map(o => {
        const [v, l] = Array.isArray(o) ? o : [o, o];
        return h('option', { value: v, selected: String(v) === String(value ?? '') }, l);
      }));
  } else if (type === 'textarea') {
    control = h('textarea', { id, name, rows: rows || 4, ...attrs });
    control.value = value ?? '';
  } else if (type === 'checkbox') {
    control = h('input', { id, name, type, checked: !!value, ...attrs });
  } else {
    control = h('input', { id, name, type, value: value ?? '', ...attrs });
  }
  const hintId = hint ? id + '-hint' : null;
  if (hintId) control.setAttribute('aria-describedby', hintId);
  return h('div', { class: 'field', dataset: { field: name } },
    h('label', { for: id }, label),
    control,
    hint ? h('div', { class: 'hint', id: hintId }, hint) : null,
    h('div', { class: 'error', role: 'alert', hidden: true }));
}

/** clearErrors hides every error shown in form. */
export function clearErrors(form) {
  for (const f of form.querySelectorAll('.field.invalid')) f.classList.remove('invalid');
  for (const e of form.querySelectorAll('.field .error')) { e.hidden = true; e.textContent = ''; }
}

/**
 * showError shows an ApiError next to the field it names, when the form
 * has that field (or a parent path of it), and always in box if given.
 */
export function showError(form, err, box) {
  const fieldName = err && err.field;
  let shown = false;
  if (fieldName && form) {
    // "triggers[0].schedule.expression" may be shown by a field of that
    // name or, failing that, of a parent: "triggers[0].schedule", …
    for (let name = fieldName; name && !shown;) {
      const f = form.querySelector(`.field[data-field="${CSS.escape(name)}"]`);
      if (f) {
        f.classList.add('invalid');
        const e = f.querySelector('.error');
        e.textContent = err.message;
        e.hidden = false;
        const c = f.querySelector('input, select, textarea');
        if (c) c.setAttribute('aria-invalid', 'true');
        shown = true;
      }
      const parent = name.replace(/(\.[^.[\]]*|\[\d+\])$/, '');
      if (parent === name) break;
      name = parent;
    }
  }
  if (box) {
    box.textContent = (err && err.message) || String(err);
    box.hidden = false;
  } else if (!shown) {
    toast((err && err.message) || String(err), 'error');
  }
}

/** errorBox is an element saying a page could not load. */
export function errorBox(err) {
  return h('div', { class: 'panel', role: 'alert' }, h('p', { class: 'form-error' }, (err && err.message) || String(err)));
}

/** debounce returns fn delayed until calls stop for ms. */
export function debounce(fn, ms = 300) {
  let t;
  return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}

/** outcomeBadge shows an execution outcome in its colour. */
export function outcomeBadge(outcome) {
  return badge((outcome || 'unknown').replaceAll('_', ' '), outcome || 'info');
}

/** moreButton is a "Load more" button for cursor paging; it hides when there is no next page. */
export function moreButton(load) {
  const b = h('button', { type: 'button' }, 'Load more');
  b.addEventListener('click', async () => {
    b.disabled = true;
    try { await load(); } finally { b.disabled = false; }
  });
  return b;
}
