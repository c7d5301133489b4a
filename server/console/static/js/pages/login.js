// The login page: user name and password, answered with the session
// cookie. Wrong credentials and rate limits are shown in the form.
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
  replace(ctx.main, h('div', { class: 'login panel' }, h('h1', null, 'Log in to chime'), form));
  form.elements.username.focus();
}
