// Helpers shared by the job pages (job, job-edit, jobs, dashboard):
// schedules in words and lists of fire times with their DST marks.
import { h, fmtTime, relTime } from '../ui.js';

/**
 * fromNow is relTime in days beyond two days: "in 10 days", "3 days ago".
 */
export function fromNow(t) {
  if (!t) return '';
  const diff = new Date(t).getTime() - Date.now();
  const days = Math.round(Math.abs(diff) / 86400000);
  if (Math.abs(diff) < 2 * 86400000) return relTime(t);
  return diff < 0 ? `${days} days ago` : `in ${days} days`;
}

/** browserZone is the browser's IANA time zone, in which times are shown. */
export function browserZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; } catch { return 'UTC'; }
}

/** schedOf returns a trigger's schedule as an object ({} if unreadable). */
export function schedOf(trigger) {
  const s = trigger && trigger.schedule;
  if (!s) return {};
  if (typeof s === 'string') {
    try { return JSON.parse(s); } catch { return {}; }
  }
  return s;
}

/**
 * durationMs reads a Go duration string ("5m", "1h30m", "250ms"), the
 * API's form of an interval, as milliseconds; NaN when it is not one.
 */
export function durationMs(text) {
  const units = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  const str = String(text || '').trim();
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(str)) return NaN;
  let ms = 0;
  for (const [, n, , unit] of str.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * units[unit];
  return ms;
}

/** goDuration writes milliseconds as a Go duration string: "5m", "90s". */
export function goDuration(ms) {
  if (ms % 3600000 === 0) return `${ms / 3600000}h`;
  if (ms % 60000 === 0) return `${ms / 60000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** everyMs says a period in milliseconds as "5 min", "90 s", "1 h". */
export function everyMs(ms) {
  ms = Number(ms) || 0;
  if (ms === 0) return '0 s';
  if (ms % 86400000 === 0) return plural(ms / 86400000, 'day');
  if (ms % 3600000 === 0) return `${ms / 3600000} h`;
  if (ms % 60000 === 0) return `${ms / 60000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

function plural(n, unit) {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * describeSchedule says a trigger's schedule in words. Cron expressions
 * are explained by the API (GET /cron/explain), the rest here.
 */
export async function describeSchedule(api, trigger, signal) {
  const s = schedOf(trigger);
  switch (s.kind) {
    case 'cron':
      try {
        const ex = await api.get('/cron/explain', { expression: s.expression, time_zone: s.time_zone, count: 1 }, { signal });
        return `${ex.description} (${ex.time_zone})`;
      } catch (err) {
        if (err.name === 'AbortError') throw err;
        return `cron ${s.expression} (${s.time_zone || 'UTC'})`;
      }
    case 'once':
    case 'simple': {
      const start = trigger.start_time ? fmtTime(trigger.start_time) : 'when created';
      if (s.kind === 'once') return `Once, at ${start}`;
      const every = everyMs(durationMs(s.interval));
      if (s.repeat_count == null) return `Every ${every}, from ${start}`;
      return `Every ${every}, from ${start}, ${plural(s.repeat_count + 1, 'time')} in all`;
    }
    case 'fixed_delay':
      return `${everyMs(durationMs(s.delay))} after each run ends`;
    case 'calendar_interval':
      return `Every ${plural(s.interval || 1, s.unit || 'unit')} by the calendar (${s.time_zone || 'UTC'})`;
    case 'daily_time_interval': {
      const days = (s.days_of_week || []).length === 7 ? ' every day' : ` on ${s.days_of_week.join(', ')}`;
      return `Every ${everyMs(durationMs(s.interval))} from ${s.start_time_of_day} to ${s.end_time_of_day}${days} (${s.time_zone || 'UTC'})`;
    }
    default:
      return JSON.stringify(s);
  }
}

/** scheduleText is a trigger's schedule in its own terms: the cron expression, the interval… */
export function scheduleText(trigger) {
  const s = schedOf(trigger);
  switch (s.kind) {
    case 'cron': return `${s.expression}  ${s.time_zone || 'UTC'}`;
    case 'once': return 'once';
    case 'simple': return `every ${everyMs(durationMs(s.interval))}`;
    case 'fixed_delay': return `${everyMs(durationMs(s.delay))} after each run`;
    default: return s.kind || '?';
  }
}

/**
 * fireTimesList lists fire times ([{time, dst}]) in the browser's zone;
 * those next to a daylight-saving change carry class "dst" and a note.
 */
export function fireTimesList(times, { testid } = {}) {
  if (!times || times.length === 0) return h('p', { class: 'empty' }, 'No upcoming fire time.');
  return h('ol', { class: 'fire-times', 'data-testid': testid || null },
    times.map(ft => h('li', { class: ft.dst ? 'dst' : null },
      h('time', { datetime: ft.time, title: fromNow(ft.time) }, fmtTime(ft.time)),
      ' ', h('span', { class: 'muted small' }, fromNow(ft.time)),
      ft.dst ? h('span', { class: 'dst-note' }, ' — daylight-saving change: the UTC offset differs from the previous firing') : null)));
}
