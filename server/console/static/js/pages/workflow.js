// One workflow: its DAG, its tasks, its triggers, run now (with
// parameters), edit and delete, and its newest instances.
import { h, replace, pageHead, panel, table, badge, button, link, toast, confirmDialog, formDialog, field, timeEl, nameText } from '../ui.js';
import { workflowRoute, instanceRoute, dagSvg } from './workflowutil.js';
import { instancesTable } from './workflows.js';
import { jobRoute } from './jobs.js';

export async function render(ctx) {
  const name = ctx.params.name;
  const wf = await ctx.api.get('/workflows/' + encodeURIComponent(name), null, { signal: ctx.signal });
  ctx.setTitle(`Workflow ${name}`);
  const group = 'workflow.' + name;
  const runNow = () => formDialog(`Run ${name} now`, form => {
    form.append(field('params', 'Parameters (JSON object, optional)', { type: 'textarea', rows: 4, placeholder: '{"day": "2025-03-01"}',
      hint: 'Every task sees them, merged over its data.' }));
  }, async form => {
    const raw = form.elements.params.value.trim();
    let params;
    if (raw) {
      try { params = JSON.parse(raw); } catch (err) { throw Object.assign(new Error('not JSON: ' + err.message), { field: 'params' }); }
    }
    const inst = await ctx.api.post(`/workflows/${encodeURIComponent(name)}/run`, params ? { params } : {});
    ctx.navigate(instanceRoute(inst.id));
    return inst;
  }, { submitLabel: 'Run' });
  const remove = async () => {
    if (!await confirmDialog(`Delete workflow ${name}?`, 'Its tasks\' jobs go with it; its instances stay in the record.', { confirmLabel: 'Delete', danger: true })) return;
    await ctx.api.del('/workflows/' + encodeURIComponent(name));
    toast(`Workflow ${name} deleted`);
    ctx.navigate('/workflows');
  };
  const actions = ctx.can('operator') ? [
    button('Run now', runNow, { kind: 'primary', 'data-testid': 'run-workflow' }),
    link(workflowRoute(name) + '/edit', 'Edit', { class: 'btn' }),
    button('Delete', remove, { kind: 'danger' }),
  ] : [];
  const tasks = wf.tasks.map(t => t.name);
  const instances = h('div', { 'data-testid': 'instances' });
  replace(ctx.main,
    pageHead(`Workflow ${name}`, ...actions),
    wf.description ? h('p', null, wf.description) : null,
    panel('Graph', dagSvg(tasks, wf.edges, { href: t => jobRoute(group, t), title: t => `${t}: the job ${group}/${t}` }),
      h('p', { class: 'muted' }, 'Solid edges run on success, dashed on failure, dotted always.')),
    panel('Tasks', table([
      { label: 'Task', value: t => link(jobRoute(group, t.name), nameText(t.name)) },
      { label: 'Type', value: t => h('span', { class: 'mono' }, t.type) },
      { label: 'After', value: t => {
        const ups = (wf.edges || []).filter(e => e.to === t.name);
        return ups.length ? ups.map(e => `${e.from} (${e.on || 'success'})`).join(', ') : h('span', { class: 'muted' }, 'start');
      } },
      { label: 'Timeout', value: t => t.timeout || '—' },
      { label: 'Attempts', num: true, value: t => String((t.retry && t.retry.max_attempts) || 1) },
    ], wf.tasks, { caption: 'Tasks' })),
    panel('Triggers', (wf.triggers || []).length
      ? table([
        { label: 'Trigger', value: t => nameText(t.name || '—') },
        { label: 'Schedule', value: t => h('span', { class: 'mono' }, JSON.stringify(t.schedule)) },
        { label: 'State', value: t => badge(t.state || 'normal', t.state === 'paused' ? 'paused' : 'info') },
        { label: 'Next', value: t => t.next_fire_time ? timeEl(t.next_fire_time) : '—' },
      ], wf.triggers, { caption: 'Triggers' })
      : h('p', { class: 'empty' }, 'No trigger: the workflow runs when asked.')),
    panel('Instances', instances));
  const load = async () => {
    const list = await ctx.api.get('/workflow-instances', { workflow: name, limit: 20 }, { signal: ctx.signal });
    replace(instances, instancesTable(list.instances, { workflow: false }));
  };
  await load();
  ctx.every(3000, () => load().catch(() => {}));
}
