// secho dashboard page: drives the JSON API (docs/API.md) and draws its own SVG charts.
// Every value from the API is written with textContent (never as HTML).
'use strict';

const PATHS = ['streaming', 'offload'];
const COLORS = { streaming: '#1f77b4', offload: '#e07b00' };
const SVGNS = 'http://www.w3.org/2000/svg';
const $ = (id) => document.getElementById(id);

async function api(method, url, body) {
  const opt = { method, headers: {} };
  if (body !== undefined) {
    opt.headers['Content-Type'] = 'application/json';
    opt.body = JSON.stringify(body);
  }
  const r = await fetch(url, opt);
  let j = null;
  try { j = await r.json(); } catch (e) { j = null; }
  if (!r.ok) {
    const msg = j && j.error ? j.error : r.status + ' ' + r.statusText;
    const err = new Error(msg);
    err.status = r.status;
    throw err;
  }
  return j;
}

function fmt(v, digits) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (typeof v !== 'number') return String(v);
  const d = digits === undefined ? (Math.abs(v) >= 100 ? 0 : 1) : digits;
  return v.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}
function fmtInt(v) { return fmt(v, 0); }
function get(o, path) {
  return path.split('.').reduce((x, k) => (x && typeof x === 'object' ? x[k] : undefined), o);
}

// ---- endpoint status ----

let busy = false;

function showStatus(st) {
  const pill = $('ep-status');
  if (st.busy && !st.namespaces_up && st.running) {
    pill.className = 'pill pill-busy'; pill.textContent = 'endpoint: busy (run in progress)';
  } else if (st.busy) {
    pill.className = 'pill pill-busy'; pill.textContent = 'endpoint: busy';
  } else if (st.running) {
    pill.className = 'pill pill-up';
    pill.textContent = 'endpoint: up' + (st.key_id !== null && st.key_id !== undefined ? ' · key id ' + st.key_id : '');
  } else {
    pill.className = 'pill pill-down'; pill.textContent = 'endpoint: down';
  }
  if (st.wire === 'virtual') {
    $('wire-desc').textContent = 'virtual wire: ns ' + st.host_ns + ' ' + st.host_iface + ' ' + st.host_ip +
      '  <== veth ==>  ns ' + st.endpoint_ns + ' ' + st.endpoint_iface + ' ' + st.endpoint_ip +
      ' (' + st.endpoint_mac + ')';
  } else if (st.wire === 'interface') {
    $('wire-desc').textContent = 'interface ' + st.iface + ': endpoint ' + st.endpoint_ip;
  }
}

async function refreshStatus() {
  try { showStatus(await api('GET', '/api/endpoint')); } catch (e) { /* shown on next action */ }
}

function setBusy(b) {
  busy = b;
  for (const id of ['run-btn', 'start-btn', 'stop-btn']) $(id).disabled = b;
}

function setProgress(frac, text) {
  $('progress-bar').style.width = Math.round(Math.max(0, Math.min(1, frac)) * 100) + '%';
  $('progress-text').textContent = text;
}

async function endpointAction(what) {
  setBusy(true);
  setProgress(0.3, what === 'start' ? 'starting the endpoint…' : 'stopping the endpoint…');
  $('run-error').textContent = '';
  try {
    showStatus(await api('POST', '/api/endpoint/' + what));
    setProgress(1, what === 'start' ? 'endpoint up' : 'endpoint stopped');
  } catch (e) {
    $('run-error').textContent = e.message;
    setProgress(0, 'failed');
  }
  setBusy(false);
}

// ---- runs ----

const PHASE_TEXT = {
  queued: 'queued', endpoint: 'starting the endpoint and waiting for the link',
  paired: 'paired run: alternating both paths, verifying every response',
  load: 'load run: sustained traffic on both paths', counters: 'fetching the encrypted counters',
  done: 'done',
};

