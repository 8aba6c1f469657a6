// A few helpers to build SVG with the DOM (no markup strings, so no
// escaping to get wrong).

const NS = 'http://www.w3.org/2000/svg';

export function el(name, attrs = {}, ...children) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v != null) e.setAttribute(k, String(v));
  }
  for (const c of children) {
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
}

// text is an SVG text element; a string longer than max characters is cut
// with an ellipsis (the whole string goes in its title).
export function text(x, y, s, attrs = {}, max = 0) {
  const cut = max > 0 && s.length > max;
  const t = el('text', { x, y, ...attrs }, cut ? `${s.slice(0, max - 1)}…` : s);
  if (cut) t.append(el('title', {}, s));
  return t;
}
