// The operator graph: the job's physical plan as a DAG, each operator in
// the column of its depth (the longest path to it from a source), edges
// left to right, and on each node its rates, busy and backpressured time
// and watermark.

import { el, clear, text } from './svg.js';
import * as fmt from './format.js';

const W = 240, H = 124, GAP_X = 60, GAP_Y = 26, PAD = 14, BAR = 100;
// A graph wider than its box is drawn smaller, down to MIN_SCALE, then scrolls.
const MIN_SCALE = 0.7;

// split cuts an operator's name, "GroupAggregate(groupBy=[k], ...)", into
// its kind and what is in the parentheses.
export function split(name) {
  const i = name.indexOf('(');
  if (i < 0) return [name, ''];
  return [name.slice(0, i), name.slice(i + 1, name.endsWith(')') ? -1 : undefined)];
}

const inputsOf = (op) => op.inputs || [];

// layout places the operators: pos maps an id to its node's {x, y}.
export function layout(operators) {
  const byId = new Map(operators.map((o, i) => [o.id, { op: o, index: i }]));
  const depth = new Map();
  const depthOf = (id, seen = new Set()) => {
    if (depth.has(id)) return depth.get(id);
    seen.add(id); // a plan is acyclic; this only guards the page against a bad one
    const ins = inputsOf(byId.get(id).op).filter((i) => byId.has(i.From) && !seen.has(i.From));
    const d = ins.length ? 1 + Math.max(...ins.map((i) => depthOf(i.From, seen))) : 0;
    depth.set(id, d);
    return d;
  };
  const columns = [];
  for (const o of operators) {
    (columns[depthOf(o.id)] ||= []).push(o);
  }
  // Each column in the order of its inputs' mean row, which keeps most
  // edges from crossing; ties keep the plan's order.
  const row = new Map();
  columns.forEach((col, c) => {
    if (c > 0) {
      const bary = (o) => {
        const ins = inputsOf(o).filter((i) => row.has(i.From));
        return ins.length ? ins.reduce((s, i) => s + row.get(i.From), 0) / ins.length : 0;
      };
      col.sort((a, b) => bary(a) - bary(b) || byId.get(a.id).index - byId.get(b.id).index);
    }
    col.forEach((o, r) => row.set(o.id, r));
  });
  const rows = Math.max(1, ...columns.map((c) => c.length));
  const height = 2 * PAD + rows * H + (rows - 1) * GAP_Y;
  const width = 2 * PAD + columns.length * W + Math.max(0, columns.length - 1) * GAP_X;
  const pos = new Map();
  columns.forEach((col, c) => {
    const y0 = (height - (col.length * H + (col.length - 1) * GAP_Y)) / 2;
    col.forEach((o, r) => pos.set(o.id, { x: PAD + c * (W + GAP_X), y: y0 + r * (H + GAP_Y) }));
  });
  return { pos, width, height };
}

// busyColor goes from a calm blue (idle) to red (always busy), as in
// Flink's job graph.
function busyColor(f) {
  const v = Math.min(1, Math.max(0, f || 0));
  return `hsl(${Math.round(210 - 210 * v)}, 70%, ${Math.round(62 - 12 * v)}%)`;
}

class OpNode {
  constructor(op, x, y) {
    const [kind, detail] = split(op.name);
    this.g = el('g', { class: 'op', 'data-op-id': op.id, transform: `translate(${x},${y})` },
      el('title', {}, `${op.name}\nid ${op.id}, parallelism ${op.parallelism}`));
    this.box = el('rect', { class: 'op-box', width: W, height: H, rx: 6 });
    this.strip = el('rect', { class: 'op-strip', width: 6, height: H, rx: 3 });
    this.rates = text(14, 60, '', { class: 'op-rates' });
    this.busyText = text(14, 82, '', { class: 'op-metric' });
    this.busyBar = el('rect', { x: W - BAR - 12, y: 74, height: 9, width: 0, rx: 2, class: 'bar-busy' });
    this.bpText = text(14, 100, '', { class: 'op-metric' });
    this.bpBar = el('rect', { x: W - BAR - 12, y: 92, height: 9, width: 0, rx: 2, class: 'bar-bp' });
    this.wm = text(14, 117, '', { class: 'op-metric' });
    this.g.append(this.box, this.strip,
      text(14, 21, kind, { class: 'op-kind' }, 26),
      text(W - 10, 21, `×${op.parallelism}`, { class: 'op-par', 'text-anchor': 'end' }),
      text(14, 39, detail, { class: 'op-detail' }, 34),
      this.rates, this.busyText,
      el('rect', { x: W - BAR - 12, y: 74, width: BAR, height: 9, rx: 2, class: 'bar-bg' }), this.busyBar,
      this.bpText,
      el('rect', { x: W - BAR - 12, y: 92, width: BAR, height: 9, rx: 2, class: 'bar-bg' }), this.bpBar,
      this.wm);
  }

