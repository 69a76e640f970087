/* The cutover dashboard: plain browser JavaScript, no build step, nothing from the network but
 * this shim's own JSON. Every value from the API goes into the page as text, never as markup.
 * Times are shown in the viewer's time zone. */
/* global document, window, location, fetch, Node, URL, URLSearchParams, setTimeout, clearTimeout */

const SVG = 'http://www.w3.org/2000/svg';
const WIRES = ['sep2663', 'mcp-2025-11-25', 'tasks-create', 'passthrough'];
const WIRE_LABEL = {
  sep2663: 'SEP-2663 (new)',
  'mcp-2025-11-25': 'MCP 2025-11-25 tasks (old)',
  'tasks-create': 'tasks/create dialect (old)',
  passthrough: 'Old-API passthrough',
};
const SHORT_LABEL = { sep2663: 'sep2663', 'mcp-2025-11-25': '2025-11-25', 'tasks-create': 'tasks/create', passthrough: 'passthrough' };
const OUTCOMES = ['completed', 'failed', 'cancelled', 'expired'];
const LEGACY_LABEL = {
  on: 'On: both old wires served',
  drain: 'Drain: old-API task creation refused',
  off: 'Off: old-API task requests refused (HTTP 410)',
};

const params = new URLSearchParams(location.search);
const state = {
  range: ['1h', '24h', '7d', '30d'].includes(params.get('range')) ? params.get('range') : '24h',
  refreshMs: Math.max(1000, Number(params.get('refresh')) || 5000),
  timer: undefined,
  last: undefined,
};
const api = new URL('dashboard/api/', location.href);
const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
const fmt = {
  time: new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' }),
  hm: new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' }),
  day: new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' }),
  dayHour: new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit' }),
  short: new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' }),
  full: new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' }),
  int: new Intl.NumberFormat(undefined),
  pct: new Intl.NumberFormat(undefined, { style: 'percent', maximumFractionDigits: 1 }),
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== undefined && child !== null) node.append(child);
  return node;
}

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function when(iso) {
  return iso ? fmt.full.format(new Date(iso)) : '—';
}

/** A compact time for table cells; the full one (with the zone) in its tooltip. */
function stamp(iso) {
  return iso ? el('time', { datetime: iso, title: when(iso), text: fmt.short.format(new Date(iso)) }) : '—';
}

function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  return `${duration(now - new Date(iso).getTime())} ago`;
}

function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h} h`;
  return `${Math.round(h / 24)} days`;
}

function ms(value) {
  if (value === null || value === undefined) return '—';
  if (value < 1000) return `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
  if (value < 60_000) return `${(value / 1000).toFixed(value < 10_000 ? 2 : 1)} s`;
  return duration(value);
}

function pct(value) {
  return value === null || value === undefined ? '—' : fmt.pct.format(value);
}

function chip(wire) {
  return el('span', { class: `chip fill-${wire}`, text: SHORT_LABEL[wire] ?? wire, title: WIRE_LABEL[wire] ?? wire });
}

function row(cells, attrs = {}) {
  const tr = el('tr', attrs);
  for (const [label, content, cls] of cells) {
    const td = el('td', { 'data-label': label, class: cls });
    if (content instanceof Node) td.append(content);
    else td.textContent = content;
    tr.append(td);
  }
  return tr;
}

function fillTable(id, rows, empty) {
  const body = $(id).tBodies[0];
  const columns = $(id).tHead.rows[0].cells.length;
  body.replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { class: 'empty', colspan: String(columns), text: empty }))]));
}

/* ---- rendering ---- */

