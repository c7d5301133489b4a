// Shared by the workflow pages: routes, and the drawing of a workflow's
// DAG as SVG, its tasks in columns by depth, each coloured by its state.
import { h } from '../ui.js';

/** workflowRoute is the console route of a workflow's page. */
export function workflowRoute(name) { return '/workflows/' + encodeURIComponent(name); }

/** instanceRoute is the console route of a workflow instance's page. */
export function instanceRoute(id) { return '/workflow-instances/' + encodeURIComponent(id); }

// Sizes of the drawing, in SVG units.
const NODE_W = 150, NODE_H = 40, COL = 200, ROW = 60, PAD = 12;

/**
 * layout places tasks (names, in the workflow's order) in columns: each
 * task one column right of its deepest upstream task. It returns
 * {pos: Map name -> {x, y}, width, height}.
 */
export function layout(tasks, edges) {
  const up = new Map(tasks.map(t => [t, []]));
  for (const e of edges || []) if (up.has(e.to)) up.get(e.to).push(e.from);
  const depth = new Map();
  const depthOf = (t, seen = new Set()) => {
    if (depth.has(t)) return depth.get(t);
    if (seen.has(t)) return 0; // a cycle the server would refuse
    seen.add(t);
    const d = Math.max(-1, ...up.get(t).filter(u => up.has(u)).map(u => depthOf(u, seen))) + 1;
    depth.set(t, d);
    return d;
  };
  const columns = [];
  for (const t of tasks) {
    const d = depthOf(t);
    (columns[d] ||= []).push(t);
  }
  const rows = Math.max(1, ...columns.map(c => (c || []).length));
  const pos = new Map();
  columns.forEach((col, x) => (col || []).forEach((t, i) => {
    // Each column is centred on the tallest.
    pos.set(t, { x: PAD + x * COL, y: PAD + (i + (rows - col.length) / 2) * ROW });
  }));
  return { pos, width: PAD * 2 + (columns.length - 1) * COL + NODE_W, height: PAD * 2 + (rows - 1) * ROW + NODE_H };
}

/**
 * dagSvg draws tasks and edges. state(name) gives a task's state (its
 * colour), href(name) an optional link, and title(name) its tooltip.
 * Edges on failure are dashed, always dotted, both labelled.
 */
export function dagSvg(tasks, edges, { state = () => '', href = () => null, title = n => n } = {}) {
  const { pos, width, height } = layout(tasks, edges);
  const svg = h('svg', {
    class: 'dag', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img',
    'aria-label': `Workflow graph: ${tasks.length} tasks, ${(edges || []).length} edges`, 'data-testid': 'dag',
  });
  svg.append(h('svg:defs', null, h('svg:marker', { id: 'dag-arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
    h('svg:path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'dag-arrowhead' }))));
  for (const e of edges || []) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x, y2 = b.y + NODE_H / 2;
    const mx = (x1 + x2) / 2;
    const on = e.on || 'success';
    svg.append(h('svg:path', {
      d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`, class: `dag-edge on-${on}`, 'marker-end': 'url(#dag-arrow)',
      dataset: { from: e.from, to: e.to, on },
    }));
    if (on !== 'success') svg.append(h('svg:text', { x: mx, y: (y1 + y2) / 2 - 4, class: 'dag-edge-label', 'text-anchor': 'middle' }, on));
  }
  for (const t of tasks) {
    const p = pos.get(t);
    const st = state(t) || 'none';
    const label = t.length > 18 ? t.slice(0, 17) + '…' : t;
    const g = h('svg:g', { class: `dag-node st-${st}`, dataset: { task: t, state: st }, transform: `translate(${p.x} ${p.y})` },
      h('svg:title', null, title(t)),
      h('svg:rect', { width: NODE_W, height: NODE_H, rx: 6 }),
      h('svg:text', { x: NODE_W / 2, y: st === 'none' ? NODE_H / 2 + 5 : 17, 'text-anchor': 'middle', class: 'dag-name' }, label),
      st === 'none' ? null : h('svg:text', { x: NODE_W / 2, y: 32, 'text-anchor': 'middle', class: 'dag-state' }, st));
    const link = href(t);
    svg.append(link ? h('svg:a', { href: '#' + link }, g) : g);
  }
  return h('div', { class: 'dag-wrap' }, svg);
}
