// The users page (admin): local users (create, change role, job-group
// scopes and shell capability, reset the password, delete) and API tokens
// for automation
// (create, revoke). A new
// token's secret is shown once, in a dialog with a copy button: the
// server keeps only its hash.
import { h, replace, pageHead, panel, table, badge, timeEl, button, field, toast, confirmDialog, formDialog, errorBox, fromLocalInput } from '../ui.js';

const ROLES = ['viewer', 'operator', 'admin'];

const roleHelp = 'viewer reads jobs (sensitive values masked) and everything jobs print; operator also changes jobs, calendars, runs and retries; admin also manages users, tokens, secrets and alerts.';

const shellHelp = 'Shell jobs run commands on the servers\' hosts as the server\'s user: creating, changing or deleting one, or running one with parameters, needs role operator or admin and this capability.';

const scopesHelp = 'Operators only: job-group patterns (such as billing.* payroll), separated by spaces or commas, limit what the user may change, run and kill to the groups they match; elsewhere the user reads as a viewer. Empty: every group. The user\'s API tokens act with the same limits.';

/** parseScopes reads the patterns of a scopes field. */
const parseScopes = text => text.split(/[\s,]+/).filter(Boolean);

/** scopesCell shows a user's scopes, or that it has none. */
const scopesCell = scopes => scopes && scopes.length
  ? h('span', { class: 'scopes' }, scopes.map((s, i) => [i ? ' ' : null, h('code', null, s)]))
  : h('span', { class: 'muted' }, 'all');