function renderVerdict(verdict) {
  const card = $('verdict');
  card.dataset.state = verdict.state;
  $('verdict-badge').textContent = { ready: 'Ready', waiting: 'Not yet', blocked: 'Blocked' }[verdict.state];
  const quiet = duration(verdict.quietPeriodMs);
  const list = $('verdict-clients');
  list.replaceChildren();
  if (verdict.state === 'ready') {
    $('verdict-headline').textContent = 'The old API can be switched off.';
    $('verdict-detail').textContent = verdict.lastOldApiAt
      ? `No old-API traffic for ${duration(Date.now() - new Date(verdict.lastOldApiAt).getTime())} (last: ${when(verdict.lastOldApiAt)}); the quiet period is ${quiet}.`
      : `No old-API traffic since recording began (${when(verdict.observingSince)}); the quiet period is ${quiet}.`;
  } else if (verdict.state === 'waiting') {
    $('verdict-headline').textContent = 'No old-API traffic so far — keep watching.';
    $('verdict-detail').textContent = `Recording began ${when(verdict.observingSince)}; a quiet period of ${quiet} ends ${when(verdict.readyAt)}.`;
  } else {
    const n = verdict.clients.length;
    $('verdict-headline').textContent = `${n} client${n === 1 ? '' : 's'} still on the old API.`;
    $('verdict-detail').textContent = `Old-API traffic ${ago(verdict.lastOldApiAt)}. Ready ${when(verdict.readyAt)} at the earliest, after ${quiet} without any.`;
    const ul = el('ul', { class: 'holding' });
    for (const client of verdict.clients) {
      ul.append(
        el(
          'li',
          { 'data-client': client.name },
          el('span', { class: 'who', text: `${client.name} ${client.version} · ${client.principal}` }),
          el('span', { class: 'when', title: when(client.lastSeenOld), text: `last seen ${ago(client.lastSeenOld)}` }),
        ),
      );
    }
    list.append(ul);
  }
}

function renderCutover(cutover) {
  const dl = $('cutover');
  const entries = [];
  const code = (text) => el('code', { text });
  const announced = (at, header) => el('span', {}, el('span', { class: 'block', text: when(at) }), code(header));
  entries.push(['Deprecation', cutover.deprecation ? announced(cutover.deprecation.at, `Deprecation: ${cutover.deprecation.header}`) : 'not announced']);
  entries.push(['Sunset', cutover.sunset ? announced(cutover.sunset.at, `Sunset: ${cutover.sunset.header}`) : 'not announced']);
  entries.push([
    'Migration guide',
    cutover.migrationGuideUrl ? el('a', { href: cutover.migrationGuideUrl, rel: 'noreferrer', target: '_blank', text: cutover.migrationGuideUrl }) : 'none linked',
  ]);
  const legacy = cutover.legacy;
  const since = cutover.legacyHistory.at(-1);
  entries.push([
    'Legacy API',
    el(
      'span',
      {},
      el('span', { class: `pill ${legacy === 'on' ? '' : 'on'}`, id: 'legacy-state', 'data-mode': legacy, text: LEGACY_LABEL[legacy] }),
      cutover.legacyHistory.length > 1 ? el('span', { class: 'block muted small', text: `since ${when(since.at)}` }) : undefined,
    ),
  ]);
  entries.push([
    'Drain mode',
    el('span', { class: `pill ${cutover.drain ? 'on' : ''}`, id: 'drain-state', text: cutover.drain ? 'On: old-API task creation refused' : 'Off' }),
  ]);
  const brownout = cutover.brownout;
  let brownoutNode;
  if (brownout.active) brownoutNode = el('span', { class: 'pill on', text: `Active until ${when(brownout.active.end)}` });
  else if (brownout.next) brownoutNode = el('span', { class: 'pill soon', text: `Next: ${when(brownout.next.start)} → ${fmt.hm.format(new Date(brownout.next.end))}` });
  else brownoutNode = el('span', { class: 'pill', text: brownout.windows.length ? 'No window ahead' : 'None scheduled' });
  entries.push(['Brownout', brownoutNode]);
  entries.push(['Quiet period', duration(cutover.quietPeriodMs)]);
  dl.replaceChildren(...entries.flatMap(([term, value]) => [el('dt', { text: term }), el('dd', {}, value)]));
}

