// The pools page: every concurrency pool with its limit, the executions
// holding a slot now, the firings waiting for one and the jobs that name
// it. Operators create pools, change their limits and delete pools no job
// names. It refreshes every 5 s.
import { h, replace, pageHead, panel, table, button, field, toast, confirmDialog, formDialog, errorBox, stat, fmtTime } from '../ui.js';

export async function render(ctx) {
  const operator = ctx.can('operator');
  const body = h('div');

  // setPool opens the form that creates a pool (none given) or changes one.
  const setPool = p => formDialog(p ? `Change pool ${p.name}` : 'New pool', form => {
    if (!p) {
      form.append(field('name', 'Name', {
        required: true, autocomplete: 'off', spellcheck: 'false',
        hint: 'Letters, digits, ".", "_" and "-". Jobs name it in their "pool" field.',
      }));
    }
    form.append(field('limit', 'Limit', {
      type: 'number', min: 1, max: 100000, required: true, value: p ? p.limit : 4,
      hint: 'How many executions of the pool\'s jobs may run at once, across the cluster.',
    }));
    form.append(field('description', 'Description', { value: p ? (p.description || '') : '' }));
  }, async form => {
    const name = p ? p.name : form.elements.name.value.trim();
    const limit = Number(form.elements.limit.value);
    const saved = await ctx.api.put('/pools/' + encodeURIComponent(name), { limit, description: form.elements.description.value.trim() });
    toast(p ? `Pool ${name} changed.` : `Pool ${name} created.`);
    return saved;
  }, { submitLabel: p ? 'Save' : 'Create pool' }).then(saved => { if (saved) load(); });

  const deletePool = async p => {
    const ok = await confirmDialog(`Delete pool ${p.name}?`, 'Only a pool no job names can be deleted.', { confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    try {
      await ctx.api.del('/pools/' + encodeURIComponent(p.name));
    } catch (err) {
      toast(err.message, 'error');
      return;
    }
    toast(`Pool ${p.name} deleted.`);
    load();
  };

  const load = async () => {
    let pools;
    try {
      pools = await ctx.api.get('/pools', null, { signal: ctx.signal });
    } catch (err) {
      if (err.name !== 'AbortError') replace(body, errorBox(err));
      return;
    }
    replace(body,
      h('div', { class: 'stats' },
        stat('pools', String(pools.length), { 'data-testid': 'pools-count' }),
        stat('running in pools', String(pools.reduce((a, p) => a + (p.running || 0), 0)), { 'data-testid': 'pools-running' }),
        stat('waiting', String(pools.reduce((a, p) => a + (p.waiting || 0), 0)), { 'data-testid': 'pools-waiting' })),
      panel(null, table([
        { label: 'Name', value: p => h('strong', { class: 'mono' }, p.name) },
        { label: 'Limit', num: true, value: p => String(p.limit) },
        { label: 'Running', num: true, value: p => h('span', { 'data-testid': 'pool-running' }, String(p.running || 0)) },
        { label: 'Waiting', num: true, value: p => h('span', { 'data-testid': 'pool-waiting' }, String(p.waiting || 0)) },
        { label: 'Jobs', value: p => (p.jobs || []).length ? h('span', { class: 'mono' }, p.jobs.join(', ')) : h('span', { class: 'muted' }, 'none') },
        { label: 'Description', value: p => p.description || h('span', { class: 'muted' }, '—') },
        operator ? { label: h('span', { class: 'visually-hidden' }, 'Actions'), value: p => h('div', { class: 'actions' },
          button('Change', () => setPool(p), { 'aria-label': `Change pool ${p.name}` }),
          button('Delete', () => deletePool(p), { 'aria-label': `Delete pool ${p.name}` })) } : null,
      ].filter(Boolean), pools, {
        empty: operator ? 'No pool yet: create one, then name it in a job\'s "pool" field.' : 'No pool yet.',
        caption: 'Pools',
        rowAttrs: p => ({ dataset: { pool: p.name } }),
      })),
      h('p', { class: 'muted' },
        'A firing of a job whose pool is full waits for a slot, in the order of scheduled times, for at most the job\'s pool_max_wait; ',
        'then its trigger\'s misfire instruction decides, and a skipped firing is recorded with the reason. ',
        'Updated ', fmtTime(new Date(), { date: false }), '.'));
  };
  replace(ctx.main, pageHead('Pools', ...(operator ? [button('New pool', () => setPool(null), { kind: 'primary' })] : [])), body);
  await load();
  ctx.every(5000, load);
}
