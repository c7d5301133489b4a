// The console's shell: session, navigation and routing. Routes live in
// the URL's fragment (#/jobs/reports/daily), so the server serves one
// page; each route's page is an ES module under pages/ exporting
// render(ctx).
import { createApi, ApiError } from './api.js';
import { h, replace, errorBox, link } from './ui.js';

const ROLES = ['viewer', 'operator', 'admin'];

// routes maps fragment paths to page modules. role is the least role
// that may open the page; public pages need no session.
const routes = [
  { path: '/login', page: 'login', title: 'Log in', public: true },
  { path: '/', page: 'dashboard', title: 'Dashboard' },
  { path: '/jobs', page: 'jobs', title: 'Jobs' },
  { path: '/jobs/new', page: 'job-edit', title: 'New job', role: 'operator' },
  { path: '/jobs/:group/:name', page: 'job', title: 'Job' },
  { path: '/jobs/:group/:name/edit', page: 'job-edit', title: 'Edit job', role: 'operator' },
  { path: '/executions', page: 'executions', title: 'Executions' },
  { path: '/executions/:id', page: 'execution', title: 'Execution' },
  { path: '/explain', page: 'explain', title: 'Why did it (not) fire?' },
  { path: '/calendars', page: 'calendars', title: 'Calendars' },
  { path: '/calendars/:name', page: 'calendar', title: 'Calendar' },
  { path: '/cluster', page: 'cluster', title: 'Cluster' },
  { path: '/executors', page: 'executors', title: 'Executors' },
  { path: '/pools', page: 'pools', title: 'Pools' },
  { path: '/workflows', page: 'workflows', title: 'Workflows' },
  { path: '/workflows/new', page: 'workflow-edit', title: 'New workflow', role: 'operator' },
  { path: '/workflows/:name', page: 'workflow', title: 'Workflow' },
  { path: '/workflows/:name/edit', page: 'workflow-edit', title: 'Edit workflow', role: 'operator' },
  { path: '/workflow-instances/:id', page: 'workflow-instance', title: 'Workflow instance' },
  { path: '/alerts', page: 'alerts', title: 'Alerts', role: 'admin' },
  { path: '/users', page: 'users', title: 'Users and tokens', role: 'admin' },
  { path: '/secrets', page: 'secrets', title: 'Secrets', role: 'admin' },
  { path: '/audit', page: 'audit', title: 'Audit log', role: 'admin' },
];

// nav is the main menu: [route, label, least role].
const nav = [
  ['/', 'Dashboard', 'viewer'],
  ['/jobs', 'Jobs', 'viewer'],
  ['/executions', 'Executions', 'viewer'],
  ['/workflows', 'Workflows', 'viewer'],
  ['/calendars', 'Calendars', 'viewer'],
  ['/cluster', 'Cluster', 'viewer'],
  ['/executors', 'Executors', 'viewer'],
  ['/pools', 'Pools', 'viewer'],
  ['/alerts', 'Alerts', 'admin'],
  ['/users', 'Users', 'admin'],
  ['/secrets', 'Secrets', 'admin'],
  ['/audit', 'Audit', 'admin'],
];

/** roleIncludes reports whether a user of role has the rights of least. */
export function roleIncludes(role, least) {
  return ROLES.indexOf(role) >= ROLES.indexOf(least || 'viewer') && ROLES.includes(role);
}

function match(path) {
  const parts = path.split('/').filter(Boolean);
  for (const r of routes) {
    const rp = r.path.split('/').filter(Boolean);
    if (rp.length !== parts.length) continue;
    const params = {};
    let ok = true;
    for (let i = 0; i < rp.length; i++) {
      if (rp[i].startsWith(':')) params[rp[i].slice(1)] = decodeURIComponent(parts[i]);
      else if (rp[i] !== parts[i]) { ok = false; break; }
    }
    if (ok) return { route: r, params };
  }
  return null;
}

class App {
  constructor() {
    this.main = document.getElementById('main');
    this.navEl = document.getElementById('nav');
    this.userbox = document.getElementById('userbox');
    this.menuToggle = document.querySelector('.menu-toggle');
    this.user = null;
    this.cleanups = [];
    this.controller = null;
    this.api = createApi({ onUnauthorized: () => this.sessionEnded() });
    this.menuToggle.addEventListener('click', () => {
      const open = !this.navEl.classList.contains('open');
      this.navEl.classList.toggle('open', open);
      this.menuToggle.setAttribute('aria-expanded', String(open));
    });
    window.addEventListener('hashchange', () => this.route());
  }