function renderKpis(overview) {
  const { traffic, clients, latency } = overview;
  $('kpi-requests').textContent = fmt.int.format(traffic.requests.total);
  $('kpi-requests-sub').textContent = `${fmt.int.format(traffic.requests.old)} old · ${fmt.int.format(traffic.requests.new)} new`;
  $('kpi-share').textContent = pct(traffic.requests.newShare);
  $('kpi-share-sub').textContent = `task creations: ${pct(traffic.taskCreations.newShare)} new`;
  $('kpi-tasks').textContent = fmt.int.format(traffic.taskCreations.total);
  $('kpi-tasks-sub').textContent = `${fmt.int.format(traffic.taskCreations.old)} old · ${fmt.int.format(traffic.taskCreations.new)} new`;
  const old = clients.filter((c) => c.oldCalls > 0);
  $('kpi-old-clients').textContent = fmt.int.format(old.length);
  $('kpi-old-clients-sub').textContent = `of ${fmt.int.format(clients.length)} clients in range`;
  const calls = latency.byWire.reduce((n, w) => n + w.calls, 0);
  const errors = latency.byWire.reduce((n, w) => n + w.errors, 0);
  $('kpi-errors').textContent = calls ? pct(errors / calls) : '—';
  $('kpi-errors-sub').textContent = `${fmt.int.format(errors)} error${errors === 1 ? '' : 's'} of ${fmt.int.format(calls)} requests`;
}

function renderShare(id, share) {
  const bar = $(`sharebar-${id}`);
  bar.replaceChildren();
  for (const wire of WIRES) {
    if (!share.total || !share.byWire[wire]) continue;
    const part = el('span', { class: `fill-${wire}`, title: `${WIRE_LABEL[wire]}: ${fmt.int.format(share.byWire[wire])}` });
    part.style.width = `${(share.byWire[wire] / share.total) * 100}%`;
    bar.append(part);
  }
  $(`share-${id}`).textContent = share.total ? `${pct(share.newShare)} new · ${pct(share.old / share.total)} old` : 'no traffic';
}

function tickLabel(iso, range) {
  const date = new Date(iso);
  if (range === '1h' || range === '24h') return fmt.hm.format(date);
  if (range === '7d') return fmt.dayHour.format(date);
  return fmt.day.format(date);
}

/** A y-axis of at most five whole steps of 1, 2 or 5 × 10^k that holds `value`. */
function niceScale(value) {
  if (value <= 4) return { max: 4, steps: 4 };
  for (let pow = 1; ; pow *= 10) {
    for (const step of [1, 2, 5].map((s) => s * pow)) {
      const steps = Math.ceil(value / step);
      if (steps <= 5) return { max: steps * step, steps };
    }
  }
}

/** The legacy mode's changes as marks on a chart: the first entry is the mode at start, marked only when it is not `on`. */
function legacyMarks(history) {
  return history.filter((change, i) => i > 0 || change.mode !== 'on');
}

