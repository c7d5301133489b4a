// The items of a sharded firing, on its parent execution's page: each
// item's state, node, attempts and duration, and, for operators, a
// re-run of the failed items only (POST …/rerun-failed), which opens the
// parent's new attempt.
import { h, panel, table, badge, outcomeBadge, link, button, toast, confirmDialog, showError, clipText } from '../ui.js';
import { executionRoute } from './executions.js';

// maxRows bounds the rows drawn: a firing may have 10,000 items. The
// summary counts them all; failed and running items come first.
const maxRows = 500;

// loadItems returns the items of the sharded firing whose parent
// execution is at path, or null when it is not a sharded firing's parent.
export async function loadItems(ctx, path) {
  try {
    return await ctx.api.get(path + '/items', null, { signal: ctx.signal });
  } catch (err) {
    if (err.status === 404 || err.code === 'not_found') return null;
    throw err;
  }
}

// itemsPanel draws the items of si, the firing of execution e.
export function itemsPanel(ctx, e, si) {
  const path = '/executions/' + encodeURIComponent(e.id);
  const counts = {};
  for (const it of si.items) counts[it.state] = (counts[it.state] || 0) + 1;
  const summary = ['succeeded', 'running', 'failed', 'pending']
    .filter(s => counts[s]).map(s => `${counts[s]} ${s}`).join(', ');
  const rank = { failed: 0, running: 1, pending: 2, succeeded: 3 };
  const rows = [...si.items].sort((a, b) => (rank[a.state] - rank[b.state]) || (a.index - b.index)).slice(0, maxRows);
  const rerun = async btn => {
    const ok = await confirmDialog(`Re-run the ${si.failed} failed items?`,
      'Only the failed items run again, as a new attempt of this firing; the items that succeeded do not.',
      { confirmLabel: 'Re-run failed items' });
    if (!ok) return;
    btn.disabled = true;
    let next;
    try {
      next = await ctx.api.post(path + '/rerun-failed');
    } catch (err) {
      btn.disabled = false;
      showError(null, err);
      return;
    }
    toast(`Failed items re-run as attempt ${next.attempt}.`);
    ctx.navigate(executionRoute(next.id));
  };
  const canRerun = ctx.can('operator') && si.state === 'failed' && si.failed > 0;
  return panel('Items',
    h('p', { 'data-testid': 'items-summary' },
      `${si.total} items: ${summary}`, si.round ? ` (failed items re-run ${si.round} times)` : '', '. ',
      canRerun ? button('Re-run failed items', ev => rerun(ev.currentTarget), { kind: 'primary', 'data-testid': 'rerun-failed' }) : null),
    h('div', { class: 'nowrap-cells' },
      table([
        { label: 'Item', num: true, value: it => String(it.index) },
        { label: 'State', value: it => it.state === 'pending' ? badge('pending', 'info') : outcomeBadge(it.state) },
        { label: 'Node', value: it => h('span', { class: 'mono' }, it.node_id || '—') },
        { label: 'Attempts', num: true, value: it => String(it.attempts) },
        { label: 'Duration', num: true, value: it => it.duration || '—' },
        { label: 'Execution', value: it => it.execution_id ? link(executionRoute(it.execution_id), it.execution_id.slice(0, 8), { class: 'mono' }) : '—' },
        { label: 'Error', value: it => it.error ? clipText(it.error, { class: 'err-text' }) : '' },
      ], rows, { caption: 'Items of this firing', rowAttrs: it => ({ 'data-testid': 'item', 'data-state': it.state, 'data-index': it.index }) })),
    si.items.length > maxRows ? h('p', { class: 'muted' }, `The first ${maxRows} items are shown; the CLI's chime executions items lists them all.`) : null);
}