export async function render(ctx) {
  let users, tokens;
  try {
    [users, tokens] = await Promise.all([
      ctx.api.get('/users', null, { signal: ctx.signal }),
      ctx.api.get('/tokens', null, { signal: ctx.signal }),
    ]);
  } catch (err) {
    if (err.name === 'AbortError') return;
    replace(ctx.main, pageHead('Users and tokens'), errorBox(err));
    return;
  }
  if (!ctx.current()) return;
  const me = ctx.user.name;
  const reload = () => render(ctx);

  const newUser = () => formDialog('New user', form => {
    form.append(
      field('name', 'Name', { required: true, autocomplete: 'off' }),
      field('role', 'Role', { type: 'select', value: 'viewer', options: ROLES, hint: roleHelp }),
      field('scopes', 'Limit to job groups', { autocomplete: 'off', placeholder: 'every group', hint: scopesHelp }),
      field('shell', 'May write shell jobs', { type: 'checkbox', value: false, hint: shellHelp }),
      field('password', 'Password', { type: 'password', autocomplete: 'new-password', required: true, hint: 'They can log in with it at once; share it safely.' }));
  }, async form => {
    const u = { name: form.elements.name.value.trim(), role: form.elements.role.value, password: form.elements.password.value };
    if (form.elements.shell.checked) u.shell = true;
    const scopes = parseScopes(form.elements.scopes.value);
    if (scopes.length) u.scopes = scopes;
    await ctx.api.post('/users', u);
    toast(`User ${u.name} created.`);
    return u.name;
  }, { submitLabel: 'Create user' }).then(name => { if (name) reload(); });

  const editUser = u => formDialog(`Edit user ${u.name}`, form => {
    form.append(
      field('role', 'Role', { type: 'select', value: u.role, options: ROLES, hint: roleHelp }),
      field('scopes', 'Limit to job groups', { value: (u.scopes || []).join(' '), autocomplete: 'off', placeholder: 'every group',
        hint: u.source === 'sso' ? scopesHelp + ' Single sign-on sets them again at the user\'s next sign-on.' : scopesHelp }),
      field('shell', 'May write shell jobs', { type: 'checkbox', value: !!u.shell, hint: shellHelp }),
      field('password', 'New password', { type: 'password', autocomplete: 'new-password', hint: 'Leave empty to keep the current one. A new password ends the user\'s sessions; their tokens stay.' }));
  }, async form => {
    const body = {};
    if (form.elements.role.value !== u.role) body.role = form.elements.role.value;
    if (form.elements.shell.checked !== !!u.shell) body.shell = form.elements.shell.checked;
    if (form.elements.password.value) body.password = form.elements.password.value;
    const scopes = parseScopes(form.elements.scopes.value);
    if (scopes.join(' ') !== (u.scopes || []).join(' ')) body.scopes = scopes; // [] clears them
    if (!body.role && !body.password && body.shell === undefined && !body.scopes) throw { field: 'role', message: 'Nothing to change: pick another role, change the job groups or the shell capability, or type a new password.' };
    await ctx.api.put('/users/' + encodeURIComponent(u.name), body);
    toast(`User ${u.name} updated.`);
    return true;
  }).then(ok => { if (ok) reload(); });

  const deleteUser = async u => {
    const ok = await confirmDialog(`Delete user ${u.name}?`, 'Their sessions end and their API tokens are revoked. This cannot be undone.', { confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    try {
      await ctx.api.del('/users/' + encodeURIComponent(u.name));
    } catch (err) {
      toast(err.message, 'error');
      return;
    }
    toast(`User ${u.name} deleted.`);
    reload();
  };

  const newToken = () => formDialog('New API token', form => {
    form.append(
      field('name', 'Name', { required: true, autocomplete: 'off', hint: 'What uses it, such as "deploy-pipeline".' }),
      field('user', 'Acts for user', { type: 'select', value: me, options: users.map(u => [u.name, `${u.name} (${u.role})`]), hint: 'The token is deleted with its user and never exceeds the user\'s role.' }),
      field('role', 'Role', { type: 'select', value: '', options: [['', 'the user\'s role'], ...ROLES], hint: roleHelp }),
      field('shell', 'May write shell jobs', { type: 'checkbox', value: false, hint: 'Only if its user has the shell capability; it loses it when the user does.' }),
      field('expires', 'Expires', { type: 'datetime-local', hint: 'Empty: it never expires.' }));
  }, async form => {
    const t = { name: form.elements.name.value.trim(), user: form.elements.user.value };
    if (form.elements.role.value) t.role = form.elements.role.value;
    if (form.elements.shell.checked) t.shell = true;
    if (form.elements.expires.value) t.expires = fromLocalInput(form.elements.expires.value);
    return ctx.api.post('/tokens', t);
  }, { submitLabel: 'Create token' }).then(async created => {
    if (!created) return;
    await secretDialog(created);
    reload();
  });

  const revokeToken = async t => {
    const ok = await confirmDialog(`Revoke token ${t.name}?`, 'Whatever uses it is refused from now on. This cannot be undone.', { confirmLabel: 'Revoke', danger: true });
    if (!ok) return;
    try {
      await ctx.api.del('/tokens/' + encodeURIComponent(t.id));
    } catch (err) {
      toast(err.message, 'error');
      return;
    }
    toast(`Token ${t.name} revoked.`);
    reload();
  };

  const now = Date.now();
  replace(ctx.main,
    pageHead('Users and tokens'),
    panel('Users',
      h('div', { class: 'actions panel-actions' }, button('New user', newUser, { kind: 'primary' })),
      h('div', { class: 'nowrap-cells' }, table([
        { label: 'Name', value: u => h('span', null, h('strong', null, u.name), u.name === me ? h('span', { class: 'muted' }, ' (you)') : null) },
        { label: 'Role', value: u => badge(u.role, u.role === 'admin' ? 'warn' : 'info') },
        { label: 'Job groups', value: u => scopesCell(u.scopes) },
        { label: 'Shell jobs', value: u => u.shell ? badge('may write', 'warn') : h('span', { class: 'muted' }, 'no') },
        { label: 'Created', value: u => h('span', { class: 'nowrap' }, timeEl(u.created)) },
        { label: h('span', { class: 'visually-hidden' }, 'Actions'), value: u => h('div', { class: 'actions' },
          button('Edit', () => editUser(u), { 'aria-label': `Edit user ${u.name}` }),
          button('Delete', () => deleteUser(u), { 'aria-label': `Delete user ${u.name}` })) },
      ], users, { caption: 'Users', rowAttrs: u => ({ dataset: { user: u.name } }) }))),
    panel('API tokens',
      h('p', { class: 'muted' }, 'Automation (CI, scripts, the chime CLI) sends a token as "Authorization: Bearer …". Its secret is shown once, when it is created.'),
      h('div', { class: 'actions panel-actions' }, button('New token', newToken, { kind: 'primary' })),
      h('div', { class: 'nowrap-cells' }, table([
        { label: 'Name', value: t => h('strong', null, t.name) },
        { label: 'Role', value: t => badge(t.role, t.role === 'admin' ? 'warn' : 'info') },
        { label: 'Shell jobs', value: t => t.shell ? badge('may write', 'warn') : h('span', { class: 'muted' }, 'no') },
        { label: 'User', value: t => t.user || '—' },
        { label: 'Job groups', value: t => scopesCell((users.find(u => u.name === t.user) || {}).scopes) },
        { label: 'Created', value: t => h('span', { class: 'nowrap' }, timeEl(t.created)) },
        { label: 'Last used', value: t => t.last_used ? h('span', { class: 'nowrap' }, timeEl(t.last_used)) : h('span', { class: 'muted' }, 'never') },
        { label: 'Expires', value: t => !t.expires ? h('span', { class: 'muted' }, 'never')
          : new Date(t.expires).getTime() < now ? h('span', null, timeEl(t.expires), ' ', badge('expired', 'failed'))
            : h('span', { class: 'nowrap' }, timeEl(t.expires)) },
        { label: h('span', { class: 'visually-hidden' }, 'Actions'), value: t => button('Revoke', () => revokeToken(t), { 'aria-label': `Revoke token ${t.name}` }) },
      ], tokens, { empty: 'No API token yet.', caption: 'API tokens', rowAttrs: t => ({ dataset: { token: t.name } }) }))));
}

/** secretDialog shows a new token's secret once, with a copy button. */
function secretDialog(token) {
  return new Promise(resolve => {
    const input = h('input', { type: 'text', readonly: true, value: token.secret, class: 'mono secret', 'aria-label': 'Token secret', 'data-testid': 'token-secret' });
    const copied = h('span', { class: 'muted', 'aria-live': 'polite' });
    const copy = async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(token.secret);
        copied.textContent = 'Copied.';
      } catch {
        // Without the clipboard API (plain http), the selected text copies with Ctrl+C.
        copied.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
      }
    };
    const done = h('button', { type: 'submit', class: 'btn-primary', value: 'ok' }, 'I have saved it');
    const dlg = h('dialog', { 'aria-labelledby': 'secret-title' },
      h('form', { method: 'dialog', class: 'stack' },
        h('h2', { id: 'secret-title' }, `Token ${token.name} created`),
        h('p', { class: 'warn-note', role: 'note' }, h('strong', null, 'Copy the secret now: you will not see it again. '), 'The server keeps only its hash; if it is lost, revoke the token and create another.'),
        h('div', { class: 'row' }, input, button('Copy', copy)),
        copied,
        h('p', { class: 'muted' }, `Role ${token.role}, acting for ${token.user}.`),
        h('div', { class: 'actions' }, done)));
    dlg.addEventListener('close', () => { input.value = ''; dlg.remove(); resolve(); });
    document.body.append(dlg);
    dlg.showModal();
    input.focus();
    input.select();
  });
}