function renderChart(id, series, key, range, stepMs, marks = []) {
  const host = $(`chart-${id}`);
  const width = Math.max(280, host.clientWidth || 600);
  const height = 220;
  const pad = { left: 40, right: 8, top: 10, bottom: 26 };
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const totals = series.map((p) => WIRES.reduce((n, w) => n + p[key][w], 0));
  const total = totals.reduce((a, b) => a + b, 0);
  const { max, steps } = niceScale(Math.max(...totals, 0));
  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': `${id} per ${duration(stepMs)}, by wire`, 'data-total': total });

  for (let i = 0; i <= steps; i++) {
    const y = pad.top + plotH - (plotH * i) / steps;
    root.append(svg('line', { class: i === 0 ? 'axis' : 'grid-line', x1: pad.left, x2: width - pad.right, y1: y, y2: y }));
    root.append(svg('text', { class: 'tick', x: pad.left - 6, y: y + 4, 'text-anchor': 'end' }, fmt.int.format((max * i) / steps)));
  }
  const slot = plotW / Math.max(1, series.length);
  const barW = Math.max(1, slot * 0.72);
  series.forEach((point, i) => {
    let y = pad.top + plotH;
    const x = pad.left + i * slot + (slot - barW) / 2;
    for (const wire of WIRES) {
      const value = point[key][wire];
      if (!value) continue;
      const h = (value / max) * plotH;
      y -= h;
      const rect = svg('rect', { class: `fill-${wire}`, x, y, width: barW, height: Math.max(h, 0.5), rx: Math.min(2, barW / 3), 'data-wire': wire, 'data-value': value });
      rect.append(svg('title', {}, `${tickLabel(point.t, range)} · ${WIRE_LABEL[wire]}: ${fmt.int.format(value)}`));
      root.append(rect);
    }
  });
  const labels = Math.min(series.length, Math.max(2, Math.floor(plotW / 90)));
  for (let j = 0; j < labels; j++) {
    const i = Math.round((j * (series.length - 1)) / Math.max(1, labels - 1));
    const point = series[i];
    if (!point) continue;
    const x = pad.left + i * slot + slot / 2;
    const anchor = j === 0 ? 'start' : j === labels - 1 ? 'end' : 'middle';
    root.append(svg('text', { class: 'tick', x: j === 0 ? pad.left : j === labels - 1 ? width - pad.right : x, y: height - 8, 'text-anchor': anchor }, tickLabel(point.t, range)));
  }
  const start = series.length ? Date.parse(series[0].t) : 0;
  for (const mark of marks) {
    const offset = (Date.parse(mark.at) - start) / stepMs;
    if (!series.length || offset < 0 || offset > series.length) continue;
    const x = pad.left + offset * slot;
    const line = svg('line', { class: `mark mark-${mark.mode}`, x1: x, x2: x, y1: pad.top, y2: pad.top + plotH, 'data-mode': mark.mode });
    line.append(svg('title', {}, `${when(mark.at)} · legacy API ${mark.mode}`));
    root.append(line);
    // Near the right edge the label goes to the line's left, so that it stays inside the chart.
    const left = x > pad.left + plotW / 2;
    root.append(svg('text', { class: 'mark-label', x: left ? x - 3 : x + 3, y: pad.top + 10, 'text-anchor': left ? 'end' : 'start' }, `legacy ${mark.mode}`));
  }
  if (total === 0) root.append(svg('text', { class: 'empty', x: pad.left + plotW / 2, y: pad.top + plotH / 2, 'text-anchor': 'middle' }, 'No traffic in this range'));
  host.replaceChildren(root);
}

function renderLegend() {
  $('legend').replaceChildren(...WIRES.map((wire) => el('li', {}, el('span', { class: `swatch fill-${wire}` }), WIRE_LABEL[wire])));
}

function renderClients(clients) {
  const rows = clients.map((c) =>
    row(
      [
        ['Client', c.name, 'name'],
        ['Version', c.version],
        ['Principal', c.principal],
        ['Wires', el('span', {}, ...c.wires.map(chip))],
        ['Calls', fmt.int.format(c.calls), 'num'],
        ['Old-API calls', fmt.int.format(c.oldCalls), 'num'],
        ['Error rate', el('span', { class: c.errorRate > 0.05 ? 'rate-bad' : '', text: pct(c.errorRate) }), 'num'],
        ['First seen on old API', stamp(c.firstSeenOld)],
        ['Last seen on old API', stamp(c.lastSeenOld)],
        ['Last seen on new API', stamp(c.lastSeenNew)],
      ],
      { class: c.oldCalls > 0 ? 'old-api' : '', 'data-client': c.name },
    ),
  );
  fillTable('clients', rows, 'No clients in this range.');
}

function outcomeBar(t) {
  const open = Math.max(0, t.created - t.completed - t.failed - t.cancelled - t.expired);
  const total = t.completed + t.failed + t.cancelled + t.expired + open;
  const bar = el('span', { class: 'outcomes', title: `completed ${t.completed} · failed ${t.failed} · cancelled ${t.cancelled} · expired ${t.expired} · open ${open}` });
  for (const [name, value] of [...OUTCOMES.map((o) => [o, t[o]]), ['open', open]]) {
    if (!value || !total) continue;
    const part = el('span', { class: `fill-${name}` });
    part.style.width = `${(value / total) * 100}%`;
    bar.append(part);
  }
  return bar;
}

