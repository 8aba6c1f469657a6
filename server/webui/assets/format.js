// How numbers, sizes, times and durations read on the page.

const intFmt = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const oneDigit = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export function int(n) {
  return n == null ? '–' : intFmt.format(n);
}

// rate is records per second, '–' before there are two samples.
export function rate(r) {
  if (r == null) return '–';
  if (r >= 1e6) return `${oneDigit.format(r / 1e6)}M/s`;
  if (r >= 1e4) return `${oneDigit.format(r / 1e3)}k/s`;
  return `${r >= 10 ? intFmt.format(r) : oneDigit.format(r)}/s`;
}

export function pct(f) {
  if (f == null) return '–';
  return `${Math.round(Math.min(1, Math.max(0, f)) * 100)}%`;
}

export function bytes(n) {
  if (n == null) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? n : oneDigit.format(n)} ${units[i]}`;
}

export function millis(ms) {
  if (ms == null) return '–';
  if (ms < 10) return `${oneDigit.format(ms)} ms`;
  if (ms < 1000) return `${intFmt.format(ms)} ms`;
  return duration(ms);
}

// duration is a span of time in its two largest units (1 h 5 min, 12.3 s).
export function duration(ms) {
  if (ms == null) return '–';
  const s = ms / 1000;
  if (s < 60) return `${oneDigit.format(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.floor(s % 60)} s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

// time is an RFC 3339 time as the UTC date and time to the millisecond.
export function time(rfc3339) {
  if (!rfc3339) return '–';
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`;
}

// clock is the time of day part of time.
export function clock(rfc3339) {
  const t = time(rfc3339);
  return t.length > 11 && t[10] === ' ' ? t.slice(11) : t;
}

// watermark is an operator's or a job's watermark: absent, "end of input",
// or an event time.
export function watermark(wm) {
  if (!wm) return '–';
  if (wm === 'end of input') return wm;
  return clock(wm);
}

// watermarkLag says how far the watermark is behind the browser's clock.
export function watermarkLag(wm) {
  if (!wm || wm === 'end of input') return '';
  const t = new Date(wm).getTime();
  if (Number.isNaN(t)) return '';
  const lag = Date.now() - t;
  return lag >= 0 ? `${duration(lag)} behind now` : `${duration(-lag)} ahead of now`;
}
