// The job picker: a search box that lists the jobs matching what is typed
// (GET /jobs?q=, which searches group/name and description), to choose
// from with the mouse or the keyboard (↑ ↓ Enter, Escape closes). It is
// an ARIA combobox; the chosen job's "group/name" is the input's value,
// so a form reads it like any text field, and a key typed in full works
// too.
import { h, replace, debounce, nameText } from './ui.js';

// SHOWN bounds the jobs listed at once: the search narrows the rest.
const SHOWN = 20;

/**
 * jobPicker returns a .field holding the picker: an input named name,
 * labelled label, starting at value. onPick(key) is called when a job is
 * chosen from the list.
 */
export function jobPicker(ctx, name, label, { value = '', placeholder = 'search, or group/name', required = false, onPick } = {}) {
  const id = `picker-${name}-${Math.random().toString(36).slice(2, 7)}`;
  const list = h('ul', { class: 'picker-list', id: id + '-list', role: 'listbox', 'aria-label': `Jobs matching the search`, hidden: true });
  const input = h('input', {
    id, name, type: 'text', value, placeholder, required, autocomplete: 'off', spellcheck: 'false',
    role: 'combobox', 'aria-expanded': 'false', 'aria-controls': list.id, 'aria-autocomplete': 'list',
  });
  let options = []; // the listed jobs' keys
  let active = -1;
  let seq = 0;

  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };
  const highlight = i => {
    const items = list.querySelectorAll('li[role="option"]');
    if (items.length === 0) return;
    active = (i + items.length) % items.length;
    items.forEach((li, j) => li.setAttribute('aria-selected', String(j === active)));
    input.setAttribute('aria-activedescendant', items[active].id);
    items[active].scrollIntoView({ block: 'nearest' });
  };
  const pick = key => {
    input.value = key;
    close();
    input.dispatchEvent(new Event('change', { bubbles: true }));
    if (onPick) onPick(key);
  };

  const search = async () => {
    const mine = ++seq;
    let page;
    try {
      page = await ctx.api.get('/jobs', { q: input.value.trim(), limit: SHOWN }, { signal: ctx.signal });
    } catch (err) {
      if (err.name === 'AbortError' || mine !== seq) return;
      replace(list, h('li', { class: 'empty' }, `The jobs cannot be listed: ${err.message}`));
      list.hidden = false;
      return;
    }
    if (mine !== seq || document.activeElement !== input) return;
    const jobs = page.jobs || [];
    // The highlighted job stays highlighted if it is listed again.
    const was = active >= 0 ? options[active] : '';
    options = jobs.map(j => `${j.group}/${j.name}`);
    replace(list, jobs.length === 0
      ? h('li', { class: 'empty' }, 'No job matches.')
      : jobs.map((j, i) => h('li', {
        id: `${id}-opt-${i}`, role: 'option', 'aria-selected': 'false', dataset: { key: options[i] },
        // mousedown, not click: the input keeps the focus.
        onmousedown: ev => { ev.preventDefault(); pick(options[i]); },
      }, nameText(options[i]), j.description ? h('span', { class: 'muted' }, j.description) : null)),
    page.next ? h('li', { class: 'empty muted' }, `The first ${SHOWN} shown: type to narrow.`) : null);
    list.hidden = false;
    input.setAttribute('aria-expanded', 'true');
    active = -1;
    if (options.includes(was)) highlight(options.indexOf(was));
  };
  const typed = debounce(search, 150);

  input.addEventListener('focus', search);
  input.addEventListener('input', typed);
  input.addEventListener('blur', close);
  // The Enter that chooses a job must not also submit the form: a
  // keypress can follow a cancelled keydown (synthetic key events do), so
  // it is cancelled too, until the key is released.
  let picked = false;
  input.addEventListener('keypress', ev => { if (ev.key === 'Enter' && picked) ev.preventDefault(); });
  input.addEventListener('keyup', ev => { if (ev.key === 'Enter') picked = false; });
  input.addEventListener('keydown', ev => {
    const open = !list.hidden && options.length > 0;
    switch (ev.key) {
      case 'ArrowDown':
        ev.preventDefault();
        if (open) highlight(active + 1); else search();
        break;
      case 'ArrowUp':
        if (open) { ev.preventDefault(); highlight(active - 1); }
        break;
      case 'Enter':
        if (open && active >= 0) { ev.preventDefault(); picked = true; pick(options[active]); }
        break;
      case 'Escape':
        if (!list.hidden) { ev.preventDefault(); close(); }
        break;
    }
  });

  return h('div', { class: 'field picker', dataset: { field: name } },
    h('label', { for: id }, label),
    input, list,
    h('div', { class: 'error', role: 'alert', hidden: true }));
}