function renderTasks(tasks) {
  fillTable(
    'tasks-wire',
    tasks.byWire.map((t) =>
      row(
        [
          ['Wire', chip(t.wire)],
          ['Outcomes', outcomeBar(t)],
          ['Created', fmt.int.format(t.created), 'num'],
          ['Completed', fmt.int.format(t.completed), 'num'],
          ['Failed', fmt.int.format(t.failed), 'num'],
          ['Cancelled', fmt.int.format(t.cancelled), 'num'],
          ['Expired', fmt.int.format(t.expired), 'num'],
          ['p50 to end', ms(t.timeToTerminalMs.p50), 'num'],
          ['p95 to end', ms(t.timeToTerminalMs.p95), 'num'],
        ],
        { 'data-wire': t.wire },
      ),
    ),
    'No tasks in this range.',
  );
  fillTable(
    'tasks-tool',
    tasks.byTool.map((t) =>
      row([
        ['Tool', t.tool, 'name'],
        ['Wire', chip(t.wire)],
        ['Created', fmt.int.format(t.created), 'num'],
        ['Completed', fmt.int.format(t.completed), 'num'],
        ['Failed', fmt.int.format(t.failed), 'num'],
        ['Cancelled', fmt.int.format(t.cancelled), 'num'],
        ['Expired', fmt.int.format(t.expired), 'num'],
      ]),
    ),
    'No tasks in this range.',
  );
}

function renderLatency(latency) {
  fillTable(
    'latency-wire',
    latency.byWire.map((w) =>
      row(
        [
          ['Wire', chip(w.wire)],
          ['Calls', fmt.int.format(w.calls), 'num'],
          ['Error rate', el('span', { class: w.errorRate > 0.05 ? 'rate-bad' : '', text: pct(w.errorRate) }), 'num'],
          ['p50', ms(w.p50), 'num'],
          ['p95', ms(w.p95), 'num'],
          ['p99', ms(w.p99), 'num'],
        ],
        { 'data-wire': w.wire },
      ),
    ),
    'No requests in this range.',
  );
  fillTable(
    'latency-tool',
    latency.byTool.map((t) =>
      row([
        ['Tool', t.tool, 'name'],
        ['Wire', chip(t.wire)],
        ['Calls', fmt.int.format(t.calls), 'num'],
        ['Error rate', el('span', { class: t.errorRate > 0.05 ? 'rate-bad' : '', text: pct(t.errorRate) }), 'num'],
        ['p50', ms(t.p50), 'num'],
        ['p95', ms(t.p95), 'num'],
        ['p99', ms(t.p99), 'num'],
      ]),
    ),
    'No tool calls in this range.',
  );
}

/** What the upstream speaks, in the words of the start-up lines (src/cli/policy-lines.ts). */
function upstreamText(report) {
  if (!report) return '';
  const how = report.pinned ? 'pinned' : 'discovered';
  if (report.problem) return `Upstream protocol ${report.protocol} (${how}); ${report.problem}.`;
  if (report.protocol === '2026-07-28') {
    return `Upstream protocol 2026-07-28 (${how}), ${report.sep2663Tasks ? 'runs tool tasks itself (SEP-2663 tasks extension)' : 'no SEP-2663 tasks extension'}.`;
  }
  return `Upstream protocol ${report.protocol} (${how}), ${report.tasks ? 'runs tool tasks itself (capabilities.tasks)' : 'no capabilities.tasks'}.`;
}

const EXECUTION = { native: 'native (the upstream runs the task; the shim mirrors it)', shim: 'shim (a plain call run as the shim\'s task)' };

