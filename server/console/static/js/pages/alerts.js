// The alerts page (admin): the cluster's default alert recipients (e-mail
// addresses, webhooks, Slack, Teams and PagerDuty) and rate limit, as GET/PUT /alerts expose them,
// and a button that sends a test alert to those recipients.
import { h, replace, pageHead, panel, field, button, toast, showError, clearErrors, errorBox } from '../ui.js';

/** lines splits a textarea's value into its non-empty trimmed lines (commas also separate). */
function lines(v) {
  return v.split(/[\n,]+/).map(s => s.trim()).filter(Boolean);
}

/** pagerDuty reads "ROUTING_KEY [severity]" lines into PagerDuty targets. */
function pagerDuty(v) {
  return v.split('\n').map(s => s.trim()).filter(Boolean).map(l => {
    const m = l.match(/^(.*?)(?:\s+(critical|error|warning|info))?$/);
    return m[2] ? { routing_key: m[1], severity: m[2] } : { routing_key: m[1] };
  });
}

export async function render(ctx) {
  let s;
  try {
    s = await ctx.api.get('/alerts', null, { signal: ctx.signal });
  } catch (err) {
    if (err.name === 'AbortError') return;
    replace(ctx.main, pageHead('Alerts'), errorBox(err));
    return;
  }
  if (!ctx.current()) return;
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const saved = h('span', { class: 'muted', 'aria-live': 'polite' });
  const form = h('form', { class: 'stack narrow-form', novalidate: true, 'aria-label': 'Alert settings' },
    error,
    field('default_emails', 'E-mail recipients', {
      type: 'textarea', rows: 4, value: (s.default_emails || []).join('\n'),
      hint: 'One address per line. Jobs without their own recipients alert these.',
    }),
    field('default_webhooks', 'Webhooks', {
      type: 'textarea', rows: 3, value: (s.default_webhooks || []).join('\n'),
      hint: 'One http or https URL per line; each alert is POSTed to them as JSON.',
    }),
    field('default_slack', 'Slack webhooks', {
      type: 'textarea', rows: 2, value: (s.default_slack || []).join('\n'),
      hint: 'One Slack incoming webhook URL per line.',
    }),
    field('default_teams', 'Microsoft Teams webhooks', {
      type: 'textarea', rows: 2, value: (s.default_teams || []).join('\n'),
      hint: 'One Teams Workflows webhook URL per line.',
    }),
    field('default_pagerduty', 'PagerDuty services', {
      type: 'textarea', rows: 2,
      value: (s.default_pagerduty || []).map(t => t.severity ? `${t.routing_key} ${t.severity}` : t.routing_key).join('\n'),
      hint: 'One per line: an Events API v2 routing key, or {{secret "name"}}, then optionally critical, error (the default), warning or info.',
    }),
    field('rate_limit', 'Rate limit', {
      value: s.rate_limit || '', placeholder: '10m',
      hint: 'The least time between two alerts of one kind for one job, as a duration: 30s, 10m, 1h.',
    }),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'btn-primary' }, 'Save'), saved));
  form.addEventListener('input', () => { saved.textContent = 'Unsaved changes.'; });
  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    clearErrors(form);
    error.hidden = true;
    const body = {
      default_emails: lines(form.elements.default_emails.value),
      default_webhooks: lines(form.elements.default_webhooks.value),
      default_slack: lines(form.elements.default_slack.value),
      default_teams: lines(form.elements.default_teams.value),
      default_pagerduty: pagerDuty(form.elements.default_pagerduty.value),
      rate_limit: form.elements.rate_limit.value.trim(),
    };
    try {
      await ctx.api.put('/alerts', body);
    } catch (err) {
      showError(form, err, error);
      return;
    }
    saved.textContent = 'Saved.';
    toast('Alert settings saved.');
  });

  const testNote = h('p', { class: 'muted', 'aria-live': 'polite' });
  const testBtn = button('Send test alert', async () => {
    testBtn.disabled = true;
    try {
      await ctx.api.post('/alerts/test');
      testNote.textContent = 'A test alert was queued for the saved recipients. Delivery happens in the background: a failure shows in the server\'s log and metrics.';
      toast('Test alert sent.');
    } catch (err) {
      testNote.textContent = '';
      toast(err.message, 'error');
    } finally {
      testBtn.disabled = false;
    }
  });

  replace(ctx.main,
    pageHead('Alerts', testBtn),
    testNote,
    panel('Default recipients', form),
    panel('Mail server',
      h('p', { class: 'muted' }, 'The SMTP server, its credentials and the sender address are set where chime server starts (--smtp-host, --smtp-from, … or the smtp section of its configuration file; the password best in CHIME_SMTP_PASSWORD), not through the API, so they are not shown here. A job can override the recipients in its own alert settings.')));
}
