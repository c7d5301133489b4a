// SVG charts drawn in the browser: no library, no network. Each chart
// has a <title> and a text summary for screen readers.
//
// A chart is drawn at the pixel width of its box (one SVG unit is one
// CSS pixel), and drawn again when the box changes width, so its labels
// keep their size on a phone and on a wide screen, and the x axis shows
// as many labels as fit side by side without touching.
import { h, replace } from './ui.js';

const PAD = { top: 8, right: 10, bottom: 24, left: 56 };
// FONT is the labels' size in px (app.css sets it on .chart text too);
// CHAR estimates the width of one of their characters, for spacing them.
const FONT = 12;
const CHAR = 7.2;
const LABEL_GAP = 12;

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// frame draws the y axis of a chart width px wide into svg.
function frame(svg, width, height, max, fmtY) {
  const innerH = height - PAD.top - PAD.bottom;
  for (const f of [0, 0.5, 1]) {
    const y = PAD.top + innerH * (1 - f);
    svg.append(h('svg:line', { class: 'axis', x1: PAD.left, x2: width - PAD.right, y1: y, y2: y }));
    svg.append(h('svg:text', { x: PAD.left - 6, y: y + FONT / 3, 'text-anchor': 'end' }, fmtY(max * f)));
  }
  return { innerH, innerW: width - PAD.left - PAD.right };
}

// xLabels writes every step-th label under the x axis, step chosen so
// that labels stay LABEL_GAP apart. Each is kept inside the plot's width,
// and one that would then come closer than LABEL_GAP to the label before
// it is left out.
function xLabels(svg, labels, x, width, height) {
  if (labels.length === 0) return;
  const widest = Math.max(...labels.map(l => String(l).length)) * CHAR;
  const room = width - PAD.left - PAD.right;
  const fit = Math.max(1, Math.floor(room / (widest + LABEL_GAP)));
  const step = Math.max(1, Math.ceil(labels.length / fit));
  let lastRight = -Infinity;
  for (let i = 0; i < labels.length; i += step) {
    const cx = Math.min(Math.max(x(i), PAD.left + widest / 2), width - PAD.right - widest / 2);
    if (cx - widest / 2 < lastRight + LABEL_GAP) continue;
    lastRight = cx + widest / 2;
    svg.append(h('svg:text', { class: 'x-label', x: cx, y: height - 7, 'text-anchor': 'middle' }, labels[i]));
  }
}

/** legend shows series names with their colours, and an optional note. */
export function legend(series, note) {
  return h('div', { class: 'legend' }, series.map((s, i) =>
    h('span', null, h('span', { class: `swatch s${s.color ?? i}` }), s.label)),
  note ? h('span', { class: 'legend-note' }, note) : null);
}

// responsive returns a figure whose SVG draw(svg, width) fills at the
// box's width, now and whenever that width changes. The observer stops
// once the figure has left the page.
function responsive(title, height, draw, foot) {
  const svg = h('svg:svg', { class: 'chart', role: 'img', 'aria-label': title, height, viewBox: `0 0 1 ${height}` });
  const fig = h('figure', { class: 'chart-box' }, svg, foot);
  let drawn = 0;
  const ro = new ResizeObserver(() => {
    if (!fig.isConnected) { ro.disconnect(); return; }
    const width = Math.round(fig.clientWidth);
    if (width <= 0 || width === drawn) return;
    drawn = width;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    replace(svg, h('svg:title', null, title));
    draw(svg, width);
  });
  ro.observe(fig);
  return fig;
}

/**
 * barChart draws stacked bars: rows is an array of objects, series
 * [{key, label, color}] picks the stacked values, label(row) the x label;
 * note is said after the legend (the zone of the x labels' times).
 */
export function barChart(title, rows, series, { label = () => '', height = 180, fmtY = v => String(Math.round(v)), note } = {}) {
  const totals = rows.map(r => series.reduce((a, s) => a + (Number(r[s.key]) || 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const draw = (svg, width) => {
    const { innerH, innerW } = frame(svg, width, height, max, fmtY);
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
    xLabels(svg, rows.map(label), i => PAD.left + i * bw + bw / 2, width, height);
  };
  return responsive(title, height, draw, [legend(series, note), summary(title, rows, series, label)]);
}

/**
 * lineChart draws one line per series over rows (null values leave gaps).
 */
export function lineChart(title, rows, series, { label = () => '', height = 180, fmtY = v => String(Math.round(v)), note } = {}) {
  const values = rows.flatMap(r => series.map(s => Number(r[s.key])).filter(v => Number.isFinite(v)));
  const max = niceMax(Math.max(0, ...values));
  const draw = (svg, width) => {
    const { innerH, innerW } = frame(svg, width, height, max, fmtY);
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
    xLabels(svg, rows.map(label), x, width, height);
  };
  return responsive(title, height, draw, [legend(series, note), summary(title, rows, series, label)]);
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
