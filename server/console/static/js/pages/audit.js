// The audit log (admin): who changed what and when, newest first,
// filtered by actor and target. The filters and the page's cursor live in
// the fragment's query, like the executions page's.
import { h, replace, pageHead, panel, table, timeEl, relTime, link, field, errorBox } from '../ui.js';

/** targetLink links an audit target ("jobs/g/n", "calendars/x", "executions/id") to its page when it has one. */
function targetLink(target) {
  const [kind, ...rest] = target.split('/');
  const route = {
    jobs: rest.length === 2 ? '/jobs/' + rest.map(encodeURIComponent).join('/') : null,
    calendars: rest.length === 1 ? '/calendars/' + encodeURIComponent(rest[0]) : null,
    executions: rest.length === 1 ? '/executions/' + encodeURIComponent(rest[0]) : null,
  }[kind];
  return route ? link(route, target, { class: 'mono' }) : h('span', { class: 'mono' }, target || '—');
}

/** details renders an entry's detail map as "key value" pairs. */
function details(detail) {
  const entries = Object.entries(detail || {});
  if (!entries.length) return h('span', { class: 'muted' }, '—');
  return h('dl', { class: 'facts compact' }, entries.map(([k, v]) => [
    h('dt', null, k.replace(/_/g, ' ')),
    h('dd', null, typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)),
  ]));
}

export async function render(ctx) {
  const actor = ctx.query.get('actor') || '';
  const target = ctx.query.get('target') || '';
  const cursor = ctx.query.get('cursor') || '';

  const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter the audit log' },
    field('actor', 'Actor', { value: actor, placeholder: 'user name', autocomplete: 'off' }),
    field('target', 'Target', { value: target, placeholder: 'jobs/etl/nightly', autocomplete: 'off' }),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'btn-primary' }, 'Filter'),
      h('button', { type: 'button', onclick: () => ctx.navigate('/audit') }, 'Clear')));
  const route = (a, t, c) => {
    const qs = new URLSearchParams();
    if (a) qs.set('actor', a);
    if (t) qs.set('target', t);
    if (c) qs.set('cursor', c);
    const s = qs.toString();
    return '/audit' + (s ? '?' + s : '');
  };
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    ctx.navigate(route(form.elements.actor.value.trim(), form.elements.target.value.trim(), ''));
  });

  const body = h('div', null, h('p', { class: 'loading' }, 'Loading…'));
  replace(ctx.main, pageHead('Audit log'), panel(null, form), body);

  let list;
  try {
    list = await ctx.api.get('/audit', { actor, target, cursor, limit: 50 }, { signal: ctx.signal });
  } catch (err) {
    if (err.name === 'AbortError') return;
    replace(body, errorBox(err));
    return;
  }
  if (!ctx.current()) return;
  replace(body, panel(null,
    table([
      { label: 'Time', value: e => h('span', { class: 'nowrap' }, timeEl(e.time), h('br'), h('span', { class: 'muted small' }, relTime(e.time))) },
      { label: 'Actor', value: e => link(route(e.actor, '', ''), e.actor, { title: `Only ${e.actor}'s actions` }) },
      { label: 'Action', value: e => h('code', null, e.action) },
      { label: 'Target', value: e => targetLink(e.target) },
      { label: 'Details', value: e => details(e.detail) },
    ], list.entries, {
      empty: actor || target ? 'No entry matches.' : 'Nothing was changed yet.',
      caption: 'Audit log',
      rowAttrs: e => ({ dataset: { action: e.action } }),
    }),
    h('div', { class: 'actions pager' },
      cursor ? link(route(actor, target, ''), '← Newest', { class: 'btn' }) : null,
      list.next ? link(route(actor, target, list.next), 'Older →', { class: 'btn' }) : null)));
}
