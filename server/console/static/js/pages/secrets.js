// The secrets page (admin): named secrets that jobs and alert webhooks use
// as {{secret "name"}}. Values are write-only: the page sets and replaces
// them, and never receives one back. A secret a job uses cannot be
// deleted; the API's reason is shown.
import { h, replace, pageHead, panel, table, timeEl, button, field, toast, confirmDialog, formDialog, errorBox } from '../ui.js';

const valueHint = 'Sent once over this connection and kept encrypted; nobody can read it back, here or in the API. One line; set multi-line values with chime secrets set.';

export async function render(ctx) {
  let secrets;
  try {
    secrets = await ctx.api.get('/secrets', null, { signal: ctx.signal });
  } catch (err) {
    if (err.name === 'AbortError') return;
    replace(ctx.main, pageHead('Secrets'), errorBox(err));
    return;
  }
  if (!ctx.current()) return;
  const reload = () => render(ctx);

  // setSecret opens the form that creates a secret (no name given) or
  // replaces the value of one.
  const setSecret = name => formDialog(name ? `Replace the value of ${name}` : 'New secret', form => {
    if (!name) {
      form.append(field('name', 'Name', {
        required: true, autocomplete: 'off', spellcheck: 'false',
        hint: 'Letters, digits, ".", "_" and "-". Jobs refer to it as {{secret "name"}}.',
      }));
    }
    form.append(field('value', name ? 'New value' : 'Value', { type: 'password', required: true, autocomplete: 'off', hint: valueHint }));
  }, async form => {
    const n = name || form.elements.name.value.trim();
    const value = form.elements.value.value;
    if (!value) throw { field: 'value', message: 'Type the value.' };
    const saved = await ctx.api.put('/secrets/' + encodeURIComponent(n), { value });
    form.elements.value.value = '';
    toast(name ? `Secret ${n} replaced.` : `Secret ${n} created.`);
    return saved;
  }, { submitLabel: name ? 'Replace value' : 'Create secret' }).then(saved => { if (saved) reload(); });

  const deleteSecret = async s => {
    const ok = await confirmDialog(`Delete secret ${s.name}?`, 'Its value is gone for good: nobody can read it back to set it again.', { confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    try {
      await ctx.api.del('/secrets/' + encodeURIComponent(s.name));
    } catch (err) {
      toast(err.message, 'error');
      return;
    }
    toast(`Secret ${s.name} deleted.`);
    reload();
  };

  replace(ctx.main,
    pageHead('Secrets'),
    panel('Secrets',
      h('p', { class: 'muted' },
        'Use a secret instead of a token or password written into a job: ',
        h('code', null, 'Authorization: Bearer {{secret "billing-token"}}'),
        ' in an http job\'s headers, URL or body, a shell job\'s arguments or environment, or an alert webhook URL. ',
        'The server reads it when the job fires and masks it in the recorded output. Viewers read job specs with sensitive values masked, but everything a job prints.'),
      h('div', { class: 'actions panel-actions' }, button('New secret', () => setSecret(''), { kind: 'primary' })),
      h('div', { class: 'nowrap-cells' }, table([
        { label: 'Name', value: s => h('strong', { class: 'mono' }, s.name) },
        { label: 'Used by', value: s => (s.used_by || []).length ? (s.used_by || []).join(', ') : h('span', { class: 'muted' }, 'nothing') },
        { label: 'Updated', value: s => h('span', { class: 'nowrap' }, timeEl(s.updated)) },
        { label: 'By', value: s => s.updated_by || '—' },
        { label: 'Key ID', value: s => h('span', { class: 'mono muted' }, s.key_id) },
        { label: h('span', { class: 'visually-hidden' }, 'Actions'), value: s => h('div', { class: 'actions' },
          button('Replace value', () => setSecret(s.name), { 'aria-label': `Replace the value of secret ${s.name}` }),
          button('Delete', () => deleteSecret(s), { 'aria-label': `Delete secret ${s.name}` })) },
      ], secrets, { empty: 'No secret yet.', caption: 'Secrets', rowAttrs: s => ({ dataset: { secret: s.name } }) }))));
}
