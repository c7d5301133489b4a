// The execution page: one attempt at running a job, with its timings,
// error, captured output, log lines and parameters, and every attempt of
// the same firing. Operators may retry a finished execution: the page
// waits for the new attempt to start and opens it. They may kill a
// running one, after confirming, on whichever node runs it. A running
// execution refreshes itself every 2 s, and shows its log lines live as
// the job logs them (an EventSource on GET …/logs/stream, which any node
// serves); once it ended, the page shows the lines its history kept.
import { h, replace, pageHead, panel, table, facts, outcomeBadge, badge, timeEl, fmtDuration, link, button, toast, confirmDialog, errorBox, showError, nameText, clipText, copyButton } from '../ui.js';
import { jobRoute } from './explain.js';
import { executionRoute, lagOf, durationOf } from './executions.js';
import { loadItems, itemsPanel } from './shard-items.js';

// retryWait bounds how long the page waits for a retry to start.
const retryWait = 60000;

export async function render(ctx) {
  const id = ctx.params.id;
  const path = '/executions/' + encodeURIComponent(id);
  let pendingRetry = null; // {id, attempt, since} while a retry has not started yet
  const retryNote = h('p', { class: 'retry-note', role: 'status', 'data-testid': 'retry-status', hidden: true });
  // The live log outlives the page's redraws; its end redraws the page.
  const live = liveLog(path, () => { if (ctx.current()) load(); });
  ctx.signal.addEventListener('abort', () => live.close());

  const load = async () => {
    let e, attempts, items;
    try {
      [e, attempts, items] = await Promise.all([
        ctx.api.get(path, null, { signal: ctx.signal }),
        ctx.api.get(path + '/attempts', null, { signal: ctx.signal }),
        loadItems(ctx, path),
      ]);
    } catch (err) {
      if (err.name === 'AbortError') return null;
      replace(ctx.main, pageHead('Execution'), errorBox(err));
      return null;
    }
    if (!ctx.current()) return null;
    draw(e, attempts, items);
    return attempts;
  };

  const retry = async btn => {
    btn.disabled = true;
    let acc;
    try {
      acc = await ctx.api.post(path + '/retry');
    } catch (err) {
      btn.disabled = false;
      showError(null, err);
      return;
    }
    const newID = acc.execution_ids && acc.execution_ids[0];
    pendingRetry = { id: newID, since: Date.now() };
    retryNote.hidden = false;
    replace(retryNote, 'Retry requested: waiting for the new attempt to start…');
    toast('Retry requested.');
    await pollRetry();
  };

  const kill = async (btn, e) => {
    const ok = await confirmDialog(`Kill this execution of ${e.job_group}/${e.job_name}?`,
      `Node ${e.node_id || '—'} cancels the running job within a second. The execution ends killed, in your name; it is not retried.`,
      { confirmLabel: 'Kill', danger: true });
    if (!ok) return;
    btn.disabled = true;
    try {
      await ctx.api.post(path + '/kill');
    } catch (err) {
      btn.disabled = false;
      showError(null, err);
      return;
    }
    toast('Kill requested.');
    await load();
  };

  // pollRetry looks for the retry among the attempts; once it has started,
  // the page opens it.
  const pollRetry = async () => {
    if (!pendingRetry) return;
    const attempts = await load();
    if (!attempts || !pendingRetry) return;
    const found = attempts.find(a => a.id === pendingRetry.id);
    if (found) {
      const route = executionRoute(found.id);
      pendingRetry = null;
      toast(`Attempt ${found.attempt} started.`);
      ctx.navigate(route);
    } else if (Date.now() - pendingRetry.since > retryWait) {
      replace(retryNote, 'The retry has not started yet (the job may be queued behind a running one). ',
        pendingRetry.id ? link(executionRoute(pendingRetry.id), 'Open the new attempt') : null, ' once it appears.');
      pendingRetry = null;
    }
  };

  function draw(e, attempts, items) {
    if (e.outcome === 'running') live.open(); else live.close();
    const key = `${e.job_group}/${e.job_name}`;
    ctx.setTitle(`${key} attempt ${e.attempt}`);
    const lag = lagOf(e);
    const total = attempts.length ? Math.max(...attempts.map(a => a.attempt)) : e.attempt;
    const explainRoute = '/explain?' + new URLSearchParams({ job: key, at: e.scheduled_time }).toString();
    // A sharded firing's parent runs nothing itself: its failed items
    // re-run from the Items panel.
    const canRetry = ctx.can('operator') && e.outcome !== 'running' && !items;
    const canKill = ctx.can('operator') && e.outcome === 'running' && !items;
    const actions = [
      link(explainRoute, 'Why did it fire?', { class: 'btn' }),
      canRetry ? button('Retry', ev => retry(ev.currentTarget), { kind: 'primary', 'data-testid': 'retry', disabled: !!pendingRetry }) : null,
      canKill ? button(e.killed_by ? 'Killing…' : 'Kill', ev => kill(ev.currentTarget, e), { kind: 'danger', 'data-testid': 'kill', disabled: !!e.killed_by }) : null,
    ];
    const trigger = e.manual
      ? h('span', null, 'manual run', e.trigger_name ? h('span', { class: 'muted' }, ` (of ${e.trigger_group}.${e.trigger_name})`) : null)
      : e.trigger_name ? `${e.trigger_group}.${e.trigger_name}` : '—';

    replace(ctx.main,
      pageHead(h('span', null, 'Execution of ', link(jobRoute(e.job_group, e.job_name), nameText(key)), ' ', outcomeBadge(e.outcome)), ...actions),
      retryNote,
      h('div', { class: 'stats' },
        statBox('lag', lag === null ? '—' : fmtDuration(lag), lag === null ? 'no lag for retries and manual runs' : 'started − scheduled'),
        statBox('duration', fmtDuration(durationOf(e)), e.outcome === 'running' ? 'so far' : 'started → finished'),
        statBox('attempt', `${e.attempt} of ${total}`, 'of this firing')),
      h('div', { class: 'grid' },
        panel('Timings', facts([
          ['Scheduled', timeEl(e.scheduled_time)],
          ['Started', timeEl(e.started_time)],
          ['Finished', e.finished_time ? timeEl(e.finished_time) : e.outcome === 'running' ? 'still running' : '—'],
          ['Lag', lag === null ? '—' : fmtDuration(lag)],
          ['Duration', fmtDuration(durationOf(e))],
        ])),
        panel('Run', facts([
          ['Job', link(jobRoute(e.job_group, e.job_name), nameText(key))],
          ['Trigger', trigger],
          ['Node', e.node_id ? nameText(e.node_id, { class: 'mono' }) : '—'],
          e.executor_id ? ['Executor', h('span', { 'data-testid': 'executor' },
            link('/executors', nameText(e.executor_instance || e.executor_id), { title: `Executor ${e.executor_id}` }),
            ' ', h('span', { class: 'muted mono' }, e.executor_id))] : null,
          ['Attempt', `${e.attempt} of ${total}`],
          ['Outcome', h('span', { 'data-testid': 'outcome' }, outcomeBadge(e.outcome))],
          e.cause ? ['Cause', h('span', { 'data-testid': 'cause' }, 'the end of ', link(executionRoute(e.cause), h('span', { class: 'mono' }, e.cause.slice(0, 12))),
            ', its parent job\'s execution')] : null,
          e.killed_by ? ['Killed by', h('span', { 'data-testid': 'killed-by' }, nameText(e.killed_by))] : null,
          e.recovering ? ['Recovery', e.executor_id ? 'a re-run after its node or executor was lost' : 'a re-run after its node was lost'] : null,
          ['ID', h('span', { class: 'id-cell' }, clipText(e.id, { class: 'mono', 'data-testid': 'execution-id' }), copyButton(e.id, 'execution ID'))],
        ]))),
      e.error ? panel('Error', h('pre', { class: 'exec-error', 'data-testid': 'error' }, e.error)) : null,
      items ? itemsPanel(ctx, e, items) : null,
      panel('Output',
        e.output ? h('pre', { 'data-testid': 'output' }, e.output) : h('p', { class: 'empty' }, 'No output was captured.'),
        e.output_truncated ? h('p', { class: 'muted' }, 'The output was truncated: only its beginning was kept.') : null),
      e.outcome === 'running' ? live.el
        : e.logs && e.logs.length ? panel('Log', h('div', { 'data-testid': 'log' }, table(logColumns, e.logs, { caption: 'Log lines' }))) : null,
      e.params && Object.keys(e.params).length ? panel('Parameters', h('pre', null, JSON.stringify(e.params, null, 2))) : null,
      panel('Attempts of this firing', h('div', { class: 'nowrap-cells' },
        table([
          { label: 'Attempt', num: true, value: a => a.id === e.id ? h('strong', null, `#${a.attempt} (this one)`) : link(executionRoute(a.id), `#${a.attempt}`) },
          { label: 'Outcome', value: a => outcomeBadge(a.outcome) },
          { label: 'Started', value: a => h('span', { class: 'nowrap' }, timeEl(a.started_time)) },
          { label: 'Duration', num: true, value: a => fmtDuration(durationOf(a)) },
          { label: 'Node', value: a => h('span', { class: 'mono' }, a.node_id || '—') },
          { label: 'Kind', value: a => a.manual ? 'manual' : a.recovering ? 'recovery' : a.attempt > 1 ? 'retry' : 'scheduled' },
          { label: 'Error', value: a => a.error ? clipText(a.error, { class: 'err-text' }) : '' },
        ], attempts, { caption: 'Attempts', rowAttrs: a => ({ 'aria-current': a.id === e.id ? 'true' : null, 'data-testid': 'attempt' }) }))));
  }

  await load();
  // Refresh while an attempt of this firing runs, or a retry is awaited.
  ctx.every(2000, async () => {
    if (pendingRetry) await pollRetry();
    else if (ctx.main.querySelector('.badge.running')) await load();
  });
}