async function startRun() {
  const count = parseInt($('p-count').value, 10);
  const sizeSel = $('p-size').value;
  const load = parseInt($('p-load').value, 10);
  const body = { count, size: sizeSel === 'random' ? 'random' : parseInt(sizeSel, 10), load_seconds: load };
  setBusy(true);
  $('run-error').textContent = '';
  $('verdict').textContent = '';
  $('load-verdict').textContent = '';
  setProgress(0.01, 'starting…');
  let run;
  try {
    run = await api('POST', '/api/runs', body);
  } catch (e) {
    $('run-error').textContent = e.message;
    setProgress(0, 'refused');
    setBusy(false);
    return;
  }
  const t0 = Date.now();
  // Poll (bounded: 10 minutes) until the run leaves "running".
  while (Date.now() - t0 < 600000) {
    let r;
    try { r = await api('GET', '/api/runs/' + run.id); } catch (e) { r = null; }
    if (r) {
      setProgress(r.progress, 'run ' + r.id + ': ' + (PHASE_TEXT[r.phase] || r.phase));
      if (r.state !== 'running') { render(r); break; }
    }
    await new Promise((res) => setTimeout(res, 300));
  }
  setBusy(false);
  refreshStatus();
}

// ---- rendering ----

function kvRows(tbody, rows) {
  tbody.replaceChildren();
  for (const [k, v] of rows) {
    const tr = document.createElement('tr');
    const a = document.createElement('td'); a.textContent = k;
    const b = document.createElement('td'); b.textContent = v;
    tr.append(a, b);
    tbody.append(tr);
  }
}

function render(run) {
  const res = run.results || {};
  const paired = res.paired || {};
  const sum = run.summary;
  if (run.state === 'failed') {
    $('run-error').textContent = run.error || 'run failed';
    setProgress(1, 'run ' + run.id + ' failed');
  } else if (run.error) {
    $('run-error').textContent = run.error;
  }
  if (sum) {
    $('verified-total').textContent = sum.text;
    const v = $('verdict');
    v.textContent = sum.pass ? 'PASS: every response verified' : 'FAIL: see the per-path counts';
    v.className = 'verdict ' + (sum.pass ? 'ok' : 'bad');
    const ratio = sum.latency_ratio;
    $('ratio').textContent = typeof ratio === 'number'
      ? 'endpoint latency offload / streaming: ' + fmt(ratio, 1) + '×' : '';
    const lt = res.load && res.load.totals;
    if (lt) {
      const sumOf = (k) => PATHS.reduce((acc, p) => acc + (get(lt, p + '.' + k) || 0), 0);
      const lf = sumOf('failed');
      const lv = $('load-verdict');
      lv.textContent = 'load run: ' + fmtInt(sumOf('verified')) + ' verified, ' + fmtInt(sumOf('lost')) +
        ' lost (engine saturation), ' + fmtInt(lf) + ' failed verification';
      lv.className = 'load-verdict ' + (lf ? 'bad' : '');
    }
    setProgress(1, 'run ' + run.id + ' done');
  }
  for (const p of PATHS) {
    const x = get(paired, 'paths.' + p) || {};
    const el = $('path-' + p);
    const ps = sum && sum.paths ? sum.paths[p] : null;
    const pv = el.querySelector('.path-verified');
    pv.textContent = ps ? ps.verified + ' / ' + ps.sent + ' verified' : '–';
    pv.className = 'path-verified ' + (ps && ps.sent > 0 && ps.verified === ps.sent ? 'ok' : 'bad');
    const rtt = x.host_rtt_us || {};
    const ep = x.endpoint || {};
    const lat = ep.latency_ns || {};
    kvRows(el.querySelector('tbody'), [
      ['payload hash / ciphertext hash / tag', fmtInt(x.payload_hash_match) + ' / ' + fmtInt(x.ciphertext_hash_match) + ' / ' + fmtInt(x.tag_match)],
      ['answered · lost · late · failed', fmtInt(x.answered) + ' · ' + fmtInt(x.lost) + ' · ' + fmtInt(x.late) + ' · ' + fmtInt(x.failed)],
      ['host RTT µs  min / p50 / p99 / max', fmt(rtt.min) + ' / ' + fmt(rtt.p50) + ' / ' + fmt(rtt.p99) + ' / ' + fmt(rtt.max)],
      ['host RTT µs  mean', fmt(rtt.mean)],
      ['endpoint latency ns  p50 / p99', fmtInt(lat.p50) + ' / ' + fmtInt(lat.p99)],
      ['endpoint latency  mean (cycles)', fmtInt(lat.mean) + ' ns (' + fmtInt(get(ep, 'latency_cycles.mean')) + ')'],
      ['headroom', fmtInt(ep.headroom_pps) + ' packets/s'],
      ['load run verified', res.load ? fmtInt(get(res.load, 'totals.' + p + '.verified_pps')) + ' packets/s' : '–'],
      ['load run sent · lost · failed', res.load ? fmtInt(get(res.load, 'totals.' + p + '.sent')) + ' · ' +
        fmtInt(get(res.load, 'totals.' + p + '.lost')) + ' · ' + fmtInt(get(res.load, 'totals.' + p + '.failed')) : '–'],
    ]);
  }
  drawRtt(paired);
  drawLatency(paired, res.counters);
  drawLoad(res.load);
  renderCounters(res.counters || (paired.counters ? { report: paired.counters } : null), paired);
}

