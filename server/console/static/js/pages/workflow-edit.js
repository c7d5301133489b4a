// The workflow editor: a form of tasks (name, type and settings) and
// edges (from, to, on), or the whole api.Workflow as JSON, and the YAML
// that `chime workflows apply -f` takes. Every control is named with the
// API's field path (tasks[1].type, edges[2].to), so that a refused save
// (a cycle, an unknown type, an edge to a missing task) shows next to the
// field at fault.
import { h, replace, pageHead, panel, button, field, clearErrors, showError, toast } from '../ui.js';
import { workflowRoute } from './workflowutil.js';

const TYPES = ['http', 'shell', 'executor'];
const CONDITIONS = [['success', 'on success'], ['failure', 'on failure'], ['always', 'always']];

/** settingsOf is a task without its name and type: what the JSON box edits. */
function settingsOf(t) {
  const { name, type, ...rest } = t;
  return rest;
}

/** toYAML writes a JSON value as block YAML, strings quoted. */
export function toYAML(v, indent = '') {
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    return v.map(x => {
      const inner = toYAML(x, indent + '  ');
      return `\n${indent}- ` + (x && typeof x === 'object' && !Array.isArray(x) ? inner.trimStart() : inner);
    }).join('');
  }
  if (v && typeof v === 'object') {
    const keys = Object.keys(v);
    if (!keys.length) return '{}';
    return keys.map(k => {
      const x = v[k];
      const inner = toYAML(x, indent + '  ');
      return `\n${indent}${k}:` + (x && typeof x === 'object' && Object.keys(x).length ? inner : ' ' + inner);
    }).join('');
  }
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

function invalid(fieldName, message) {
  return Object.assign(new Error(message), { field: fieldName });
}