function renderPolicies(table) {
  $('upstream-report').textContent = upstreamText(table.upstream);
  $('policies-note').textContent = table.upstreamDeclaresTasks
    ? 'The upstream declares tasks: its taskSupport applies where the policy file names no tool.'
    : `The upstream declares no tasks: the policy file, else the default (${table.default}), applies.`;
  const warning = $('policies-warning');
  warning.hidden = table.unknownConfigured.length === 0;
  warning.textContent = `The policy file names tools the upstream does not have: ${table.unknownConfigured.join(', ')}`;
  fillTable(
    'policies',
    table.tools.map((t) =>
      row(
        [
          ['Tool', t.tool, 'name'],
          ['Policy', t.mode === 'auto' ? `auto (${ms(t.syncWindowMs)} window)` : t.mode],
          ['Source', t.source],
          ['Upstream taskSupport', t.upstreamTaskSupport ?? '—'],
          ['Execution', EXECUTION[t.execution] ?? t.execution ?? '—'],
        ],
        { 'data-tool': t.tool },
      ),
    ),
    'The upstream lists no tools.',
  );
}

/** The policies come from the upstream, not the aggregates: a failure here leaves the rest of the page alone. */
async function refreshPolicies() {
  try {
    const res = await fetch(new URL('policies', api), { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.error ?? `HTTP ${res.status}`);
    renderPolicies(body);
  } catch (err) {
    $('policies-note').textContent = `Not known yet: ${err.message}`;
  }
}

function render(overview) {
  state.last = overview;
  const { traffic } = overview;
  renderVerdict(overview.verdict);
  renderCutover(overview.cutover);
  renderKpis(overview);
  renderShare('requests', traffic.requests);
  renderShare('tasks', traffic.taskCreations);
  const marks = legacyMarks(overview.cutover.legacyHistory);
  renderChart('requests', traffic.series, 'requests', traffic.range, traffic.stepMs, marks);
  renderChart('tasks', traffic.series, 'taskCreations', traffic.range, traffic.stepMs, marks);
  renderClients(overview.clients);
  renderTasks(overview.tasks);
  renderLatency(overview.latency);
  const rec = overview.recording;
  $('store').textContent = rec.store === 'redis' ? 'fleet totals from Redis' : 'embedded store (this process)';
  $('recording').textContent =
    `Recording since ${when(rec.since)} · gaps ${fmt.int.format(rec.gaps)}` + (rec.dropped ? ` · ${fmt.int.format(rec.dropped)} events dropped` : '') + ` · times in ${zone}`;
}

/* ---- data ---- */

async function refresh() {
  clearTimeout(state.timer);
  void refreshPolicies();
  try {
    const res = await fetch(new URL(`overview?range=${state.range}`, api), { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' });
    if (res.status === 401 || res.status === 403) throw new Error('Not authorised: open this page as /dashboard?token=<token>, or from the shim host.');
    if (!res.ok) throw new Error((await res.json().catch(() => ({}))).error ?? `HTTP ${res.status}`);
    render(await res.json());
    $('banner').hidden = true;
    $('live').classList.remove('stale');
    $('updated').textContent = `Updated ${fmt.time.format(new Date())} · every ${Math.round(state.refreshMs / 1000)} s`;
  } catch (err) {
    $('banner').hidden = false;
    $('banner').textContent = `Cannot refresh: ${err.message} Retrying.`;
    $('live').classList.add('stale');
  } finally {
    state.timer = setTimeout(refresh, state.refreshMs);
  }
}

function selectRange(range) {
  state.range = range;
  for (const button of document.querySelectorAll('.range button')) button.setAttribute('aria-pressed', String(button.dataset.range === range));
  const url = new URL(location.href);
  url.searchParams.set('range', range);
  window.history.replaceState(null, '', url);
  void refresh();
}

function start() {
  renderLegend();
  for (const button of document.querySelectorAll('.range button')) button.addEventListener('click', () => selectRange(button.dataset.range));
  let resize;
  window.addEventListener('resize', () => {
    clearTimeout(resize);
    resize = setTimeout(() => state.last && render(state.last), 150);
  });
  selectRange(state.range);
}

start();
