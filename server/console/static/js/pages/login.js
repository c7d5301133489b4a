// The login page: user name and password, answered with the session
// cookie. Wrong credentials and rate limits are shown in the form. When the
// server has a single sign-on provider, a "Sign in with <provider>" link
// above the form starts its sign-on (a full page navigation to the
// provider and back).
import { h, replace, field, showError, clearErrors } from '../ui.js';

export async function render(ctx) {
  if (ctx.user) { ctx.navigate('/'); return; }
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'btn-primary' }, 'Log in');
  const form = h('form', { class: 'stack', novalidate: true },
    field('username', 'User name', { autocomplete: 'username', required: true, autocapitalize: 'none' }),
    field('password', 'Password', { type: 'password', autocomplete: 'current-password', required: true }),
    error, submit);
  form.addEventListener('submit', async ev => {
    ev.preventDefault();
    clearErrors(form);
    error.hidden = true;
    const username = form.elements.username.value.trim();
    const password = form.elements.password.value;
    if (!username || !password) {
      showError(form, { message: 'Enter your user name and password.' }, error);
      return;
    }
    submit.disabled = true;
    try {
      await ctx.api.post('/auth/login', { username, password });
      await ctx.app.signedIn(ctx.query.get('next'));
    } catch (err) {
      showError(form, err, error);
      form.elements.password.select();
    } finally {
      submit.disabled = false;
    }
  });
  const sso = h('div', { class: 'sso-login', hidden: true });
  replace(ctx.main, h('div', { class: 'login panel' }, h('h1', null, 'Log in to chime'), sso, form));
  form.elements.username.focus();
  try {
    const methods = await ctx.api.get('/auth/methods');
    if (methods.sso) {
      replace(sso,
        h('a', { class: 'btn btn-primary', href: methods.sso.login_url, 'data-testid': 'sso-login' }, `Sign in with ${methods.sso.name}`),
        h('p', { class: 'muted' }, 'or with a local user:'));
      sso.hidden = false;
    }
  } catch { /* password logins still work */ }
}
