// The workflows list: each workflow with its tasks, edges and triggers,
// and the newest instances of all workflows, refreshed every 5 s.
import { h, replace, pageHead, panel, table, badge, timeEl, link, errorBox, nameText } from '../ui.js';
import { workflowRoute, instanceRoute } from './workflowutil.js';

/** instancesTable renders api.WorkflowInstance rows (without tasks). */
export function instancesTable(list, { empty = 'No instance yet.', workflow = true } = {}) {
  return table([
    { label: 'Instance', value: i => link(instanceRoute(i.id), h('span', { class: 'mono' }, i.id.slice(0, 12))) },
    workflow ? { label: 'Workflow', value: i => link(workflowRoute(i.workflow), nameText(i.workflow)) } : null,
    { label: 'State', value: i => badge(i.state) },
    { label: 'Started', value: i => h('span', { class: 'nowrap' }, timeEl(i.created)) },
    { label: 'Ended', value: i => i.finished ? h('span', { class: 'nowrap' }, timeEl(i.finished)) : h('span', { class: 'muted' }, '—') },
  ].filter(Boolean), list, { empty, caption: 'Workflow instances', rowAttrs: i => ({ dataset: { instance: i.id, state: i.state }, 'data-testid': 'instance' }) });
}

export async function render(ctx) {
  const body = h('div');
  const load = async () => {
    let list, instances;
    try {
      const opts = { signal: ctx.signal };
      [list, instances] = await Promise.all([
        ctx.api.get('/workflows', null, opts),
        ctx.api.get('/workflow-instances', { limit: 20 }, opts),
      ]);
    } catch (err) {
      if (err.name !== 'AbortError') replace(body, errorBox(err));
      return;
    }
    replace(body,
      panel('Workflows', table([
        { label: 'Name', value: w => link(workflowRoute(w.name), nameText(w.name)) },
        { label: 'Description', value: w => w.description || h('span', { class: 'muted' }, '—') },
        { label: 'Tasks', num: true, value: w => String(w.tasks.length) },
        { label: 'Edges', num: true, value: w => String((w.edges || []).length) },
        { label: 'Triggers', value: w => (w.triggers || []).length ? `${w.triggers.length} trigger(s)` : h('span', { class: 'muted' }, 'on demand') },
        { label: 'Version', num: true, value: w => String(w.version) },
      ], list.workflows, {
        empty: 'No workflow yet. A workflow is a DAG of tasks: create one here, or with chime workflows apply -f FILE.',
        caption: 'Workflows', rowAttrs: w => ({ dataset: { workflow: w.name }, 'data-testid': 'workflow' }),
      })),
      panel('Latest instances', h('div', { 'data-testid': 'instances' }, instancesTable(instances.instances))));
  };
  const actions = ctx.can('operator') ? [link('/workflows/new', 'New workflow', { class: 'btn btn-primary' })] : [];
  replace(ctx.main, pageHead('Workflows', ...actions), body);
  await load();
  ctx.every(5000, load);
}