// The cost table comes from the report fetched at the end of the run (after the load run);
// latency and headroom rows prefer the paired run's figures (one packet in flight: the
// engine's own cost, not queueing under saturation).
function renderCounters(c, paired) {
  const rep = c && c.report ? c.report : null;
  const epOf = (p, key) => {
    const v = get(paired, 'paths.' + p + '.endpoint.' + key);
    return typeof v === 'number' ? v : get(rep, 'engines.' + p + '.' + key);
  };
  const cost = $('cost-table').querySelector('tbody');
  const rows = [
    ['data-path CPU cycles / packet', 'cost.datapath_cycles_per_pkt'],
    ['engine-thread cycles / packet', 'cost.engine_cycles_per_pkt'],
    ['bytes of key state', 'cost.key_state_bytes'],
    ['staging memory (bytes)', 'cost.staging_bytes'],
    ['endpoint latency p50, paired run (cycles)', 'latency_cycles.p50'],
    ['headroom, paired run (packets/s)', 'headroom_pps'],
    ['packets answered', 'packets'],
    ['backend', 'backend'],
  ];
  cost.replaceChildren();
  for (const [label, key] of rows) {
    const tr = document.createElement('tr');
    const td0 = document.createElement('td'); td0.textContent = label; tr.append(td0);
    const vals = PATHS.map((p) => (key.startsWith('latency') || key === 'headroom_pps'
      ? epOf(p, key) : get(rep, 'engines.' + p + '.' + key)));
    for (const v of vals) {
      const td = document.createElement('td');
      td.textContent = v === undefined ? (key === 'backend' ? 'inline' : '–') : (typeof v === 'number' ? fmtInt(v) : String(v));
      tr.append(td);
    }
    const td = document.createElement('td');
    td.textContent = typeof vals[0] === 'number' && typeof vals[1] === 'number' && vals[0] > 0
      ? fmt(vals[1] / vals[0], 2) + '×' : '–';
    tr.append(td);
    cost.append(tr);
  }
  const ct = $('counters-table').querySelector('tbody');
  kvRows(ct, rep ? [
    ['uptime', fmt(rep.uptime_s) + ' s'],
    ['rx frames / tx frames', fmtInt(rep.rx_frames) + ' / ' + fmtInt(rep.tx_frames)],
    ['sequence high-water', fmtInt(rep.seq_high_water)],
    ['packet I/O', rep.io ? rep.io.split(/[;(]/)[0].trim() : '–'],
  ] : [['report', 'not fetched']]);
  $('counters-sealed').textContent = c && c.verified
    ? '(report verified and decrypted; sealed by the ' + c.sealed_by + ' engine, seq ' + c.seq + ')' : '';
  const dt = $('drops-table').querySelector('tbody');
  const drops = rep && rep.drops ? Object.entries(rep.drops) : [];
  const nz = drops.filter(([, v]) => v);
  kvRows(dt, nz.length ? nz.map(([k, v]) => [k, fmtInt(v)])
    : [[drops.length ? 'none (' + drops.length + ' reasons counted)' : '–', '0']]);
}

// ---- SVG helpers ----

function el(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function frame(svg, W, H, m) {
  svg.replaceChildren();
  return { x0: m.l, x1: W - m.r, y0: H - m.b, y1: m.t };
}

function empty(svg, W, H, text) {
  svg.replaceChildren(el('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', class: 'empty' }, text));
}

function niceTicks(lo, hi, n) {
  const span = hi - lo || 1;
  const step0 = span / n;
  const mag = Math.pow(10, Math.floor(Math.log10(step0)));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= step0) || mag * 10;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(v);
  return out;
}

