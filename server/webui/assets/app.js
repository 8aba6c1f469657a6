// The page: the job list at #/, a job at #/jobs/<id>. It reads the REST
// API every POLL_MS and computes rates from successive reads of the
// counters.

import * as api from './api.js';
import * as fmt from './format.js';
import { Rates } from './rates.js';
import { Graph } from './graph.js';
import { drawCheckpoints } from './chart.js';

const POLL_MS = 1500;

const $ = (id) => document.getElementById(id);

// h builds an HTML element; children are nodes or text.
function h(name, attrs = {}, ...children) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c ?? '')));
  return e;
}

function setText(id, s, value) {
  const e = $(id);
  e.textContent = s;
  if (value !== undefined) e.dataset.value = String(value);
}

// route is the id of the job the page shows, or '' for the list.
function route() {
  const m = /^#\/jobs\/([^/]+)$/.exec(location.hash);
  return m ? decodeURIComponent(m[1]) : '';
}

const statusBadge = (status) => h('span', { class: `status status-${status}` }, status);

// The job list.

const listRates = new Rates();

function renderJobs(jobs, t) {
  listRates.retain(jobs.map((j) => j.id));
  jobs = [...jobs].sort((a, b) => (b.start_time || '').localeCompare(a.start_time || ''));
  const body = $('jobs').tBodies[0];
  body.replaceChildren(...jobs.map((j) => {
    const r = listRates.sample(j.id, { in: j.records_in, out: j.records_out }, t);
    const href = `#/jobs/${encodeURIComponent(j.id)}`;
    const row = h('tr', { 'data-job-id': j.id, 'data-status': j.status, class: 'job-row' },
      h('td', {}, h('a', { href }, j.name)),
      h('td', {}, h('code', {}, j.id)),
      h('td', {}, statusBadge(j.status)),
      h('td', {}, fmt.time(j.start_time)),
      h('td', {}, fmt.duration(j.duration_ms)),
      h('td', { class: 'num records-in', 'data-value': j.records_in }, fmt.int(j.records_in)),
      h('td', { class: 'num records-out', 'data-value': j.records_out }, fmt.int(j.records_out)),
      h('td', { class: 'num' }, fmt.rate(r.in)),
      h('td', { class: 'num' }, fmt.rate(r.out)),
      h('td', { title: j.watermark || '' }, fmt.watermark(j.watermark)),
      h('td', { class: 'num' }, fmt.int(j.restarts)));
    if (j.error) row.title = j.error;
    row.addEventListener('click', (e) => {
      if (!(e.target instanceof HTMLAnchorElement)) location.hash = href;
    });
    return row;
  }));
  $('no-jobs').hidden = jobs.length > 0;
}

// A job.

const jobRates = new Rates();
const opRates = new Rates();
let graph;
let shown = ''; // the job whose page was last drawn
let current = null; // its last summary

// opWatermark is the lowest watermark of an operator's subtasks that have
// one ("end of input" is the highest).
function opWatermark(subtasks) {
  let low = null, lowT = Infinity;
  for (const s of subtasks) {
    if (!s.watermark) continue;
    const t = s.watermark === 'end of input' ? Infinity : new Date(s.watermark).getTime();
    if (low === null || t < lowT) {
      low = s.watermark;
      lowT = t;
    }
  }
  return low;
}

