// The checkpoint history as a chart: a bar per checkpoint for its
// duration (left axis; failed ones red, savepoints darker) and a line
// through the completed ones' sizes (right axis).

import { el, clear, text } from './svg.js';
import * as fmt from './format.js';

const H = 200, M = { l: 66, r: 74, t: 26, b: 30 };

// niceMax rounds up to 1, 2 or 5 times a power of ten.
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const f of [1, 2, 5, 10]) {
    if (v <= f * p) return f * p;
  }
  return 10 * p;
}

export function drawCheckpoints(svg, history) {
  clear(svg);
  const W = Math.max(480, Math.round(svg.getBoundingClientRect().width) || 900);
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('height', String(H));
  if (!history.length) {
    svg.append(text(W / 2, H / 2, 'no checkpoints yet', { class: 'chart-empty', 'text-anchor': 'middle' }));
    return;
  }
  const pw = W - M.l - M.r, ph = H - M.t - M.b;
  const maxDur = niceMax(Math.max(...history.map((h) => h.duration_ms || 0)));
  const completed = history.filter((h) => h.status === 'COMPLETED');
  const maxSize = Math.max(1, ...completed.map((h) => h.size_bytes || 0)) * 1.1;
  const bw = pw / history.length;
  const y = (f) => M.t + ph * (1 - f);

  for (const f of [0, 0.5, 1]) {
    svg.append(el('line', { x1: M.l, x2: W - M.r, y1: y(f), y2: y(f), class: 'grid-line' }),
      text(M.l - 6, y(f) + 4, fmt.millis(maxDur * f), { class: 'axis axis-dur', 'text-anchor': 'end' }),
      text(W - M.r + 6, y(f) + 4, fmt.bytes(Math.round(maxSize * f)), { class: 'axis axis-size' }));
  }
  const bars = el('g', { class: 'bars' });
  history.forEach((h, i) => {
    const v = Math.max(2, (ph * (h.duration_ms || 0)) / maxDur);
    const cls = ['bar-dur'];
    if (h.status !== 'COMPLETED') cls.push('failed');
    if (h.savepoint) cls.push('savepoint');
    const what = h.status === 'COMPLETED'
      ? `${fmt.millis(h.duration_ms)}, ${fmt.bytes(h.size_bytes)} (${fmt.bytes(h.incremental_bytes)} new), alignment ${fmt.millis(h.alignment_ms)}`
      : `${fmt.millis(h.duration_ms)}: ${h.failure || 'failed'}`;
    bars.append(el('rect', { x: M.l + i * bw + bw * 0.15, y: y(0) - v, width: Math.max(1, bw * 0.7), height: v, class: cls.join(' ') },
      el('title', {}, `${h.savepoint ? 'savepoint' : 'checkpoint'} ${h.id} ${h.status}, triggered ${fmt.time(h.trigger_time)}: ${what}`)));
  });
  svg.append(bars);
  if (completed.length) {
    const pts = [];
    history.forEach((h, i) => {
      if (h.status === 'COMPLETED') pts.push([M.l + (i + 0.5) * bw, y((h.size_bytes || 0) / maxSize)]);
    });
    svg.append(el('polyline', { points: pts.map((p) => p.join(',')).join(' '), class: 'size-line' }));
    if (history.length <= 40) {
      for (const [cx, cy] of pts) svg.append(el('circle', { cx, cy, r: 2.5, class: 'size-dot' }));
    }
  }
  const first = history[0].id, last = history[history.length - 1].id;
  svg.append(text(M.l, H - 10, `#${first}`, { class: 'axis' }),
    text(W - M.r, H - 10, `#${last}`, { class: 'axis', 'text-anchor': 'end' }),
    text(M.l + pw / 2, H - 10, 'checkpoint', { class: 'axis', 'text-anchor': 'middle' }));
  svg.append(el('rect', { x: M.l, y: 6, width: 10, height: 10, class: 'bar-dur' }),
    text(M.l + 15, 15, 'duration', { class: 'legend' }),
    el('rect', { x: M.l + 80, y: 6, width: 10, height: 10, class: 'bar-dur failed' }),
    text(M.l + 95, 15, 'failed', { class: 'legend' }),
    el('line', { x1: M.l + 150, x2: M.l + 166, y1: 11, y2: 11, class: 'size-line' }),
    text(M.l + 171, 15, 'size', { class: 'legend' }));
}