function legend(svg, x, y) {
  PATHS.forEach((p, i) => {
    svg.append(el('rect', { x: x + i * 100, y: y - 9, width: 10, height: 10, fill: COLORS[p] }));
    svg.append(el('text', { x: x + i * 100 + 14, y }, p));
  });
}

// CDF through the summary points (min,0) (p50,.5) (p99,.99) (max,1), linear in log(x)
// between them: the host tool reports these quantiles, not every sample, so the histogram
// is an estimate from them (an exact one is drawn when host_rtt_us.histogram is present).
function cdfFrom(r) {
  const pts = [[r.min, 0], [r.p50, 0.5], [r.p99, 0.99], [r.max, 1]].map(([x, y]) => [Math.log(Math.max(x, 1e-3)), y]);
  return (x) => {
    const lx = Math.log(Math.max(x, 1e-3));
    if (lx <= pts[0][0]) return 0;
    for (let i = 1; i < pts.length; i++) {
      if (lx <= pts[i][0]) {
        const [xa, ya] = pts[i - 1], [xb, yb] = pts[i];
        return xb > xa ? ya + (yb - ya) * (lx - xa) / (xb - xa) : yb;
      }
    }
    return 1;
  };
}

// Round trips span decades (a few µs to many ms), so the bins are log-spaced.
function drawRtt(paired) {
  const svg = $('rtt-chart'), W = 600, H = 260;
  const data = PATHS.map((p) => ({ p, r: get(paired, 'paths.' + p + '.host_rtt_us'), n: get(paired, 'paths.' + p + '.answered') || 0 }))
    .filter((d) => d.r && typeof d.r.min === 'number' && d.r.min > 0);
  if (!data.length) { empty(svg, W, H, 'no round trips yet: press Run'); return; }
  const exact = data.every((d) => Array.isArray(d.r.histogram));
  const f = frame(svg, W, H, { l: 48, r: 12, t: 24, b: 34 });
  const NB = 40;
  const lo = Math.log10(Math.min(...data.map((d) => d.r.min)) * 0.95);
  let hi = Math.log10(Math.max(...data.map((d) => d.r.max)) * 1.05);
  if (!(hi > lo)) hi = lo + 1;
  const edge = (i) => Math.pow(10, lo + (hi - lo) * i / NB);
  const series = data.map((d) => {
    const counts = new Array(NB).fill(0);
    if (exact) {
      for (const b of d.r.histogram) {
        const i = Math.floor((Math.log10(Math.max(b.le, 1e-3)) - lo) / (hi - lo) * NB);
        counts[Math.min(NB - 1, Math.max(0, i))] += b.count;
      }
    } else {
      const F = cdfFrom(d.r);
      for (let i = 0; i < NB; i++) counts[i] = (F(edge(i + 1)) - F(edge(i))) * d.n;
    }
    return { p: d.p, counts };
  });
  const ymax = Math.max(1, ...series.flatMap((s) => s.counts));
  const X = (v) => f.x0 + (Math.log10(v) - lo) / (hi - lo) * (f.x1 - f.x0);
  const Y = (v) => f.y0 - v / (ymax * 1.05) * (f.y0 - f.y1);
  for (const t of niceTicks(0, ymax, 4)) {
    svg.append(el('line', { x1: f.x0, x2: f.x1, y1: Y(t), y2: Y(t), class: 'gridline' }));
    svg.append(el('text', { x: f.x0 - 6, y: Y(t) + 4, 'text-anchor': 'end' }, fmtInt(t)));
  }
  const slot = (f.x1 - f.x0) / NB;
  series.forEach((s, k) => {
    s.counts.forEach((c, i) => {
      if (c < 0.05) return;
      svg.append(el('rect', {
        x: f.x0 + i * slot + 0.5 + k * (slot - 1) / 2, y: Y(c), width: Math.max(1, (slot - 1) / 2),
        height: Math.max(0.5, f.y0 - Y(c)), fill: COLORS[s.p], class: 'bar bar-' + s.p,
      }));
    });
    // p50 marker per path.
    const r = data[k].r;
    svg.append(el('line', { x1: X(r.p50), x2: X(r.p50), y1: f.y1, y2: f.y0, stroke: COLORS[s.p], 'stroke-dasharray': '4 3', class: 'marker' }));
    svg.append(el('text', { x: X(r.p50) + 3, y: f.y1 + 12 + 12 * k, fill: COLORS[s.p] }, 'p50 ' + fmt(r.p50)));
  });
  svg.append(el('line', { x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, class: 'axis' }));
  svg.append(el('line', { x1: f.x0, x2: f.x0, y1: f.y0, y2: f.y1, class: 'axis' }));
  for (let d = Math.pow(10, Math.ceil(lo)); d <= Math.pow(10, hi); d *= 10) {
    for (const m of [1, 2, 5]) {
      const v = d * m;
      if (Math.log10(v) > hi) break;
      svg.append(el('line', { x1: X(v), x2: X(v), y1: f.y0, y2: f.y0 + 4, class: 'axis' }));
      svg.append(el('text', { x: X(v), y: f.y0 + 15, 'text-anchor': 'middle' }, v >= 1000 ? v / 1000 + ' ms' : v + ' µs'));
    }
  }
  svg.append(el('text', { x: (f.x0 + f.x1) / 2, y: H - 4, 'text-anchor': 'middle' }, 'round trip (log scale)'));
  svg.append(el('text', { x: 8, y: 14 }, 'packets'));
  legend(svg, f.x1 - 200, 16);
  $('rtt-note').textContent = exact ? 'histogram from the host tool\'s samples'
    : 'density estimated from each path\'s min / p50 / p99 / max (the host tool reports quantiles, not samples)';
}