  set(m) {
    m = m || {};
    this.rates.textContent = `in ${fmt.rate(m.inRate)}   out ${fmt.rate(m.outRate)}`;
    this.busyText.textContent = `busy ${fmt.pct(m.busy)}`;
    this.bpText.textContent = `backpressured ${fmt.pct(m.backpressured)}`;
    this.wm.textContent = `watermark ${fmt.watermark(m.watermark)}`;
    this.busyBar.setAttribute('width', String(BAR * Math.min(1, m.busy || 0)));
    this.busyBar.setAttribute('fill', busyColor(m.busy));
    this.bpBar.setAttribute('width', String(BAR * Math.min(1, m.backpressured || 0)));
    this.strip.setAttribute('fill', busyColor(m.busy));
    this.g.classList.toggle('backpressured', (m.backpressured || 0) > 0.5);
  }
}

export class Graph {
  constructor(svg) {
    this.svg = svg;
    this.plan = '';
    this.nodes = new Map();
  }

  // update draws the operators (again only when the plan changed) and
  // sets each node's metrics: metrics maps an operator id to {inRate,
  // outRate, busy, backpressured (fractions of time), watermark}.
  update(operators, metrics) {
    const plan = JSON.stringify(operators.map((o) => [o.id, o.name, o.parallelism, inputsOf(o)]));
    if (plan !== this.plan) {
      this.build(operators);
      this.plan = plan;
    }
    for (const o of operators) this.nodes.get(o.id).set(metrics.get(o.id));
    this.fit();
  }

  // fit sizes the drawing to its box.
  fit() {
    const avail = this.svg.parentElement.clientWidth - 2;
    const scale = avail > 0 ? Math.min(1, Math.max(MIN_SCALE, avail / this.width)) : 1;
    this.svg.setAttribute('width', String(Math.floor(this.width * scale)));
    this.svg.setAttribute('height', String(Math.floor(this.height * scale)));
  }

  build(operators) {
    const svg = this.svg;
    clear(svg);
    this.nodes.clear();
    const { pos, width, height } = layout(operators);
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    this.width = width;
    this.height = height;
    svg.append(el('defs', {},
      el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' },
        el('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }))));
    const edges = el('g', { class: 'edges' });
    const labels = el('g', { class: 'edge-labels' });
    for (const o of operators) {
      const to = pos.get(o.id);
      const ins = inputsOf(o).filter((i) => pos.has(i.From));
      ins.forEach((input, k) => {
        const from = pos.get(input.From);
        const x1 = from.x + W, y1 = from.y + H / 2;
        const x2 = to.x - 2, y2 = to.y + (H * (k + 1)) / (ins.length + 1);
        const mx = (x1 + x2) / 2;
        edges.append(el('path', {
          d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`,
          class: input.Late ? 'edge late' : 'edge', 'marker-end': 'url(#arrow)',
          'data-from': input.From, 'data-to': o.id,
        }));
        const label = input.Late ? `${input.Partitioning} (late)` : input.Partitioning;
        labels.append(text(mx, (y1 + y2) / 2 - 6, label.toLowerCase(), { class: 'edge-label', 'text-anchor': 'middle' }));
      });
    }
    svg.append(edges);
    for (const o of operators) {
      const { x, y } = pos.get(o.id);
      const n = new OpNode(o, x, y);
      this.nodes.set(o.id, n);
      svg.append(n.g);
    }
    svg.append(labels);
  }
}
