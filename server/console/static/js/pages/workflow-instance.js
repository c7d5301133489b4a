// One workflow instance: its DAG with each task coloured by its state,
// refreshed every second while the instance runs, what failed and why,
// each task's execution, and pause, resume, kill and re-run.
import { h, replace, pageHead, panel, table, badge, button, link, toast, confirmDialog, facts, timeEl, fmtDuration, between, nameText, errorBox } from '../ui.js';
import { workflowRoute, dagSvg } from './workflowutil.js';

const STATES = ['pending', 'ready', 'running', 'succeeded', 'failed', 'skipped', 'cancelled'];

export async function render(ctx) {
  const id = ctx.params.id;
  const head = h('div');
  const body = h('div');
  replace(ctx.main, head, body);
  let inst;
  const act = (action, confirm) => async () => {
    if (confirm && !await confirmDialog(confirm[0], confirm[1], { confirmLabel: action, danger: action === 'kill' })) return;
    try {
      inst = await ctx.api.post(`/workflow-instances/${encodeURIComponent(id)}/${action}`);
      toast(`Instance ${action === 'rerun' ? 're-run' : action + (action.endsWith('e') ? 'd' : 'ed')}`);
      draw();
    } catch (err) { toast(err.message, 'error'); }
  };
  const draw = () => {
    ctx.setTitle(`Instance of ${inst.workflow}`);
    const byTask = new Map(inst.tasks.map(t => [t.task, t]));
    const actions = [];
    if (ctx.can('operator')) {
      if (inst.state === 'running') actions.push(button('Pause', act('pause'), { 'data-testid': 'pause' }));
      if (inst.state === 'paused') actions.push(button('Resume', act('resume'), { 'data-testid': 'resume' }));
      if (inst.state === 'running' || inst.state === 'paused') {
        actions.push(button('Kill', act('kill', ['Kill this instance?', 'Its tasks not started are cancelled; those running are killed.']), { kind: 'danger', 'data-testid': 'kill' }));
      }
      if (inst.state === 'failed' || inst.state === 'killed') actions.push(button('Re-run failed tasks', act('rerun'), { kind: 'primary', 'data-testid': 'rerun' }));
    }
    replace(head, pageHead(`Instance of ${inst.workflow}`, ...actions));
    const counts = STATES.map(s => [s, inst.tasks.filter(t => t.state === s).length]).filter(([, n]) => n);
    const failed = inst.tasks.filter(t => t.state === 'failed');
    replace(body,
      panel(null, facts([
        ['Workflow', link(workflowRoute(inst.workflow), nameText(inst.workflow))],
        ['State', h('span', { 'data-testid': 'instance-state' }, badge(inst.state))],
        ['Tasks', h('span', { class: 'badges' }, counts.map(([s, n]) => badge(`${n} ${s}`, s)))],
        ['Started', timeEl(inst.created)],
        ['Ended', inst.finished ? timeEl(inst.finished) : 'not yet'],
        ['Duration', fmtDuration(between(inst.created, inst.finished || new Date()))],
        inst.params && Object.keys(inst.params).length ? ['Parameters', h('code', null, JSON.stringify(inst.params))] : null,
        ['ID', h('span', { class: 'mono' }, inst.id)],
      ])),
      failed.length ? panel('What failed', h('ul', { class: 'plain-list', 'data-testid': 'failures' }, failed.map(t =>
        h('li', null, h('strong', null, t.task), ': ', t.error || 'failed', ' ', t.execution_id ? link('/executions/' + t.execution_id, 'execution') : null)))) : null,
      panel('Graph', dagSvg(inst.tasks.map(t => t.task), inst.edges, {
        state: t => byTask.get(t).state,
        href: t => byTask.get(t).execution_id ? '/executions/' + byTask.get(t).execution_id : null,
        title: t => `${t}: ${byTask.get(t).state}${byTask.get(t).error ? ' — ' + byTask.get(t).error : ''}`,
      }), h('div', { class: 'legend' }, STATES.map(s => h('span', null, h('span', { class: `swatch st-${s}` }), ' ', s)))),
      panel('Tasks', table([
        { label: 'Task', value: t => nameText(t.task) },
        { label: 'State', value: t => badge(t.state) },
        { label: 'Attempts', num: true, value: t => String(t.attempts || 0) },
        { label: 'Started', value: t => t.started ? h('span', { class: 'nowrap' }, timeEl(t.started)) : '—' },
        { label: 'Duration', num: true, value: t => t.started && t.finished ? fmtDuration(between(t.started, t.finished)) : '—' },
        { label: 'Execution', value: t => t.execution_id ? link('/executions/' + t.execution_id, h('span', { class: 'mono' }, t.execution_id.slice(0, 12))) : '—' },
        { label: 'Error', value: t => t.error || '' },
      ], inst.tasks, { caption: 'Tasks', rowAttrs: t => ({ dataset: { task: t.task, state: t.state }, 'data-testid': 'task' }) })));
  };
  const load = async () => {
    try {
      inst = await ctx.api.get('/workflow-instances/' + encodeURIComponent(id), null, { signal: ctx.signal });
    } catch (err) {
      if (err.name !== 'AbortError') replace(body, errorBox(err));
      return;
    }
    draw();
  };
  await load();
  ctx.every(1000, () => { if (inst && (inst.state === 'running' || inst.state === 'paused')) load(); });
}