function drawLatency(paired, counters) {
  const svg = $('latency-chart'), W = 600, H = 260;
  const keys = ['min', 'p50', 'mean', 'p99', 'max'];
  const lat = PATHS.map((p) => get(paired, 'paths.' + p + '.endpoint.latency_ns') ||
    get(counters, 'report.engines.' + p + '.latency_ns'));
  if (!lat.some((l) => l && typeof l.p50 === 'number')) { empty(svg, W, H, 'no endpoint latency yet'); return; }
  const f = frame(svg, W, H, { l: 52, r: 12, t: 24, b: 34 });
  const vals = lat.flatMap((l) => (l ? keys.map((k) => l[k]).filter((v) => typeof v === 'number' && v > 0) : []));
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...vals))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...vals) * 1.01)));
  const Y = (v) => f.y0 - (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) * (f.y0 - f.y1);
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    svg.append(el('line', { x1: f.x0, x2: f.x1, y1: Y(d), y2: Y(d), class: 'gridline' }));
    svg.append(el('text', { x: f.x0 - 6, y: Y(d) + 4, 'text-anchor': 'end' }, d >= 1000000 ? d / 1e6 + ' ms' : d >= 1000 ? d / 1000 + ' µs' : d + ' ns'));
  }
  const gw = (f.x1 - f.x0) / keys.length;
  keys.forEach((k, i) => {
    PATHS.forEach((p, j) => {
      const v = lat[j] ? lat[j][k] : undefined;
      if (typeof v !== 'number' || v <= 0) return;
      const x = f.x0 + i * gw + gw * 0.18 + j * gw * 0.32;
      svg.append(el('rect', { x, y: Y(v), width: gw * 0.3, height: Math.max(0.5, f.y0 - Y(v)), fill: COLORS[p], class: 'bar bar-' + p }));
      svg.append(el('text', { x: x + gw * 0.15, y: Y(v) - 3, 'text-anchor': 'middle' }, fmtInt(v)));
    });
    svg.append(el('text', { x: f.x0 + i * gw + gw / 2, y: f.y0 + 14, 'text-anchor': 'middle' }, k));
  });
  svg.append(el('line', { x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, class: 'axis' }));
  svg.append(el('text', { x: 8, y: 14 }, 'ns'));
  legend(svg, f.x1 - 200, 16);
}