function renderJob(d, cps, exc, t) {
  const j = d.job;
  current = j;
  if (shown !== j.id) {
    shown = j.id;
    jobRates.retain([]);
    opRates.retain([]);
    hideConfirm();
    $('action-result').hidden = true;
  }
  document.title = `${j.name} · streamsql`;
  setText('job-name', j.name);
  $('job-status').replaceWith(Object.assign(statusBadge(j.status), { id: 'job-status' }));
  $('job-status').dataset.value = j.status;
  setText('job-id', j.id);
  setText('job-start', fmt.time(j.start_time));
  setText('job-duration', fmt.duration(j.duration_ms));
  const live = j.status === 'RUNNING' || j.status === 'RESTARTING';
  $('stop').disabled = !live || stopping;
  $('stop-savepoint').disabled = j.status !== 'RUNNING' || stopping;

  const r = jobRates.sample(j.id, { in: j.records_in, out: j.records_out }, t);
  setText('records-in', fmt.int(j.records_in), j.records_in);
  setText('records-out', fmt.int(j.records_out), j.records_out);
  setText('rate-in', live ? fmt.rate(r.in) : '');
  setText('rate-out', live ? fmt.rate(r.out) : '');
  setText('watermark', fmt.watermark(j.watermark));
  $('watermark').title = j.watermark || '';
  setText('watermark-lag', fmt.watermarkLag(j.watermark));
  setText('checkpoints-completed', fmt.int(cps.counts.completed), cps.counts.completed);
  const last = cps.latest ? ` · last ${fmt.millis(cps.latest.duration_ms)}, ${fmt.bytes(cps.latest.size_bytes)}` : '';
  setText('checkpoints-detail', `${fmt.int(cps.counts.failed)} failed${last}`);
  setText('restarts', fmt.int(j.restarts), j.restarts);
  const late = j.late_dropped + j.late_routed;
  setText('late', j.restored_from_checkpoint ? `restored from checkpoint ${j.restored_from_checkpoint}` : late ? `${fmt.int(late)} late records` : '');

  renderOperators(d.plan.operators, j.id, t, live);
  drawCheckpoints($('checkpoint-chart'), cps.history);
  renderCheckpointTable(cps.history);
  renderExceptions(exc.exceptions);
  setText('statement', d.statement);
}

function renderOperators(ops, jobId, t, live) {
  opRates.retain(ops.map((o) => `${jobId}/${o.id}`));
  const metrics = new Map();
  const rows = [];
  for (const o of ops) {
    const sum = (k) => o.subtasks.reduce((s, st) => s + (st[k] || 0), 0);
    const c = { in: sum('records_in'), out: sum('records_out'), busy: sum('busy_seconds'), bp: sum('backpressured_seconds') };
    const r = opRates.sample(`${jobId}/${o.id}`, c, t);
    const n = Math.max(1, o.subtasks.length);
    const m = {
      inRate: live ? r.in : null,
      outRate: live ? r.out : null,
      busy: live && r.busy != null ? r.busy / n : null,
      backpressured: live && r.bp != null ? r.bp / n : null,
      watermark: opWatermark(o.subtasks),
    };
    metrics.set(o.id, m);
    const withState = o.subtasks.filter((s) => s.state_entries != null);
    rows.push(h('tr', { 'data-op-id': o.id },
      h('td', {}, h('div', { class: 'op-name', title: o.name }, o.name)),
      h('td', {}, h('code', {}, o.id)),
      h('td', { class: 'num' }, o.parallelism),
      h('td', { class: 'num' }, fmt.int(c.in)),
      h('td', { class: 'num' }, fmt.int(c.out)),
      h('td', { class: 'num' }, fmt.rate(m.inRate)),
      h('td', { class: 'num' }, fmt.rate(m.outRate)),
      h('td', { class: 'num' }, fmt.pct(m.busy)),
      h('td', { class: 'num' }, fmt.pct(m.backpressured)),
      h('td', { title: m.watermark || '' }, fmt.watermark(m.watermark)),
      h('td', { class: 'num' }, withState.length ? fmt.int(withState.reduce((s, st) => s + st.state_entries, 0)) : '–'),
      latencyCell(o.latency)));
  }
  $('operators').tBodies[0].replaceChildren(...rows);
  graph ||= new Graph($('graph'));
  graph.update(ops, metrics);
}

// latencyCell shows an operator's latency marker ages, one line per source
// operator ('metrics.latency.interval'; a dash without markers).
function latencyCell(hists) {
  if (!hists || !hists.length) return h('td', { class: 'num' }, '–');
  const lines = hists.map((l) => `${fmt.millis(l.p50_ms)} / ${fmt.millis(l.p99_ms)}`);
  const title = hists.map((l) => `from ${l.source}: ${fmt.int(l.count)} markers, mean ${fmt.millis(l.mean_ms)}, p99.9 ${fmt.millis(l.p999_ms)}, max ${fmt.millis(l.max_ms)}`);
  return h('td', { class: 'num', title: title.join('\n') }, lines.join(', '));
}

