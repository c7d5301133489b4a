// Create or edit a job. The form covers the common fields; "Advanced:
// edit as JSON" edits the whole api.Job for the rest. Every control is
// named with the API's JSON path ("triggers[0].schedule.expression"), so
// the API's errors show next to the field they name. Cron expressions are
// explained as they are typed (GET /cron/explain), with their next fire
// times and DST marks. Fields the form does not show are kept from the
// job as loaded.
import { h, replace, pageHead, panel, field, button, link, toast, clearErrors, showError, debounce,
  toLocalInput, fromLocalInput } from '../ui.js';
import { jobPath, ApiError } from '../api.js';
import { jobRoute } from './jobs.js';
import { schedOf, fireTimesList, browserZone, durationMs, goDuration } from './jobutil.js';

const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const UNITS = [['1000', 'seconds'], ['60000', 'minutes'], ['3600000', 'hours']];

function invalid(fieldName, message) {
  return new ApiError(400, { code: 'invalid_argument', message, field: fieldName });
}

function obj(v) {
  if (!v) return {};
  if (typeof v === 'string') { try { return JSON.parse(v); } catch { return {}; } }
  return { ...v };
}

// setError shows (or, with '', clears) a message under a field element.
function setError(fieldEl, message) {
  if (!fieldEl) return;
  const box = fieldEl.querySelector('.error');
  const c = fieldEl.querySelector('input, select, textarea');
  fieldEl.classList.toggle('invalid', !!message);
  box.textContent = message || '';
  box.hidden = !message;
  if (c) { if (message) c.setAttribute('aria-invalid', 'true'); else c.removeAttribute('aria-invalid'); }
}

// wide makes a field take more of its row.
function wide(fieldEl) {
  fieldEl.classList.add('wide');
  return fieldEl;
}

function lines(text) {
  return text.split('\n').map(l => l.trim()).filter(Boolean);
}

// PAGERDUTY_LINE is one PagerDuty target of the form: a routing key (or a
// {{secret "name"}} reference) and an optional severity.
const PAGERDUTY_LINE = /^(\{\{.*\}\}|\S+)(\s+(critical|error|warning|info))?$/;

// pagerDutyLines renders PagerDuty targets one per line.
function pagerDutyLines(targets) {
  return (targets || []).map(t => t.severity ? `${t.routing_key} ${t.severity}` : t.routing_key).join('\n');
}

// pagerDutyTargets reads the lines pagerDutyLines wrote.
function pagerDutyTargets(text) {
  return lines(text).map(l => {
    const m = l.match(PAGERDUTY_LINE);
    return m[3] ? { routing_key: m[1], severity: m[3] } : { routing_key: m[1] };
  });
}

function list(text) {
  return text.split(/[\s,;]+/).map(s => s.trim()).filter(Boolean);
}

// ROUTINGS are the strategies that pick a job's executor among its group's
// live ones (docs/executors.md).
const ROUTINGS = [
  ['round_robin', 'round robin'], ['first', 'first'], ['last', 'last'], ['random', 'random'],
  ['consistent_hash', 'consistent hash'], ['lru', 'least recently used'], ['lfu', 'least frequently used'],
  ['failover', 'failover (first healthy)'], ['busy_over', 'busy-over (first idle)'],
  ['sharding_broadcast', 'sharding broadcast (one shard per live executor)'],
];

