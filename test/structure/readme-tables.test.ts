// README.md's reference tables against the code, as test/config/variables.readme.test.ts holds the
// configuration table: the Logs and Metrics tables are rendered from the declarations in
// lib/telemetry/contract/, which hold every event the code logs (at the levels it logs it) and every
// family a running service exposes (its type, HELP and labels); ops/README.md's alert tables, to
// which README.md points, name every alert of ops/prometheus/rules. A row for something that is gone
// fails as surely as a missing row.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'
import { LOG_EVENTS, logTableRow } from '../../lib/telemetry/contract/log-events.js'
import { METRIC_FAMILIES, metricTableRow } from '../../lib/telemetry/contract/metrics.js'
import { startApp } from '../fixtures/app.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The rows of the table headed `header` in `page` (README.md by default): each row's cells, trimmed. */
const table = async (header: string, page = 'README.md'): Promise<string[][]> => {
  const lines = (await readFile(join(ROOT, page), 'utf8')).split('\n')
  const start = lines.indexOf(header)
  if (start === -1) return []
  const rows: string[][] = []
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((cell) => cell.trim()),
    )
  }
  return rows
}

/** The names in backticks at the start of a first cell: `a`, `b` (level) gives a and b. */
const named = (cell: string | undefined): string[] =>
  [...(/^((?:`[^`]+`(?:, )?)+)/.exec(cell ?? '')?.[1] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string)

const sourceFiles = async (dir: string): Promise<string[]> => {
  const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name))
}

/**
 * Every event the code logs, with the levels it is logged at where the call names one:
 * `logger.info('event'`, `logger[level]('event'`, `prepare('level', 'event')`, `prepare(level,
 * 'event')`, and the process's last words (`die('event')`, lib/process/shutdown.ts, on stderr).
 */
const loggedEvents = async (): Promise<Map<string, Set<string>>> => {
  const events = new Map<string, Set<string>>()
  const patterns = [
    /\.(debug|info|warning|error)\(\s*'([a-z][a-z_]+)'/g,
    /\]()\(\s*'([a-z][a-z_]+)'/g,
    /\.prepare\((?:'([a-z]+)'|[^)]*?), *'([a-z][a-z_]+)'\)/g,
    /\b(die)\('([a-z][a-z_]+)'\)/g,
  ]
  for (const file of [...(await sourceFiles('lib')), ...(await sourceFiles('bin'))]) {
    const text = await readFile(file, 'utf8')
    for (const pattern of patterns)
      for (const [, level, event] of text.matchAll(pattern)) {
        const levels = events.get(event as string) ?? new Set<string>()
        if (level === 'die') levels.add('stderr')
        else if (level !== undefined && level !== '') levels.add(level)
        events.set(event as string, levels)
      }
  }
  return events
}

/** The lines of README.md's table headed `header`, as they stand. */
const tableLines = async (header: string): Promise<string[]> => {
  const lines = (await readFile(join(ROOT, 'README.md'), 'utf8')).split('\n')
  const start = lines.indexOf(header)
  if (start === -1) return []
  const end = lines.findIndex((line, i) => i > start + 1 && !line.startsWith('|'))
  return lines.slice(start + 2, end)
}

/** The backticked names of a cell outside parentheses, up to its first `:` or `;`: a row's members or labels. */
const namesListed = (cell: string): string[] => [...(cell.replace(/\([^)]*\)/g, '').split(/[:;]/)[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string)

t.test('the Logs table is rendered from the declared log events', async (t) => {
  t.same(await tableLines('| Event | Level | Fields |'), LOG_EVENTS.map(logTableRow), 'README.md, rendered from lib/telemetry/contract/log-events.ts')
})

t.test('every declared member is named in its row, and every event the code logs is declared at the level it is logged', async (t) => {
  for (const row of LOG_EVENTS) {
    const mentioned = [...row.fields.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string)
    t.same(
      row.members.filter((member) => !mentioned.includes(member.replace(/\?$/, ''))),
      [],
      `${row.events.join(', ')}: members in the fields`,
    )
  }
  const declared = new Map(LOG_EVENTS.flatMap((row) => row.events.map((event) => [event, row.levels] as const)))
  t.equal(declared.size, LOG_EVENTS.flatMap((row) => row.events).length, 'no event declared twice')
  const logged = await loggedEvents()
  t.ok(logged.has('request_completed') && logged.has('uncaught_exception') && logged.has('application_started'), `${logged.size} events found in the code`)
  t.same([...logged.keys()].filter((event) => !declared.has(event)).sort(), [], 'logged but not declared')
  t.same(
    [...declared.keys()].filter((event) => !logged.has(event)),
    [],
    'declared but never logged',
  )
  for (const [event, levels] of logged) {
    const allowed: readonly string[] = declared.get(event) ?? []
    t.same(
      [...levels].filter((level) => !allowed.includes(level)),
      [],
      `${event} is logged only at its declared levels`,
    )
  }
})

t.test('the Metrics table is rendered from the declared families', async (t) => {
  t.same(await tableLines('| Metric | Type | Labels |'), METRIC_FAMILIES.map(metricTableRow), 'README.md, rendered from lib/telemetry/contract/metrics.ts')
  for (const family of METRIC_FAMILIES) t.same(namesListed(family.doc), family.labels, `${family.name}: the labels its row names`)
  t.equal(new Set(METRIC_FAMILIES.map((family) => family.name)).size, METRIC_FAMILIES.length, 'no family twice')
})

t.test('a running service exposes every declared family, with its type, HELP and labels, and no other', async (t) => {
  // Every optional series on: tracing (console spans), load shedding (a limit never reached), feedback and the payload log (to /dev/null).
  const running = await startApp(t, {
    ENABLE_CONSOLE_TRACES: 'true',
    SVC_MAX_IN_FLIGHT: '10000',
    SVC_FEEDBACK_SECRET: 'a-secret-of-the-readme-test',
    SVC_PAYLOAD_LOG: '/dev/null',
  })
  // A prediction and a page, so that the per-request series have samples whose labels can be read.
  await fetch(`${running.base}/api/v1/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'iris',
      instances: [
        {
          sepal_length: 5.1,
          sepal_width: 3.5,
          petal_length: 1.4,
          petal_width: 0.2,
        },
      ],
    }),
  })
  const text = await (await fetch(`${running.base}/metrics`)).text()
  const own = (name: string): boolean => !/^(process|nodejs)_/.test(name)
  const exposed = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].filter((m) => own(m[1] as string)).map((m) => [m[1] as string, m[2] as string]))
  const help = new Map([...text.matchAll(/^# HELP (\S+) (.*)$/gm)].map((m) => [m[1] as string, m[2] as string]))
  // The CLI counts the log lines its writers drop (lib/process/start.ts hands createApp their count); an app
  // built without line writers has nothing to count.
  const cliOnly = new Set(['svc_log_lines_dropped_total'])
  t.ok(exposed.size >= 30, `${exposed.size} families exposed`)
  const declared = new Map(METRIC_FAMILIES.map((family) => [family.name, family]))
  t.same([...exposed.keys()].filter((name) => !declared.has(name)).sort(), [], 'exposed but not declared')
  t.same(
    [...declared.keys()].filter((name) => !exposed.has(name) && !cliOnly.has(name)),
    [],
    'declared but not exposed',
  )
  let sampled = 0
  for (const [name, type] of exposed) {
    const family = declared.get(name)
    if (family === undefined) continue
    t.equal(type, family.type, `${name} is a ${family.type}`)
    t.equal(help.get(name), family.help, `${name}'s HELP`)
    const series = [...text.matchAll(new RegExp(`^${name}(?:_bucket|_sum|_count)?\\{([^}]*)\\}`, 'gm'))]
    for (const [, labels] of series.slice(0, 1)) {
      sampled++
      const names = [...(labels as string).matchAll(/(\w+)="/g)].map((m) => m[1] as string).filter((label) => label !== 'le' && label !== 'quantile')
      t.same(names.sort(), [...family.labels].sort(), `${name}'s labels`)
    }
  }
  t.ok(sampled >= 20, `${sampled} families' labels read from their series`)
})

t.test('the alert table names every alert of the shipped rules, and no other', async (t) => {
  const dir = join(ROOT, 'ops', 'prometheus', 'rules')
  const alerts = new Set<string>()
  for (const file of await readdir(dir)) {
    const doc = parse(await readFile(join(dir, file), 'utf8')) as { groups: Array<{ rules: Array<{ alert?: string }> }> }
    for (const group of doc.groups) for (const rule of group.rules) if (rule.alert !== undefined) alerts.add(rule.alert)
  }
  t.ok(alerts.size >= 12, `${alerts.size} alerts in ops/prometheus/rules`)
  const page = join('ops', 'README.md')
  const tables = await Promise.all([
    table('| Alert | prod | stage | dev | `for` | Runbook |', page),
    table('| Alert | Fires when | Severity | `for` | Runbook |', page),
  ])
  const documented = tables.flat().flatMap((row) => named(row[0]))
  t.same([...alerts].filter((alert) => !documented.includes(alert)).sort(), [], 'in the rules but not in ops/README.md')
  t.same(
    documented.filter((alert) => !alerts.has(alert)),
    [],
    'in ops/README.md but not in the rules',
  )
})
