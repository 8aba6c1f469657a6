// Rates turns counters read at successive polls into rates per second.
export class Rates {
  constructor() {
    this.prev = new Map();
  }

  // sample records the counters (an object of numbers) of key read at time
  // t (ms) and returns each one's rate per second since key's previous
  // sample: null before there is one, and for a counter that went back.
  sample(key, counters, t = performance.now()) {
    const p = this.prev.get(key);
    this.prev.set(key, { counters, t });
    const out = {};
    const dt = p ? (t - p.t) / 1000 : 0;
    for (const [k, v] of Object.entries(counters)) {
      const d = p ? v - p.counters[k] : -1;
      out[k] = dt > 0 && d >= 0 ? d / dt : null;
    }
    return out;
  }

  // retain forgets every key not in keys.
  retain(keys) {
    const keep = new Set(keys);
    for (const k of this.prev.keys()) {
      if (!keep.has(k)) this.prev.delete(k);
    }
  }
}