// checks are the as-you-type checks of fields the browser can judge; the
// API judges the rest when saving.
const checks = [
  [/^(group|name)$/, v => !v.trim() ? 'is required' : v.includes('/') ? 'cannot contain "/"' : ''],
  [/^http\.url$/, v => {
    if (!v.trim()) return 'is required';
    try { const u = new URL(v.trim()); return /^https?:$/.test(u.protocol) ? '' : 'must be an http or https URL'; } catch { return 'is not an absolute URL such as https://reports-host/hook'; }
  }],
  // A fixed-delay schedule's delay is a number of units, not a duration.
  [/^(?!triggers\[\d+\]\.schedule\.)(.*\.)?(timeout|delay|max_delay|dead_man|running_longer_than)$/, v => !v.trim() || DURATION.test(v.trim()) ? '' : 'is not a duration such as "90s" or "1h30m"'],
  [/^http\.expect_status$/, v => list(v).every(s => /^[1-5]\d\d$/.test(s)) ? '' : 'want status codes such as 200, 204'],
  [/^http\.headers$/, v => lines(v).every(l => /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*:/.test(l)) ? '' : 'one "Name: value" per line'],
  [/^executor\.(group|handler)$/, v => !v.trim() ? 'is required' : ''],
  [/^executor\.labels$/, v => lines(v).every(l => /^[^=\s]+=/.test(l)) ? '' : 'one key=value per line'],
  [/^shell\.env$/, v => lines(v).every(l => /^[A-Za-z_][A-Za-z0-9_]*=/.test(l)) ? '' : 'one NAME=value per line'],
  [/^(data|triggers\[\d+\]\.schedule)$/, v => {
    if (!v.trim()) return '';
    try { const o = JSON.parse(v); return o && typeof o === 'object' && !Array.isArray(o) ? '' : 'must be a JSON object'; } catch (err) { return 'not JSON: ' + err.message; }
  }],
  [/^alerts\.after_failures$/, v => !v || (Number.isInteger(Number(v)) && Number(v) >= 1) ? '' : 'want a whole number, 1 or more'],
  [/^alerts\.(slack|teams)$/, v => list(v).every(u => { try { return /^https?:$/.test(new URL(u).protocol); } catch { return false; } }) ? '' : 'want http or https URLs, comma-separated'],
  [/^alerts\.pagerduty$/, v => lines(v).every(l => PAGERDUTY_LINE.test(l)) ? '' : 'one "ROUTING_KEY [critical|error|warning|info]" per line'],
  [/^retry\.max_attempts$/, v => !v || (Number.isInteger(Number(v)) && Number(v) >= 1) ? '' : 'want a whole number, 1 or more'],
  [/\.schedule\.interval$/, v => Number(v) > 0 ? '' : 'want a number greater than 0'],
  [/^triggers\[\d+\]\.start_time$/, (v, el) => el.required && !v ? 'is required' : ''],
];

