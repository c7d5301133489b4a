// The console's client of chime's HTTP API (docs/api.md). Requests carry
// the session cookie; answers are JSON, and every failure becomes an
// ApiError with the API's {code, message, field}.

/** ApiError is a refused or failed API request. */
export class ApiError extends Error {
  constructor(status, body) {
    super((body && body.message) || `request failed with status ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = (body && body.code) || '';
    this.field = (body && body.field) || '';
  }
}

/**
 * createApi returns the API client. onUnauthorized is called when an answer
 * is 401 (the session ended), before the ApiError is thrown.
 */
export function createApi({ onUnauthorized } = {}) {
  async function request(method, path, { query, body, ifMatch, signal } = {}) {
    let url = '/api/v1' + path;
    if (query) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
      }
      const s = qs.toString();
      if (s) url += '?' + s;
    }
    const headers = { Accept: 'application/json' };
    const init = { method, headers, credentials: 'same-origin', signal };
    // Every change is sent as JSON, body or not: the API refuses a
    // cookie-authenticated change without it (its defence against forged
    // cross-site requests).
    if (method !== 'GET') headers['Content-Type'] = 'application/json';
    if (body !== undefined) init.body = JSON.stringify(body);
    if (ifMatch) headers['If-Match'] = ifMatch;
    let res;
    try {
      res = await fetch(url, init);
    } catch (err) {
      if (err.name === 'AbortError') throw err;
      throw new ApiError(0, { code: 'unavailable', message: 'The server cannot be reached: ' + err.message });
    }
    const text = await res.text();
    let data = null;
    if (text) {
      try { data = JSON.parse(text); } catch { data = { message: text.trim() }; }
    }
    if (res.status === 401 && onUnauthorized && path !== '/auth/login') onUnauthorized();
    if (!res.ok) throw new ApiError(res.status, data);
    return { data, etag: res.headers.get('ETag'), status: res.status };
  }
  return {
    /** get returns the decoded answer of a GET. */
    async get(path, query, opts = {}) { return (await request('GET', path, { query, ...opts })).data; },
    /** getWithETag returns {data, etag} of a GET, for edits with If-Match. */
    getWithETag(path, opts = {}) { return request('GET', path, opts); },
    async post(path, body, opts = {}) { return (await request('POST', path, { body, ...opts })).data; },
    async put(path, body, opts = {}) { return (await request('PUT', path, { body, ...opts })).data; },
    async del(path, opts = {}) { return (await request('DELETE', path, opts)).data; },
  };
}

/** jobPath is the API path of a job: /jobs/{group}/{name}, escaped. */
export function jobPath(group, name) {
  return `/jobs/${encodeURIComponent(group)}/${encodeURIComponent(name)}`;
}
