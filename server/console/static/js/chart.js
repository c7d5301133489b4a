// SVG charts drawn in the browser: no library, no network. Each chart
// has a <title> and a text summary for screen readers.
import { h } from './ui.js';

const W = 640;
const PAD = { top: 8, right: 8, bottom: 22, left: 44 };

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function frame(svgTitle, height, max, fmtY) {
  const svg = h('svg:svg', { class: 'chart', viewBox: `0 0 ${W} ${height}`, role: 'img', 'aria-label': svgTitle });
  svg.append(h('svg:title', null, svgTitle));
  const innerH = height - PAD.top - PAD.bottom;
  for (const f of [0, 0.5, 1]) {
    const y = PAD.top + innerH * (1 - f);
    svg.append(h('svg:line', { class: 'axis', x1: PAD.left, x2: W - PAD.right, y1: y, y2: y }));
    svg.append(h('svg:text', { x: PAD.left - 4, y: y + 3, 'text-anchor': 'end' }, fmtY(max * f)));
  }
  return { svg, innerH, innerW: W - PAD.left - PAD.right };
}

function xLabels(svg, labels, x, height) {
  if (labels.length === 0) return;
  const step = Math.max(1, Math.ceil(labels.length / 6));
  for (let i = 0; i < labels.length; i += step) {
    svg.append(h('svg:text', { x: x(i), y: height - 6, 'text-anchor': 'middle' }, labels[i]));
  }
}

/** legend shows series names with their colours. */
export function legend(series) {
  return h('div', { class: 'legend' }, series.map((s, i) =>
    h('span', null, h('span', { class: `swatch s${s.color ?? i}` }), s.label)));
}

/**
 * barChart draws stacked bars: rows is an array of objects, series
 * [{key, label, color}] picks the stacked values, label(row) the x label.
 */
export function barChart(title, rows, series, { label = () => '', height = 180, fmtY = v => String(Math.round(v)) } = {}) {
  const totals = rows.map(r => series.reduce((a, s) => a + (Number(r[s.key]) || 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const { svg, innerH, innerW } = frame(title, height, max, fmtY);
  const bw = innerW / Math.max(rows.length, 1);
  rows.forEach((r, i) => {
    let y = PAD.top + innerH;
    series.forEach((s, si) => {
      const v = Number(r[s.key]) || 0;
      if (v <= 0) return;
      const bh = (v / max) * innerH;
      y -= bh;
      const rect = h('svg:rect', { class: `s${s.color ?? si}`, x: PAD.left + i * bw + bw * 0.1, y, width: Math.max(bw * 0.8, 1), height: bh });
      rect.append(h('svg:title', null, `${label(r)} ${s.label}: ${v}`));
      svg.append(rect);
    });
  });
  xLabels(svg, rows.map(label), i => PAD.left + i * bw + bw / 2, height);
  return h('figure', { class: 'chart-box' }, svg, legend(series), summary(title, rows, series, label));
}

/**
 * lineChart draws one line per series over rows (null values leave gaps).
 */
export function lineChart(title, rows, series, { label = () => '', height = 180, fmtY = v => String(Math.round(v)) } = {}) {
  const values = rows.flatMap(r => series.map(s => Number(r[s.key])).filter(v => Number.isFinite(v)));
  const max = niceMax(Math.max(0, ...values));
  const { svg, innerH, innerW } = frame(title, height, max, fmtY);
  const x = i => PAD.left + (rows.length <= 1 ? innerW / 2 : (i / (rows.length - 1)) * innerW);
  series.forEach((s, si) => {
    let d = '';
    let pen = false;
    rows.forEach((r, i) => {
      const v = r[s.key];
      if (v === null || v === undefined || !Number.isFinite(Number(v))) { pen = false; return; }
      const y = PAD.top + innerH * (1 - Number(v) / max);
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)},${y.toFixed(1)} `;
      pen = true;
      // Past 60 rows only points without a neighbour get a dot, or they
      // would not show at all.
      const lone = !Number.isFinite(Number(rows[i - 1]?.[s.key] ?? NaN)) && !Number.isFinite(Number(rows[i + 1]?.[s.key] ?? NaN));
      if (rows.length <= 60 || lone) {
        const dot = h('svg:circle', { class: `s${s.color ?? si}`, cx: x(i), cy: y, r: 2.5 });
        dot.append(h('svg:title', null, `${label(r)} ${s.label}: ${fmtY(Number(v))}`));
        svg.append(dot);
      }
    });
    if (d) svg.append(h('svg:path', { class: `line s${s.color ?? si}`, d, fill: 'none' }));
  });
  xLabels(svg, rows.map(label), x, height);
  return h('figure', { class: 'chart-box' }, svg, legend(series), summary(title, rows, series, label));
}

// summary is the chart's figures in words, for screen readers.
function summary(title, rows, series, label) {
  const totals = series.map(s => {
    const vs = rows.map(r => Number(r[s.key])).filter(Number.isFinite);
    const sum = vs.reduce((a, b) => a + b, 0);
    return `${s.label}: total ${Math.round(sum)}, max ${Math.round(Math.max(0, ...vs))}`;
  });
  const span = rows.length ? ` from ${label(rows[0])} to ${label(rows[rows.length - 1])}` : '';
  return h('figcaption', { class: 'visually-hidden' }, `${title}${span}. ${totals.join('; ')}.`);
}