  async start() {
    try {
      this.user = await this.api.get('/auth/me');
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 401) {
        replace(this.main, errorBox(err));
        return;
      }
      this.user = null;
    }
    this.renderChrome();
    await this.route();
  }

  /** sessionEnded sends the user to the login page, back here afterwards. */
  sessionEnded() {
    if (!this.user) return;
    this.user = null;
    this.renderChrome();
    const here = location.hash.slice(1) || '/';
    if (!here.startsWith('/login')) location.hash = '#/login?next=' + encodeURIComponent(here);
  }

  renderChrome() {
    const signedIn = !!this.user;
    this.navEl.hidden = !signedIn;
    this.menuToggle.hidden = !signedIn;
    replace(this.navEl, signedIn
      ? nav.filter(([, , role]) => roleIncludes(this.user.role, role)).map(([r, label]) => link(r, label, { dataset: { route: r } }))
      : []);
    replace(this.userbox, signedIn ? [
      h('span', { class: 'muted', 'data-testid': 'whoami' },
        `${this.user.name} (${this.user.role}${this.user.scopes ? ' of ' + this.user.scopes.join(', ') : ''})`),
      h('button', { type: 'button', onclick: () => this.logout() }, 'Log out'),
    ] : []);
  }

  async logout() {
    try { await this.api.post('/auth/logout'); } catch { /* the session is gone either way */ }
    this.user = null;
    this.renderChrome();
    location.hash = '#/login';
  }

  /** signedIn is called by the login page with the new session's user. */
  async signedIn(next) {
    this.user = await this.api.get('/auth/me');
    this.renderChrome();
    location.hash = '#' + (next && next.startsWith('/') && !next.startsWith('/login') ? next : '/');
  }

  async route() {
    const raw = location.hash.slice(1);
    // Fragments that are not routes (the skip link's #main) stay in-page.
    if (raw && !raw.startsWith('/')) return;
    const [path, qs] = (raw || '/').split('?');
    for (const fn of this.cleanups.splice(0)) { try { fn(); } catch { /* ignore */ } }
    if (this.controller) this.controller.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.navEl.classList.remove('open');
    this.menuToggle.setAttribute('aria-expanded', 'false');

    // data-page names the route whose page main shows, once it has
    // rendered (tests wait for it).
    delete this.main.dataset.page;
    const rendered = () => { if (this.controller === controller) this.main.dataset.page = raw || '/'; };
    const m = match(path);
    if (!m) {
      document.title = 'Not found · chime';
      replace(this.main, h('h1', null, 'Not found'), h('p', null, 'No page at ', h('code', null, path), '. ', link('/', 'Go to the dashboard')));
      rendered();
      return;
    }
    if (!m.route.public && !this.user) {
      location.hash = '#/login?next=' + encodeURIComponent(raw || '/');
      return;
    }
    if (m.route.role && !roleIncludes(this.user.role, m.route.role)) {
      document.title = 'Not allowed · chime';
      replace(this.main, h('h1', null, 'Not allowed'), h('p', null, `This page needs the ${m.route.role} role; you are ${this.user.role}.`));
      rendered();
      return;
    }
    for (const a of this.navEl.querySelectorAll('a')) {
      const r = a.dataset.route;
      const current = r === '/' ? path === '/' : path === r || path.startsWith(r + '/');
      if (current) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
    }
    document.title = `${m.route.title} · chime`;
    replace(this.main, h('p', { class: 'loading' }, 'Loading…'));
    const ctx = {
      app: this,
      main: this.main,
      params: m.params,
      query: new URLSearchParams(qs || ''),
      user: this.user,
      api: this.api,
      signal: controller.signal,
      /** can reports whether the user has at least role. */
      can: role => !!this.user && roleIncludes(this.user.role, role),
      /** navigate goes to a route such as '/jobs'. */
      navigate: route => { location.hash = '#' + route; },
      /** setTitle names the page in the browser's tab. */
      setTitle: title => { document.title = `${title} · chime`; },
      /** onCleanup runs fn when the user leaves the page. */
      onCleanup: fn => this.cleanups.push(fn),
      /** every runs fn every ms while the page is shown (and the tab visible). */
      every: (ms, fn) => {
        const id = setInterval(() => { if (!document.hidden) fn(); }, ms);
        this.cleanups.push(() => clearInterval(id));
      },
      /** current reports whether this page is still the one shown. */
      current: () => this.controller === controller,
    };
    try {
      const mod = await import(`./pages/${m.route.page}.js`);
      if (!ctx.current()) return;
      await mod.render(ctx);
      if (ctx.current() && document.activeElement === document.body) this.main.focus({ preventScroll: true });
      rendered();
    } catch (err) {
      if (err.name === 'AbortError' || !ctx.current()) return;
      if (err instanceof ApiError && err.status === 401) return;
      console.error(err);
      replace(this.main, errorBox(err));
      rendered();
    }
  }
}

const app = new App();
app.start();