function drawLoad(load) {
  const svg = $('load-chart'), W = 1220, H = 260;
  const per = load && Array.isArray(load.per_second) ? load.per_second : [];
  if (!per.length) { empty(svg, W, H, load ? 'load run produced no per-second samples' : 'no load run (load seconds = 0, or not run yet)'); $('load-note').textContent = ''; return; }
  const f = frame(svg, W, H, { l: 64, r: 16, t: 24, b: 34 });
  const secs = Math.max(...per.map((s) => s.second));
  const ymax = Math.max(1, ...per.map((s) => Math.max(s.verified, s.offered || 0)));
  const X = (s) => f.x0 + (secs > 1 ? (s - 1) / (secs - 1) : 0.5) * (f.x1 - f.x0);
  const Y = (v) => f.y0 - v / (ymax * 1.1) * (f.y0 - f.y1);
  for (const t of niceTicks(0, ymax * 1.1, 4)) {
    svg.append(el('line', { x1: f.x0, x2: f.x1, y1: Y(t), y2: Y(t), class: 'gridline' }));
    svg.append(el('text', { x: f.x0 - 6, y: Y(t) + 4, 'text-anchor': 'end' }, fmtInt(t)));
  }
  for (let s = 1; s <= secs; s++) {
    svg.append(el('text', { x: X(s), y: f.y0 + 14, 'text-anchor': 'middle' }, String(s)));
  }
  for (const p of PATHS) {
    const pts = per.filter((s) => s.path === p).sort((a, b) => a.second - b.second);
    if (!pts.length) continue;
    const d = pts.map((s, i) => (i ? 'L' : 'M') + X(s.second).toFixed(1) + ' ' + Y(s.verified).toFixed(1)).join(' ');
    svg.append(el('path', { d, fill: 'none', stroke: COLORS[p], 'stroke-width': 2.5, class: 'line line-' + p }));
    for (const s of pts) svg.append(el('circle', { cx: X(s.second), cy: Y(s.verified), r: 3.5, fill: COLORS[p], class: 'pt' }));
  }
  svg.append(el('line', { x1: f.x0, x2: f.x1, y1: f.y0, y2: f.y0, class: 'axis' }));
  svg.append(el('line', { x1: f.x0, x2: f.x0, y1: f.y0, y2: f.y1, class: 'axis' }));
  svg.append(el('text', { x: (f.x0 + f.x1) / 2, y: H - 4, 'text-anchor': 'middle' }, 'second of the load run'));
  svg.append(el('text', { x: 8, y: 14 }, 'verified pps'));
  legend(svg, f.x1 - 200, 16);
  const t = load.totals || {};
  $('load-note').textContent = PATHS.filter((p) => t[p]).map((p) => p + ': ' + fmtInt(t[p].verified) + ' verified of ' +
    fmtInt(t[p].sent) + ' sent, ' + fmtInt(t[p].lost) + ' lost, ' + fmtInt(t[p].verified_pps) + ' pps').join(' · ') +
    ' (window ' + load.window + ', ' + load.mode + ' mode)';
}

// ---- start-up ----

async function init() {
  $('run-btn').addEventListener('click', () => { if (!busy) startRun(); });
  $('start-btn').addEventListener('click', () => { if (!busy) endpointAction('start'); });
  $('stop-btn').addEventListener('click', () => { if (!busy) endpointAction('stop'); });
  drawRtt({}); drawLatency({}, null); drawLoad(null); renderCounters(null, null);
  await refreshStatus();
  setInterval(() => { if (!busy) refreshStatus(); }, 5000);
  // Show the latest finished run, if any.
  try {
    const l = await api('GET', '/api/runs');
    const last = (l.runs || []).find((r) => r.state !== 'running');
    if (last) render(await api('GET', '/api/runs/' + last.id));
  } catch (e) { /* nothing yet */ }
}

init();