export async function render(ctx) {
  const editing = ctx.params.name !== undefined;
  let wf = { name: '', description: '', tasks: [{ name: 'first', type: 'http', http: { url: '' } }], edges: [] };
  let etag = null;
  if (editing) {
    const res = await ctx.api.getWithETag('/workflows/' + encodeURIComponent(ctx.params.name), { signal: ctx.signal });
    const { version, updated, ...rest } = res.data;
    wf = rest;
    etag = res.etag;
    // Read-only state of the triggers is the server's.
    wf.triggers = (wf.triggers || []).map(({ state, next_fire_time, previous_fire_time, ...t }) => t);
  }
  ctx.setTitle(editing ? `Edit workflow ${wf.name}` : 'New workflow');
  let mode = 'form';
  const form = h('form', { class: 'stack', novalidate: true, 'aria-label': 'Workflow' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const modes = h('div', { class: 'actions', role: 'group', 'aria-label': 'Edit as' });

  // collect reads the form (or the JSON) into wf; strict refuses what
  // cannot be sent.
  const collect = strict => {
    if (mode === 'json') {
      let v;
      try { v = JSON.parse(form.elements.workflow_json.value); } catch (err) { throw invalid('workflow_json', 'not JSON: ' + err.message); }
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw invalid('workflow_json', 'must be a JSON object');
      wf = v;
      return;
    }
    if (mode !== 'form') return;
    const el = n => form.querySelector(`[name="${CSS.escape(n)}"]`);
    const next = { ...wf, name: el('name').value.trim(), description: el('description').value, tasks: [], edges: [] };
    wf.tasks.forEach((_, i) => {
      const raw = el(`tasks[${i}]`).value.trim();
      let rest = {};
      if (raw) {
        try { rest = JSON.parse(raw); } catch (err) {
          if (strict) throw invalid(`tasks[${i}]`, 'settings: not JSON: ' + err.message);
        }
      }
      next.tasks.push({ name: el(`tasks[${i}].name`).value.trim(), type: el(`tasks[${i}].type`).value.trim(), ...rest });
    });
    wf.edges.forEach((_, i) => {
      next.edges.push({ from: el(`edges[${i}].from`).value, to: el(`edges[${i}].to`).value, on: el(`edges[${i}].on`).value });
    });
    if (!next.description) delete next.description;
    wf = next;
  };

  const taskNames = () => wf.tasks.map(t => t.name).filter(Boolean);
  const taskRow = (t, i) => h('fieldset', { class: 'stack', dataset: { task: String(i) }, 'data-testid': 'task-row' },
    h('legend', null, `Task ${i + 1}`),
    h('div', { class: 'grid' },
      field(`tasks[${i}].name`, 'Name', { value: t.name, required: true, autocomplete: 'off' }),
      field(`tasks[${i}].type`, 'Type', { value: t.type, list: 'task-types', autocomplete: 'off', hint: 'http, shell, executor or a Go type this server registered' })),
    field(`tasks[${i}]`, 'Settings (JSON: http, shell, executor, data, timeout, retry)', { type: 'textarea', rows: 4,
      value: JSON.stringify(settingsOf(t), null, 2) }),
    button('Remove task', () => { collect(false); wf.tasks.splice(i, 1); wf.edges = wf.edges.filter(e => e.from !== t.name && e.to !== t.name); draw(); }));
  const edgeRow = (e, i) => {
    const names = taskNames();
    const select = (n, label, value, options) => field(n, label, { type: 'select', value, options });
    // The row's own error box comes first: an error naming the edge
    // (a cycle) shows there, above its controls.
    return h('div', { class: 'field edge-row', dataset: { field: `edges[${i}]` }, 'data-testid': 'edge-row' },
      h('div', { class: 'error', role: 'alert', hidden: true }),
      h('div', { class: 'filters' },
        select(`edges[${i}].from`, 'From', e.from, names.includes(e.from) ? names : [e.from, ...names]),
        select(`edges[${i}].to`, 'To', e.to, names.includes(e.to) ? names : [e.to, ...names]),
        select(`edges[${i}].on`, 'Runs', e.on || 'success', CONDITIONS),
        button('Remove', () => { collect(false); wf.edges.splice(i, 1); draw(); })));
  };

  const draw = () => {
    replace(modes,
      ...[['form', 'Form'], ['json', 'JSON'], ['yaml', 'YAML']].map(([m, label]) =>
        button(label, () => { try { collect(true); } catch (err) { clearErrors(form); showError(form, err, error); return; } mode = m; draw(); },
          { 'aria-pressed': String(mode === m), 'data-testid': `mode-${m}` })));
    clearErrors(form);
    error.hidden = true;
    if (mode === 'json') {
      replace(form, error, field('workflow_json', 'The whole workflow as JSON (api.Workflow)', { type: 'textarea', rows: 24, spellcheck: 'false',
        value: JSON.stringify(wf, null, 2) }), saveRow());
      return;
    }
    if (mode === 'yaml') {
      const yaml = 'workflows:' + toYAML([wf], '  ') + '\n';
      replace(form, error, h('p', { class: 'muted' }, 'Save it in a file and run chime workflows apply -f FILE, or keep it in version control.'),
        h('pre', { 'data-testid': 'yaml' }, yaml));
      return;
    }
    replace(form, error,
      h('datalist', { id: 'task-types' }, TYPES.map(t => h('option', { value: t }))),
      h('div', { class: 'grid' },
        field('name', 'Name', { value: wf.name, required: true, disabled: editing, autocomplete: 'off', hint: 'Its tasks are the jobs of group workflow.NAME.' }),
        field('description', 'Description', { value: wf.description || '' })),
      panel('Tasks', h('div', { class: 'stack' }, wf.tasks.map(taskRow)),
        button('Add task', () => { collect(false); wf.tasks.push({ name: `task${wf.tasks.length + 1}`, type: 'http', http: { url: '' } }); draw(); }, { 'data-testid': 'add-task' })),
      panel('Edges', h('p', { class: 'muted' }, 'A task runs once every task it comes after ended as its edge says.'),
        h('div', { class: 'stack' }, wf.edges.map(edgeRow)),
        button('Add edge', () => {
          collect(false);
          const names = taskNames();
          wf.edges.push({ from: names[0] || '', to: names[names.length - 1] || '', on: 'success' });
          draw();
        }, { 'data-testid': 'add-edge' })),
      saveRow());
  };
  const saveRow = () => h('div', { class: 'actions' },
    h('button', { type: 'submit', class: 'btn-primary', 'data-testid': 'save' }, editing ? 'Save' : 'Create'),
    h('a', { class: 'btn', href: '#' + (editing ? workflowRoute(wf.name) : '/workflows') }, 'Cancel'));

  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    clearErrors(form);
    error.hidden = true;
    try {
      collect(true);
      if (!wf.name) throw invalid('name', 'is required');
      const opts = etag ? { ifMatch: etag } : {};
      const saved = await ctx.api.put('/workflows/' + encodeURIComponent(wf.name), wf, opts);
      toast(`Workflow ${saved.name} saved (version ${saved.version})`);
      ctx.navigate(workflowRoute(saved.name));
    } catch (err) {
      showError(form, err, error);
    }
  });
  replace(ctx.main, pageHead(editing ? `Edit workflow ${wf.name}` : 'New workflow', modes), panel(null, form));
  draw();
}