// logColumns are the columns of a table of log lines.
const logColumns = [
  { label: 'Time', value: l => h('span', { class: 'nowrap' }, timeEl(l.time)) },
  { label: 'Level', value: l => badge(l.level, levelKind(l.level)) },
  { label: 'Message', value: l => l.message },
  { label: 'Attributes', value: l => l.attrs ? h('code', null, JSON.stringify(l.attrs)) : '' },
];

// liveLog is the Log panel of a running execution: open() starts an
// EventSource on the execution's log stream, whose lines are appended as
// they come (a reconnecting EventSource goes on after the last one, with
// Last-Event-ID); the stream's end closes it and calls onEnd.
function liveLog(path, onEnd) {
  const rows = h('tbody');
  const status = h('p', { class: 'muted', role: 'status', 'data-testid': 'live-status' }, 'No line logged yet.');
  const el = panel('Log', status,
    h('div', { class: 'table-wrap' },
      h('table', { 'data-testid': 'live-log' },
        h('caption', { class: 'visually-hidden' }, 'Log lines, live'),
        h('thead', null, h('tr', null, logColumns.map(c => h('th', { scope: 'col' }, c.label)))),
        rows)));
  let es = null;
  const close = () => {
    if (es) es.close();
    es = null;
  };
  const open = () => {
    if (es) return;
    es = new EventSource('/api/v1' + path + '/logs/stream');
    es.addEventListener('line', ev => {
      const l = JSON.parse(ev.data);
      rows.append(h('tr', { 'data-testid': 'log-line', 'data-seq': l.seq }, logColumns.map(c => h('td', null, c.value(l)))));
      if (!rows.dataset.live) { // once: the status is announced when it changes
        rows.dataset.live = 'yes';
        replace(status, 'Live: lines appear as the job logs them.');
      }
    });
    es.addEventListener('end', ev => {
      close();
      replace(status, `The execution ended ${JSON.parse(ev.data).outcome}.`);
      onEnd();
    });
    es.addEventListener('failure', ev => {
      close();
      replace(status, 'The live log stopped: ' + (JSON.parse(ev.data).message || 'error') + '. Reload the page to try again.');
    });
    es.addEventListener('error', () => {
      // EventSource reconnects by itself unless the server refused it.
      if (es && es.readyState === EventSource.CLOSED) {
        close();
        replace(status, 'The live log is not available. Reload the page to try again.');
      }
    });
  };
  return { el, open, close };
}

function statBox(label, value, hint) {
  return h('div', { class: 'stat' }, h('div', { class: 'value' }, value), h('div', { class: 'label' }, label, hint ? h('span', { class: 'muted' }, ` · ${hint}`) : null));
}

function levelKind(level) {
  const l = (level || '').toLowerCase();
  if (l.startsWith('err')) return 'failed';
  if (l.startsWith('warn')) return 'warn';
  return 'info';
}

