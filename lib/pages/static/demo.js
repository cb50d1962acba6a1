// The demo page: the service watching itself through its own API. Plain DOM, no framework, no
// build step. Elements are built with textContent (never innerHTML), so nothing a response holds
// is ever parsed as markup. URLs are relative to /demo, so a path prefix in front works too.

const STREAM = { count: 20, interval: 1 }
const RETRY_MS = 5000
const HISTORY = 40
const HEALTH_EVERY_MS = 10_000
const RATE_EVERY_MS = 30_000
const MODELS_EVERY_MS = 30_000
const SVG = 'http://www.w3.org/2000/svg'
const CHART = { width: 200, height: 48 }

/** How each figure of /api/insights is named and shown, in the order the stream cycles. */
const FIGURES = {
  http_requests_in_flight: { label: 'Requests in flight', show: (v) => String(Math.round(v)) },
  http_request_rate: { label: 'Request rate', show: (v) => `${v.toFixed(2)} req/s` },
  http_request_duration_p95: { label: 'Latency p95', show: (v) => `${(v * 1000).toFixed(1)} ms` },
  event_loop_lag_p99: { label: 'Event-loop lag p99', show: (v) => `${v.toFixed(1)} ms` },
  heap_used: { label: 'Heap used', show: (v) => `${(v / 1048576).toFixed(1)} MiB` },
}

const byId = (id) => document.getElementById(id)

/** An element with a class and children (strings become text). */
const el = (tag, className, ...children) => {
  const node = document.createElement(tag)
  if (className) node.className = className
  for (const child of children) node.append(child)
  return node
}

const svg = (tag, attributes) => {
  const node = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value)
  return node
}

const setPill = (node, text, tone) => {
  node.textContent = text
  node.className = tone ? `pill ${tone}` : 'pill'
}

const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '—')

// ---- live chart of /api/insights -------------------------------------------------------------

const chart = byId('chart')
const series = new Map()

/** One small chart per figure, created when its first event arrives. */
const seriesFor = (metric) => {
  let entry = series.get(metric)
  if (entry !== undefined) return entry
  const figure = FIGURES[metric] ?? { label: metric, show: (v) => String(v) }
  const value = el('p', 'value', '—')
  const area = svg('polygon', { class: 'area', points: '' })
  const line = svg('polyline', { class: 'line', points: '', 'vector-effect': 'non-scaling-stroke' })
  // The latest value, visible from the first event on (a line needs two).
  const dot = svg('circle', { class: 'dot', r: '2.5', cx: '-10', cy: '-10', 'vector-effect': 'non-scaling-stroke' })
  const plot = svg('svg', {
    viewBox: `0 0 ${CHART.width} ${CHART.height}`,
    preserveAspectRatio: 'none',
    role: 'img',
    'aria-label': `${figure.label}, recent values`,
  })
  plot.append(area, line, dot)
  const card = el('figure', 'figure', el('h3', '', figure.label), value, plot)
  card.dataset.metric = metric
  chart.append(card)
  entry = { figure, values: [], value, line, area, dot }
  series.set(metric, entry)
  return entry
}

const draw = (entry) => {
  const known = entry.values.filter((v) => v !== null)
  const top = Math.max(...known, 0) * 1.15 || 1
  // Until the history is full the line spans the width it has; then it scrolls.
  const step = CHART.width / Math.max(entry.values.length - 1, 1)
  const points = []
  entry.values.forEach((v, i) => {
    if (v !== null) points.push(`${(i * step).toFixed(1)},${(CHART.height - (v / top) * (CHART.height - 4) - 2).toFixed(1)}`)
  })
  entry.line.setAttribute('points', points.join(' '))
  const first = points[0]
  const last = points[points.length - 1]
  entry.area.setAttribute(
    'points',
    first === undefined ? '' : `${first.split(',')[0]},${CHART.height} ${points.join(' ')} ${last.split(',')[0]},${CHART.height}`,
  )
  const [cx, cy] = last === undefined ? ['-10', '-10'] : last.split(',')
  entry.dot.setAttribute('cx', cx)
  entry.dot.setAttribute('cy', cy)
}

const onInsight = (event) => {
  const entry = seriesFor(event.metric)
  entry.values.push(typeof event.value === 'number' ? event.value : null)
  if (entry.values.length > HISTORY) entry.values.shift()
  entry.value.textContent = typeof event.value === 'number' ? entry.figure.show(event.value) : '—'
  draw(entry)
  chart.dataset.updates = String(Number(chart.dataset.updates) + 1)
}

const streamStatus = byId('stream-status')

/** A stream ends after `count` events; the next one starts at once. A failure waits, then retries. */
const connect = () => {
  const source = new EventSource(`api/insights?count=${STREAM.count}&interval=${STREAM.interval}`)
  source.onopen = () => setPill(streamStatus, 'live', 'ok')
  source.onmessage = (message) => {
    const event = JSON.parse(message.data)
    onInsight(event)
    if (event.seq >= event.count) {
      source.close()
      connect()
    }
  }
  source.onerror = () => {
    // Closing stops EventSource's own retries, which would not back off a 503.
    source.close()
    setPill(streamStatus, 'reconnecting…', 'warn')
    setTimeout(connect, RETRY_MS)
  }
}

// ---- polled panels ---------------------------------------------------------------------------

/** The JSON body and the response, or the reason there is none. */
const getJson = async (path) => {
  const response = await fetch(path, { headers: { accept: 'application/json' } })
  const body = await response.json()
  return { response, body }
}

/** Runs `load` now and again `everyMs` after each run ends, so slow answers never pile up. */
const every = (everyMs, load) => {
  const run = async () => {
    try {
      await load()
    } finally {
      setTimeout(run, everyMs)
    }
  }
  run()
}