function renderCheckpointTable(history) {
  const recent = history.slice(-10).reverse();
  $('checkpoints').tBodies[0].replaceChildren(...recent.map((c) => h('tr', { class: c.status === 'COMPLETED' ? '' : 'failed' },
    h('td', { class: 'num' }, c.id),
    h('td', {}, c.savepoint ? `${c.status} (savepoint)` : c.status),
    h('td', {}, fmt.time(c.trigger_time)),
    h('td', { class: 'num' }, fmt.millis(c.duration_ms)),
    h('td', { class: 'num' }, fmt.millis(c.alignment_ms)),
    h('td', { class: 'num' }, c.size_bytes == null ? '–' : fmt.bytes(c.size_bytes)),
    h('td', { class: 'num' }, c.incremental_bytes == null ? '–' : fmt.bytes(c.incremental_bytes)),
    h('td', { class: 'failure' }, c.failure || ''))));
}

function renderExceptions(list) {
  $('exceptions').replaceChildren(...[...list].reverse().map((e) => h('li', { class: e.final ? 'final' : '' },
    h('div', { class: 'exc-head' }, fmt.time(e.time), ' ', e.final ? 'ended the job' : 'restarted the job'),
    h('pre', {}, e.message))));
  $('no-exceptions').hidden = list.length > 0;
}

// Stopping.

let stopping = false;
let pendingSavepoint = false;

function askStop(savepoint) {
  if (!current) return;
  pendingSavepoint = savepoint;
  setText('confirm-text', savepoint
    ? `Stop ${current.name} with a savepoint? Its state is written to a savepoint it can be restored from.`
    : `Stop ${current.name}? It stops without a savepoint.`);
  $('confirm-yes').textContent = savepoint ? 'Stop with savepoint' : 'Stop';
  $('confirm').hidden = false;
}

function hideConfirm() {
  $('confirm').hidden = true;
}

async function doStop() {
  if (!current || stopping) return;
  const { id, name } = current;
  hideConfirm();
  stopping = true;
  $('stop').disabled = $('stop-savepoint').disabled = true;
  const note = $('action-result');
  note.className = 'notice';
  note.textContent = pendingSavepoint ? `Stopping ${name} with a savepoint…` : `Stopping ${name}…`;
  note.hidden = false;
  try {
    const res = await api.stopJob(id, pendingSavepoint);
    note.textContent = res.savepoint ? `Stopped ${name}; savepoint ${res.savepoint}` : `Stopped ${name}.`;
  } catch (e) {
    note.className = 'notice error';
    note.textContent = `Could not stop ${name}: ${e.message}`;
  } finally {
    stopping = false;
    poll();
  }
}

// Polling.

let timer = 0;
let polling = false;
let again = false;

function setPollStatus(ok, msg) {
  const s = $('poll-status');
  s.textContent = msg;
  s.classList.toggle('error', !ok);
}

function showView() {
  const id = route();
  $('jobs-view').hidden = id !== '';
  $('job-view').hidden = id === '';
  if (!id) document.title = 'streamsql';
}

async function poll() {
  if (polling) {
    again = true;
    return;
  }
  clearTimeout(timer);
  polling = true;
  try {
    const t = performance.now();
    const id = route();
    const [list, job] = await Promise.all([
      api.listJobs(),
      id ? Promise.all([api.getJob(id), api.getCheckpoints(id), api.getExceptions(id)]).catch((e) => e) : null,
    ]);
    if (id !== route()) return; // the page moved on while waiting; the next poll draws it
    renderJobs(list.jobs, t);
    if (job instanceof api.ApiError && job.status === 404) {
      setPollStatus(false, `no job ${id}`);
      return;
    }
    if (job instanceof Error) throw job;
    if (job) renderJob(...job, t);
    setPollStatus(true, `updated ${new Date().toLocaleTimeString()}`);
  } catch (e) {
    setPollStatus(false, `API unreachable: ${e.message}`);
  } finally {
    polling = false;
    timer = setTimeout(poll, again ? 0 : POLL_MS);
    again = false;
  }
}

window.addEventListener('hashchange', () => {
  showView();
  poll();
});
$('stop').addEventListener('click', () => askStop(false));
$('stop-savepoint').addEventListener('click', () => askStop(true));
$('confirm-yes').addEventListener('click', doStop);
$('confirm-no').addEventListener('click', hideConfirm);
showView();
poll();