export async function render(ctx) {
  const editing = !!ctx.params.name;
  const path = editing ? jobPath(ctx.params.group, ctx.params.name) : null;
  const key = editing ? `${ctx.params.group}/${ctx.params.name}` : '';
  let base;
  let etag = null;
  if (editing) {
    const res = await ctx.api.getWithETag(path, { signal: ctx.signal });
    base = res.data;
    etag = res.etag;
    ctx.setTitle(`Edit ${key}`);
  } else {
    base = {
      group: ctx.query.get('group') || '',
      name: '',
      type: 'http',
      http: { method: 'GET', url: '' },
      triggers: [{ schedule: { kind: 'cron', expression: '0 0 * * * ?', time_zone: browserZone() } }],
    };
  }
  delete base.status;
  delete base.version;

  let calendars = [];
  try {
    calendars = (await ctx.api.get('/calendars', null, { signal: ctx.signal })).map(c => c.name);
  } catch (err) {
    if (err.name === 'AbortError') throw err;
  }
  let zones = [];
  try { zones = Intl.supportedValuesOf('timeZone'); } catch { zones = ['UTC']; }
  const datalists = h('div', { hidden: true },
    h('datalist', { id: 'tz-list' }, ['UTC', ...zones].map(z => h('option', { value: z }))),
    h('datalist', { id: 'calendar-list' }, calendars.map(c => h('option', { value: c }))));

  const box = h('p', { class: 'form-error', role: 'alert', hidden: true, 'data-testid': 'form-error' });
  const conflict = h('div', { class: 'panel conflict', role: 'alert', hidden: true, 'data-testid': 'conflict' });
  const fieldsEl = h('div', { class: 'stack' });
  const jsonEl = h('div', { class: 'stack', hidden: true });
  const saveBtn = h('button', { type: 'submit', class: 'btn-primary' }, editing ? 'Save' : 'Create job');
  const form = h('form', { class: 'stack job-form', novalidate: true, 'aria-label': editing ? `Edit ${key}` : 'New job' },
    fieldsEl, jsonEl, box,
    h('div', { class: 'actions form-actions' }, saveBtn,
      link(editing ? jobRoute(ctx.params.group, ctx.params.name) : '/jobs', 'Cancel', { class: 'btn' })));

  let jsonMode = false;
  const toggle = button('Advanced: edit as JSON', () => switchMode(), { 'aria-pressed': 'false', 'data-testid': 'json-toggle' });
  replace(ctx.main, pageHead(editing ? `Edit ${key}` : 'New job', toggle), conflict, datalists, form);

  let editors = [];
  let typeFields = null;

  // build (re)draws the form from a job object.
  const build = job => {
    base = { ...job };
    delete base.status;
    delete base.version;
    const http = obj(job.http);
    const shell = obj(job.shell);
    const retry = job.retry || {};
    const alerts = job.alerts || {};
    const exec = job.executor || {};
    const known = ['http', 'shell', 'executor'].includes(job.type);

    const typeSel = field('type', 'Type', { type: 'select', value: known ? job.type : 'other',
      options: [['http', 'HTTP request'], ['shell', 'Shell command'], ['executor', 'Handler on an executor group'], ['other', 'Registered Go job type…']] });
    const custom = field('type_custom', 'Go job type name', { value: known ? '' : (job.type || ''), hint: 'A job type the server\'s binary registered.' });

    const httpBox = h('div', { class: 'stack' },
      h('div', { class: 'row' },
        field('http.method', 'Method', { type: 'select', value: http.method || 'GET', options: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] }),
        wide(field('http.url', 'URL', { type: 'url', value: http.url || '', placeholder: 'https://reports-host/hook', required: true }))),
      field('http.headers', 'Headers', { type: 'textarea', rows: 2, value: Object.entries(http.headers || {}).map(([k, v]) => `${k}: ${v}`).join('\n'), hint: 'One "Name: value" per line; values may use templates.' }),
      field('http.body', 'Body', { type: 'textarea', rows: 3, value: http.body || '' }),
      h('div', { class: 'row' },
        field('http.expect_status', 'Expected statuses', { value: (http.expect_status || []).join(', '), placeholder: 'any 2xx', hint: 'Comma-separated; empty for any 2xx.' }),
        field('http.timeout', 'Request timeout', { value: http.timeout || '', placeholder: '30s' })));
    const shellBox = h('div', { class: 'stack' },
      field('shell.shell', 'Script', { type: 'textarea', rows: 3, value: shell.shell || '', hint: 'Run as /bin/sh -c script. Give either a script or a command with arguments.' }),
      field('shell.argv', 'Or: command and arguments', { type: 'textarea', rows: 3, value: (shell.argv || []).join('\n'), hint: 'One per line, the program first; no shell in between.' }),
      h('div', { class: 'row' },
        field('shell.dir', 'Working directory', { value: shell.dir || '', placeholder: 'server default' }),
        field('shell.timeout', 'Command timeout', { value: shell.timeout || '', placeholder: 'none' })),
      field('shell.env', 'Environment', { type: 'textarea', rows: 2, value: Object.entries(shell.env || {}).map(([k, v]) => `${k}=${v}`).join('\n'), hint: 'One NAME=value per line.' }));
    const executorBox = h('div', { class: 'stack', 'data-testid': 'executor-fields' },
      h('div', { class: 'row' },
        field('executor.group', 'Executor group', { value: exec.group || '', autocomplete: 'off', hint: 'The group whose executors run it (see Executors).' }),
        field('executor.handler', 'Handler', { value: exec.handler || '', autocomplete: 'off', hint: 'A handler name the group\'s executors advertise.' })),
      h('div', { class: 'row' },
        field('executor.routing', 'Routing', { type: 'select', value: exec.routing || 'round_robin', options: ROUTINGS }),
        field('executor.hash_key', 'Hash key', { value: exec.hash_key || '', placeholder: 'the job key',
          hint: 'Consistent hash only: a parameter name to hash on.' })),
      field('executor.labels', 'Required labels', { type: 'textarea', rows: 2, value: Object.entries(exec.labels || {}).map(([k, v]) => `${k}=${v}`).join('\n'),
        hint: 'One key=value per line: only executors carrying them all run it.' }),
      field('executor.allow_unregistered', 'Save it before its executors register', { type: 'checkbox', value: !!exec.allow_unregistered,
        hint: 'Otherwise a group or handler no executor has advertised yet is refused; its runs record no_executor until one serves them.' }));
    const otherBox = h('p', { class: 'muted' }, 'A Go job type reads its settings from the job data below.');
    typeFields = { httpBox, shellBox, executorBox, otherBox, custom, typeSel };
    const showType = () => {
      const t = typeSel.querySelector('select').value;
      httpBox.hidden = t !== 'http';
      shellBox.hidden = t !== 'shell';
      executorBox.hidden = t !== 'executor';
      otherBox.hidden = t !== 'other';
      custom.hidden = t !== 'other';
    };
    typeSel.querySelector('select').addEventListener('change', showType);

    const triggersBox = h('div', { class: 'stack', 'data-testid': 'triggers' });
    const drawTriggers = trigs => {
      editors = trigs.map((t, i) => triggerEditor(ctx, t, i, () => {
        const all = editors.map(e => e.value());
        all.splice(i, 1);
        drawTriggers(all);
      }));
      replace(triggersBox, editors.length ? editors.map(e => e.el) : h('p', { class: 'muted' }, 'No triggers: the job runs only when asked.'));
    };
    drawTriggers(job.triggers || []);

    const groupField = field('group', 'Group', { value: job.group || '', required: true, readonly: editing || null, autocomplete: 'off',
      hint: editing ? 'A job\'s group and name are its key; to rename, create a new job.' : null });
    const nameField = field('name', 'Name', { value: job.name || '', required: true, readonly: editing || null, autocomplete: 'off' });

    replace(fieldsEl,
      panel('Job',
        h('div', { class: 'row' }, groupField, nameField),
        field('description', 'Description', { value: job.description || '' }),
        h('div', { class: 'row' }, typeSel, custom)),
      panel('What it runs', httpBox, shellBox, executorBox, otherBox),
      panel('Triggers', triggersBox,
        h('div', { class: 'actions' }, button('Add trigger', () => {
          const all = editors.map(e => e.value());
          all.push({ schedule: { kind: 'cron', expression: '0 0 * * * ?', time_zone: browserZone() } });
          drawTriggers(all);
          editors[editors.length - 1].el.querySelector('input, select').focus();
        }))),
      panel('Runs',
        h('div', { class: 'row' },
          field('timeout', 'Timeout', { value: job.timeout || '', placeholder: 'none', hint: 'Cancels an attempt that runs longer, e.g. 10m.' }),
          field('overlap', 'While a run is still going', { type: 'select', value: job.overlap || 'allow',
            options: [['allow', 'allow another run'], ['skip', 'skip the new firing'], ['queue', 'queue one firing'], ['cancel', 'cancel the running one']] })),
        h('div', { class: 'row' },
          field('retry.max_attempts', 'Attempts', { type: 'number', min: 1, value: retry.max_attempts || '', placeholder: '1', hint: 'Every attempt counts, the first included.' }),
          field('retry.backoff', 'Backoff', { type: 'select', value: retry.backoff || 'exponential', options: ['exponential', 'fixed'] }),
          field('retry.delay', 'First retry after', { value: retry.delay || '', placeholder: '10s' }),
          field('retry.max_delay', 'Longest wait', { value: retry.max_delay || '', placeholder: '1h' })),
        field('requests_recovery', 'Re-run on a live node if its node dies mid-run', { type: 'checkbox', value: !!job.requests_recovery }),
        h('div', { class: 'row' },
          field('pool', 'Concurrency pool', { value: job.pool || '', placeholder: 'none', hint: 'A pool of the Pools page: its limit counts this job\'s runs with its other jobs\', across the cluster.' }),
          field('pool_max_wait', 'Longest wait for a slot', { value: job.pool_max_wait || '', placeholder: '1m', hint: 'Then the trigger\'s misfire instruction decides.' }))),
      panel('Alerts',
        h('div', { class: 'row' },
          field('alerts.emails', 'E-mail recipients', { value: (alerts.emails || []).join(', '), placeholder: 'the global defaults', hint: 'Comma-separated; replace the global recipients for this job.' }),
          field('alerts.webhooks', 'Webhooks', { value: (alerts.webhooks || []).join(', '), placeholder: 'the global defaults' })),
        h('div', { class: 'row' },
          field('alerts.slack', 'Slack webhooks', { value: (alerts.slack || []).join(', '), placeholder: 'the global defaults', hint: 'Slack incoming webhook URLs, comma-separated.' }),
          field('alerts.teams', 'Microsoft Teams webhooks', { value: (alerts.teams || []).join(', '), placeholder: 'the global defaults', hint: 'Teams Workflows webhook URLs, comma-separated.' })),
        field('alerts.pagerduty', 'PagerDuty services', { type: 'textarea', rows: 2, value: pagerDutyLines(alerts.pagerduty), placeholder: 'the global defaults',
          hint: 'One per line: the Events API v2 routing key, or {{secret "name"}}, then optionally critical, error (the default), warning or info.' }),
        h('div', { class: 'row' },
          field('alerts.after_failures', 'Alert on failure after', { type: 'number', min: 1, value: alerts.after_failures || '', placeholder: '1',
            hint: 'Consecutive failed runs before the failure alert; one alert per streak.' }),
          field('alerts.running_longer_than', 'Alert when running longer than', { value: alerts.running_longer_than || '', placeholder: 'off', hint: 'A duration, e.g. 10m.' })),
        h('div', { class: 'row' },
          field('alerts.dead_man', 'Alert when no success for', { value: alerts.dead_man || '', placeholder: 'off', hint: 'A duration, e.g. 26h.' }),
          field('alerts.recovered', 'Alert when it recovers', { type: 'checkbox', value: !!alerts.recovered }),
          field('alerts.disabled', 'No alerts for this job', { type: 'checkbox', value: !!alerts.disabled }))),
      panel('Job data',
        field('data', 'Data (JSON object)', { type: 'textarea', rows: 4, value: job.data && Object.keys(job.data).length ? JSON.stringify(job.data, null, 2) : '',
          placeholder: '{"report": "daily"}', hint: 'Handed to the job at each run; run-now parameters are merged over it.' })));
    showType();
  };

  // collect reads the form into an api.Job, over the job as loaded; a bad
  // value throws an ApiError naming its field.
  const collect = () => {
    const f = name => form.querySelector(`[name="${CSS.escape(name)}"]`);
    const val = name => { const e = f(name); return e ? e.value.trim() : ''; };
    for (const c of form.querySelectorAll('input, select, textarea')) {
      const msg = checkOf(c);
      if (msg && !c.closest('[hidden]')) throw invalid(c.name, msg);
    }
    const job = { ...base };
    job.group = val('group');
    job.name = val('name');
    if (val('description')) job.description = val('description'); else delete job.description;
    const t = val('type');
    job.type = t === 'other' ? val('type_custom') : t;
    if (t === 'other' && !job.type) throw invalid('type_custom', 'is required: the name of a registered job type');
    delete job.http;
    delete job.shell;
    delete job.executor;
    if (t === 'http') {
      const http = { ...obj(base.http), method: val('http.method'), url: val('http.url') };
      const headers = {};
      for (const l of lines(f('http.headers').value)) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim()] = l.slice(i + 1).trim();
      }
      http.headers = headers;
      http.body = f('http.body').value;
      http.expect_status = list(val('http.expect_status')).map(Number);
      http.timeout = val('http.timeout');
      for (const k of ['headers', 'body', 'expect_status', 'timeout']) {
        if (!http[k] || (typeof http[k] === 'object' && Object.keys(http[k]).length === 0)) delete http[k];
      }
      job.http = http;
    } else if (t === 'shell') {
      const shell = { ...obj(base.shell) };
      delete shell.shell;
      delete shell.argv;
      if (f('shell.shell').value.trim()) shell.shell = f('shell.shell').value;
      const argv = lines(f('shell.argv').value);
      if (argv.length) shell.argv = argv;
      if (!shell.shell && !shell.argv) throw invalid('shell.shell', 'give a script or a command');
      if (shell.shell && shell.argv) throw invalid('shell.argv', 'give either a script or a command, not both');
      const env = {};
      for (const l of lines(f('shell.env').value)) { const i = l.indexOf('='); env[l.slice(0, i)] = l.slice(i + 1); }
      if (Object.keys(env).length) shell.env = env; else delete shell.env;
      if (val('shell.dir')) shell.dir = val('shell.dir'); else delete shell.dir;
      if (val('shell.timeout')) shell.timeout = val('shell.timeout'); else delete shell.timeout;
      job.shell = shell;
    } else if (t === 'executor') {
      const ex = { ...obj(base.executor), group: val('executor.group'), handler: val('executor.handler'), routing: val('executor.routing') };
      if (!ex.group) throw invalid('executor.group', 'is required: the executor group that runs the job');
      if (!ex.handler) throw invalid('executor.handler', 'is required: a handler the group\'s executors advertise');
      const labels = {};
      for (const l of lines(f('executor.labels').value)) { const i = l.indexOf('='); labels[l.slice(0, i).trim()] = l.slice(i + 1).trim(); }
      if (Object.keys(labels).length) ex.labels = labels; else delete ex.labels;
      if (val('executor.hash_key')) ex.hash_key = val('executor.hash_key'); else delete ex.hash_key;
      if (f('executor.allow_unregistered').checked) ex.allow_unregistered = true; else delete ex.allow_unregistered;
      job.executor = ex;
    }
    if (val('timeout')) job.timeout = val('timeout'); else delete job.timeout;
    job.overlap = val('overlap');
    // Null, not left out: a PUT keeps the fields it leaves out.
    job.pool = val('pool') || null;
    job.pool_max_wait = (val('pool') && val('pool_max_wait')) || null;
    if (f('requests_recovery').checked) job.requests_recovery = true; else delete job.requests_recovery;
    const attempts = Number(val('retry.max_attempts') || 0);
    if (attempts > 1) {
      job.retry = { ...(base.retry || {}), max_attempts: attempts, backoff: val('retry.backoff') };
      for (const k of ['delay', 'max_delay']) { if (val('retry.' + k)) job.retry[k] = val('retry.' + k); else delete job.retry[k]; }
    } else {
      delete job.retry;
    }
    const alerts = { ...(base.alerts || {}) };
    alerts.emails = list(val('alerts.emails'));
    alerts.webhooks = list(val('alerts.webhooks'));
    alerts.slack = list(val('alerts.slack'));
    alerts.teams = list(val('alerts.teams'));
    alerts.pagerduty = pagerDutyTargets(f('alerts.pagerduty').value);
    alerts.after_failures = Number(val('alerts.after_failures') || 0);
    alerts.running_longer_than = val('alerts.running_longer_than');
    alerts.dead_man = val('alerts.dead_man');
    alerts.recovered = f('alerts.recovered').checked;
    alerts.disabled = f('alerts.disabled').checked;
    for (const k of Object.keys(alerts)) { if (!alerts[k] || (Array.isArray(alerts[k]) && !alerts[k].length)) delete alerts[k]; }
    if (Object.keys(alerts).length) job.alerts = alerts; else delete job.alerts;
    const data = val('data');
    if (data) job.data = JSON.parse(data); else delete job.data;
    job.triggers = editors.map(e => e.value(true));
    if (!job.triggers.length) delete job.triggers;
    return job;
  };

  const jsonArea = h('textarea', { name: 'job_json', rows: 24, spellcheck: 'false', class: 'json-edit', 'aria-label': 'The job as JSON' });
  const jsonField = h('div', { class: 'field', dataset: { field: 'job_json' } },
    h('label', null, 'The whole job as JSON (api.Job)'), jsonArea,
    h('div', { class: 'hint' }, 'Everything the API accepts, including what the form does not show (misfire instructions, trigger data, time windows…). Read-only fields are left out.'),
    h('div', { class: 'error', role: 'alert', hidden: true }));
  jsonEl.append(jsonField);
  jsonArea.addEventListener('input', debounce(() => {
    try { JSON.parse(jsonArea.value); setError(jsonField, ''); } catch (err) { setError(jsonField, 'not JSON: ' + err.message); }
  }, 300));

  const parseJson = () => {
    let job;
    try { job = JSON.parse(jsonArea.value); } catch (err) { throw invalid('job_json', 'not JSON: ' + err.message); }
    if (!job || typeof job !== 'object' || Array.isArray(job)) throw invalid('job_json', 'must be a JSON object');
    return job;
  };

  const switchMode = () => {
    clearErrors(form);
    box.hidden = true;
    try {
      if (!jsonMode) {
        const job = collectLoose();
        jsonArea.value = JSON.stringify(job, null, 2);
        replace(fieldsEl);
      } else {
        build(parseJson());
      }
    } catch (err) {
      showError(form, err, box);
      return;
    }
    jsonMode = !jsonMode;
    fieldsEl.hidden = jsonMode;
    jsonEl.hidden = !jsonMode;
    toggle.textContent = jsonMode ? 'Back to the form' : 'Advanced: edit as JSON';
    toggle.setAttribute('aria-pressed', String(jsonMode));
    (jsonMode ? jsonArea : form.querySelector('input, select')).focus();
  };

  // collectLoose is collect, but a form that does not check out yet still
  // goes to the JSON editor as far as it reads.
  const collectLoose = () => {
    try { return collect(); } catch (err) {
      if (err instanceof ApiError && err.field) {
        // Keep going: the JSON editor is where to fix anything.
        const saved = checkOf;
        checkOf = () => '';
        try { return collect(); } catch { return { ...base }; } finally { checkOf = saved; }
      }
      throw err;
    }
  };

  let checkOf = el => {
    if (!el.name) return '';
    for (const [re, fn] of checks) if (re.test(el.name)) return fn(el.value, el);
    return '';
  };

  // As-you-type checks: a field's own error clears as soon as it is right.
  const typed = debounce(el => {
    const f = el.closest('.field');
    if (!f || !el.name || el.name.endsWith('.expression') || el.name.endsWith('.time_zone')) return;
    setError(f, checkOf(el));
  }, 250);
  form.addEventListener('input', ev => { box.hidden = true; typed(ev.target); });

  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    clearErrors(form);
    box.hidden = true;
    let job;
    try {
      job = jsonMode ? parseJson() : collect();
    } catch (err) {
      showError(form, err, box);
      focusError();
      return;
    }
    saveBtn.disabled = true;
    try {
      const saved = editing
        ? await ctx.api.put(path, job, { ifMatch: etag })
        : await ctx.api.post('/jobs', job);
      toast(editing ? `Saved ${saved.group}/${saved.name}` : `Created ${saved.group}/${saved.name}`);
      // A schedule typed as JSON in a deprecated spelling is saved, with
      // the server's advice on what to write instead.
      for (const w of saved.warnings || []) toast(w, 'error');
      ctx.navigate(jobRoute(saved.group, saved.name));
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        replace(conflict,
          h('p', { class: 'form-error' }, 'Someone changed this job since you opened it, so it was not saved.'),
          h('p', null, 'Your changes are still in the form below. Reload to see their version (your changes will be lost), or copy what you need first.'),
          h('div', { class: 'actions' }, button('Reload the job', () => ctx.app.route())));
        conflict.hidden = false;
        conflict.scrollIntoView({ block: 'nearest' });
        return;
      }
      showError(form, err, box);
      focusError();
    } finally {
      saveBtn.disabled = false;
    }
  });

  const focusError = () => {
    const bad = form.querySelector('.field.invalid input, .field.invalid select, .field.invalid textarea');
    if (bad) bad.focus();
  };

  build(base);
}