const rateValue = byId('rate-value')
const rateMeta = byId('rate-meta')
const rateCache = byId('rate-cache')

const loadRate = async () => {
  try {
    const { response, body } = await getJson('api/external-data?currency=USD')
    if (!response.ok) {
      rateValue.textContent = 'unavailable'
      rateMeta.textContent = body.detail ?? `HTTP ${response.status}`
      setPill(rateCache, '', '')
      return
    }
    rateValue.textContent = new Intl.NumberFormat(undefined, { style: 'currency', currency: body.currency }).format(body.value)
    rateMeta.textContent = `1 ${body.symbol} in ${body.currency} · from ${body.source} · as of ${time(body.timestamp)}`
    const cacheStatus = response.headers.get('cache-status') ?? ''
    setPill(rateCache, cacheStatus.includes('hit') ? 'cached' : cacheStatus.includes('stale-if-error') ? 'stale' : cacheStatus ? 'fresh' : '', '')
    rateCache.title = `Cache-Status: ${cacheStatus}`
  } catch {
    rateValue.textContent = 'unreachable'
    rateMeta.textContent = 'The service did not answer'
  }
}

const TONES = { ok: 'ok', skipped: '', fail: 'bad', degraded: 'bad', starting: 'warn', draining: 'warn' }

const healthBody = byId('health-table').tBodies[0]
const healthStatus = byId('health-status')
const healthMeta = byId('health-meta')

const loadHealth = async () => {
  try {
    const { body } = await getJson('health')
    setPill(healthStatus, body.status, TONES[body.status])
    const rows = Object.entries(body.checks).map(([name, check]) => {
      const status = el('td', '', el('span', `pill ${TONES[check.status] ?? ''}`, check.status))
      if (check.error) status.append(el('span', 'reason', check.error))
      return el('tr', '', el('td', '', name.replaceAll('_', ' ')), status, el('td', 'num', check.latency_ms === undefined ? '—' : `${check.latency_ms} ms`))
    })
    healthBody.replaceChildren(...rows)
    healthMeta.textContent = `Version ${body.version} · up ${Math.round(body.uptime_s)} s · checked ${new Date().toLocaleTimeString()}`
  } catch {
    setPill(healthStatus, 'unreachable', 'bad')
  }
}

const SEVERITY_TONES = { none: 'ok', moderate: 'warn', severe: 'bad' }
const DRIFT_TONES = { ok: 'ok', insufficient_data: '', not_checked: '', disabled: '', error: 'bad' }

/** The drift cell: its status, the window, and each feature's PSI with its severity. */
const driftCell = (drift) => {
  const cell = el('td', 'drift')
  if (drift === undefined || drift === null) {
    cell.append(el('span', 'muted', 'not reported'))
    return cell
  }
  cell.append(el('span', `pill ${DRIFT_TONES[drift.status] ?? ''}`, drift.status.replaceAll('_', ' ')))
  if (drift.window) cell.append(' ', el('span', 'muted', `${drift.window.samples}/${drift.window.capacity} samples`))
  const features = el('div', 'features')
  for (const feature of drift.features ?? []) {
    const psi = typeof feature.psi === 'number' ? feature.psi.toFixed(3) : '—'
    const badge = el('span', `psi ${SEVERITY_TONES[feature.severity] ?? ''}`, `${feature.name} ${psi}`)
    badge.title = `${feature.name}: PSI ${psi}, ${feature.severity}`
    features.append(badge)
  }
  if (features.childElementCount > 0) cell.append(features)
  if (drift.scored_at) cell.append(el('span', 'reason', `scored ${time(drift.scored_at)}`))
  return cell
}

const modelsBody = byId('models-table').tBodies[0]
const modelsStatus = byId('models-status')
const psiHint = byId('psi-hint')

const detailOf = async (summary) => {
  try {
    const { response, body } = await getJson(`api/v1/models/${encodeURIComponent(summary.name)}`)
    return response.ok ? body : summary
  } catch {
    return summary
  }
}

const loadModels = async () => {
  try {
    const { body } = await getJson('api/v1/models')
    const models = await Promise.all(body.models.map(detailOf))
    const rows = models.map((model) => {
      const state = el('td', '', el('span', `pill ${model.state === 'READY' ? 'ok' : 'bad'}`, model.state))
      if (model.reason) state.append(el('span', 'reason', model.reason))
      const kind = model.task ? `${model.task} (${model.type.replaceAll('_', ' ')})` : '—'
      const row = el(
        'tr',
        '',
        el('th', '', model.name),
        state,
        el('td', '', model.version ?? model.default_version ?? '—'),
        el('td', '', kind),
        driftCell(model.drift),
      )
      row.children[0].scope = 'row'
      // Column names for the stacked layout of narrow screens (demo.css).
      ;['', 'State', 'Version', 'Task', 'Drift'].forEach((label, i) => {
        if (label) row.children[i].dataset.label = label
      })
      row.dataset.model = model.name
      return row
    })
    modelsBody.replaceChildren(...rows)
    // The thresholds are the service's configuration; say the ones it reports.
    const thresholds = models.find((m) => m.drift?.thresholds)?.drift.thresholds
    if (thresholds)
      psiHint.textContent = `PSI under ${thresholds.moderate} is no drift, ${thresholds.moderate} to ${thresholds.severe} moderate, ${thresholds.severe} and over severe.`
    const ready = models.filter((m) => m.state === 'READY').length
    setPill(modelsStatus, `${ready} of ${models.length} ready`, ready === models.length ? 'ok' : 'warn')
  } catch {
    setPill(modelsStatus, 'unreachable', 'bad')
  }
}

connect()
every(HEALTH_EVERY_MS, loadHealth)
every(RATE_EVERY_MS, loadRate)
every(MODELS_EVERY_MS, loadModels)