// triggerEditor is one trigger's fieldset; value() reads it back into an
// api.Trigger, over the trigger as loaded.
function triggerEditor(ctx, trigger, i, onRemove) {
  const p = `triggers[${i}]`;
  let cur = { ...trigger };
  const s = schedOf(trigger);
  let kind = s.kind === 'cron' || s.kind === 'once' || s.kind === 'fixed_delay' ? s.kind : s.kind === 'simple' ? 'interval' : s.kind ? 'json' : 'cron';
  const kindSel = field(`${p}.kind`, 'Kind', { type: 'select', value: kind,
    options: [['cron', 'Cron expression'], ['interval', 'Every … (interval)'], ['fixed_delay', 'A delay after each run ends'], ['once', 'Once, at a time'],
      ['json', 'Other (schedule as JSON)']] });
  const part = h('div', { class: 'stack' });
  const nameF = field(`${p}.name`, 'Trigger name', { value: trigger.name || '', placeholder: 'default: job name and index', autocomplete: 'off' });
  const calF = field(`${p}.calendar`, 'Calendar', { value: trigger.calendar || '', list: 'calendar-list', placeholder: 'none', autocomplete: 'off',
    hint: 'Exclusion calendar: no firing on its days.' });
  const el = h('fieldset', { class: 'trigger', 'data-testid': `trigger-${i}` },
    h('legend', null, `Trigger ${i + 1}`),
    h('div', { class: 'row' }, kindSel, nameF, calF),
    part,
    h('div', { class: 'actions' }, button(`Remove trigger ${i + 1}`, onRemove)));

  let seq = 0;
  const drawPart = () => {
    const sc = schedOf(cur);
    if (kind === 'cron') {
      const exprF = field(`${p}.schedule.expression`, 'Cron expression', { value: sc.kind === 'cron' ? sc.expression || '' : '0 0 * * * ?',
        class: 'mono', autocomplete: 'off', spellcheck: 'false', hint: 'Quartz syntax: seconds minutes hours day-of-month month day-of-week [year], e.g. 0 30 2 ? * MON-FRI' });
      const tzF = field(`${p}.schedule.time_zone`, 'Time zone', { value: sc.kind === 'cron' ? sc.time_zone || 'UTC' : browserZone(), list: 'tz-list', autocomplete: 'off' });
      const explain = h('div', { class: 'cron-explain', 'aria-live': 'polite', 'data-testid': `cron-explain-${i}` });
      const exprIn = exprF.querySelector('input');
      const tzIn = tzF.querySelector('input');
      const run = async () => {
        const mine = ++seq;
        const expression = exprIn.value.trim();
        if (!expression) { setError(exprF, 'is required'); replace(explain); return; }
        try {
          const ex = await ctx.api.get('/cron/explain', { expression, time_zone: tzIn.value.trim(), count: 5 }, { signal: ctx.signal });
          if (mine !== seq) return;
          setError(exprF, '');
          setError(tzF, '');
          replace(explain, h('p', null, h('strong', { 'data-testid': 'cron-description' }, ex.description), h('span', { class: 'muted' }, ` in ${ex.time_zone}. Next, in your time zone (${browserZone()}):`)),
            fireTimesList(ex.next));
        } catch (err) {
          if (err.name === 'AbortError' || mine !== seq) return;
          if (err.field === 'time_zone') { setError(tzF, err.message); setError(exprF, ''); } else { setError(exprF, err.message); setError(tzF, ''); }
          replace(explain);
        }
      };
      const later = debounce(run, 300);
      exprIn.addEventListener('input', later);
      tzIn.addEventListener('input', later);
      tzIn.addEventListener('change', later);
      replace(part, h('div', { class: 'row' }, wide(exprF), tzF), explain);
      run();
    } else if (kind === 'interval') {
      const ms = sc.kind === 'simple' && durationMs(sc.interval) > 0 ? durationMs(sc.interval) : 300000;
      const unit = ['3600000', '60000', '1000'].find(u => ms % Number(u) === 0) || '1000';
      const count = sc.kind === 'simple' && sc.repeat_count != null ? sc.repeat_count + 1 : '';
      replace(part, h('div', { class: 'row' },
        field(`${p}.schedule.interval`, 'Every', { type: 'number', min: 1, step: 'any', value: ms / Number(unit) }),
        field(`${p}.interval_unit`, 'Unit', { type: 'select', value: unit, options: UNITS }),
        field(`${p}.start_time`, 'Starting at', { type: 'datetime-local', step: 1, value: cur.start_time ? toLocalInput(cur.start_time) : '', hint: 'Empty: now.' }),
        field(`${p}.schedule.repeat_count`, 'Stop after', { type: 'number', min: 1, value: count, placeholder: 'never', hint: 'Firings in all; empty for no end.' })));
    } else if (kind === 'fixed_delay') {
      const ms = sc.kind === 'fixed_delay' && durationMs(sc.delay) > 0 ? durationMs(sc.delay) : 30000;
      const unit = ['3600000', '60000', '1000'].find(u => ms % Number(u) === 0) || '1000';
      replace(part, h('div', { class: 'row' },
        field(`${p}.schedule.delay`, 'Run again after', { type: 'number', min: 1, step: 'any', value: ms / Number(unit),
          hint: 'Counted from the end of each run, not its start: runs never overlap.' }),
        field(`${p}.delay_unit`, 'Unit', { type: 'select', value: unit, options: UNITS }),
        field(`${p}.start_time`, 'First run at', { type: 'datetime-local', step: 1, value: cur.start_time ? toLocalInput(cur.start_time) : '', hint: 'Empty: now.' })));
    } else if (kind === 'once') {
      const at = cur.start_time ? toLocalInput(cur.start_time) : toLocalInput(new Date(Date.now() + 3600000));
      replace(part, field(`${p}.start_time`, 'At', { type: 'datetime-local', step: 1, value: at, required: true, hint: 'In your browser\'s time zone.' }));
    } else {
      replace(part, field(`${p}.schedule`, 'Schedule (JSON)', { type: 'textarea', rows: 4, value: JSON.stringify(sc.kind ? sc : { kind: 'calendar_interval', unit: 'day', interval: 1, time_zone: browserZone() }, null, 2),
        hint: 'Any schedule the API accepts: cron, once, simple, calendar_interval, daily_time_interval, fixed_delay.' }));
    }
  };
  kindSel.querySelector('select').addEventListener('change', ev => {
    cur = value(false);
    kind = ev.target.value;
    drawPart();
  });

  // value reads the trigger; strict throws on values that cannot be read.
  const value = (strict = true) => {
    const q = name => el.querySelector(`[name="${CSS.escape(name)}"]`);
    const t = { ...cur };
    for (const k of ['state', 'next_fire_time', 'previous_fire_time']) delete t[k];
    const nm = q(`${p}.name`).value.trim();
    if (nm) t.name = nm; else delete t.name;
    const cal = q(`${p}.calendar`).value.trim();
    if (cal) t.calendar = cal; else delete t.calendar;
    if (kind === 'cron') {
      const expr = q(`${p}.schedule.expression`);
      if (expr) t.schedule = { kind: 'cron', expression: expr.value.trim(), time_zone: q(`${p}.schedule.time_zone`).value.trim() || 'UTC' };
    } else if (kind === 'interval') {
      const every = q(`${p}.schedule.interval`);
      if (every) {
        const ms = Math.round(Number(every.value) * Number(q(`${p}.interval_unit`).value));
        if (strict && !(ms > 0)) throw invalid(`${p}.schedule.interval`, 'want a number greater than 0');
        const n = q(`${p}.schedule.repeat_count`).value;
        t.schedule = { kind: 'simple', interval: goDuration(ms) };
        if (n) t.schedule.repeat_count = Math.max(Number(n) - 1, 0);
        const st = fromLocalInput(q(`${p}.start_time`).value);
        if (st) t.start_time = st; else delete t.start_time;
      }
    } else if (kind === 'fixed_delay') {
      const delay = q(`${p}.schedule.delay`);
      if (delay) {
        const ms = Math.round(Number(delay.value) * Number(q(`${p}.delay_unit`).value));
        if (strict && !(ms > 0)) throw invalid(`${p}.schedule.delay`, 'want a number greater than 0');
        t.schedule = { kind: 'fixed_delay', delay: goDuration(ms) };
        const st = fromLocalInput(q(`${p}.start_time`).value);
        if (st) t.start_time = st; else delete t.start_time;
      }
    } else if (kind === 'once') {
      const at = q(`${p}.start_time`);
      if (at) {
        if (strict && !at.value) throw invalid(`${p}.start_time`, 'is required');
        t.schedule = { kind: 'once' };
        if (at.value) t.start_time = fromLocalInput(at.value);
      }
    } else {
      const raw = q(`${p}.schedule`);
      if (raw) {
        try { t.schedule = JSON.parse(raw.value); } catch (err) {
          if (strict) throw invalid(`${p}.schedule`, 'not JSON: ' + err.message);
        }
      }
    }
    return t;
  };
  drawPart();
  return { el, value };
}
