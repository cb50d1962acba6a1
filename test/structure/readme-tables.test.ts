// README.md's reference tables against the code, as test/config/readme.test.ts holds the
// configuration table: the Logs table names every event the service logs, the Metrics table every
// series a running service declares (with its type), and the alert table every alert of
// ops/prometheus/rules. A row for something that is gone fails as surely as a missing row.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'
import { startApp } from '../fixtures/app.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** The rows of the README table headed `header`: each row's cells, trimmed. */
const table = async (header: string): Promise<string[][]> => {
  const lines = (await readFile(join(ROOT, 'README.md'), 'utf8')).split('\n')
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
 * Every event the code logs: `logger.info('event'`, `logger[level]('event'`, `prepare(level,
 * 'event')`, and the process's last words (`die('event')`, lib/process/shutdown.ts).
 */
const loggedEvents = async (): Promise<Set<string>> => {
  const events = new Set<string>()
  const patterns = [
    /\.(?:debug|info|warning|error)\(\s*'([a-z][a-z_]+)'/g,
    /\]\(\s*'([a-z][a-z_]+)'/g,
    /\.prepare\([^)]*?'([a-z][a-z_]+)'\)/g,
    /\bdie\('([a-z][a-z_]+)'\)/g,
  ]
  for (const file of [...(await sourceFiles('lib')), ...(await sourceFiles('bin'))]) {
    const text = await readFile(file, 'utf8')
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) events.add(match[1] as string)
  }
  return events
}

t.test('the Logs table names every event the service logs, and no other', async (t) => {
  const logged = await loggedEvents()
  t.ok(logged.has('request_completed') && logged.has('uncaught_exception') && logged.has('application_started'), `${logged.size} events found in the code`)
  const documented = (await table('| Event | Fields |')).flatMap((row) => named(row[0]))
  t.ok(documented.length > 0, 'README.md has the table headed | Event | Fields |')
  t.same([...logged].filter((event) => !documented.includes(event)).sort(), [], 'logged but not in README.md')
  t.same(
    documented.filter((event) => !logged.has(event)),
    [],
    'in README.md but never logged',
  )
  t.same(documented, [...new Set(documented)], 'no event twice')
})

t.test('the Metrics table lists every series a running service declares, with its type, and no other', async (t) => {
  // Every optional series on: tracing (console spans), load shedding (a limit never reached), feedback and the payload log (to /dev/null).
  const running = await startApp(t, {
    ENABLE_CONSOLE_TRACES: 'true',
    SVC_MAX_IN_FLIGHT: '10000',
    SVC_FEEDBACK_SECRET: 'a-secret-of-the-readme-test',
    SVC_PAYLOAD_LOG: '/dev/null',
  })
  const text = await (await fetch(`${running.base}/metrics`)).text()
  const declared = new Map(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].filter((m) => !/^(process|nodejs)_/.test(m[1] as string)).map((m) => [m[1] as string, m[2] as string]),
  )
  // The CLI counts the log lines its writers drop (lib/process/start.ts hands createApp their count); an app
  // built without line writers has nothing to count.
  declared.set('svc_log_lines_dropped_total', 'counter')
  t.ok(declared.size >= 30, `${declared.size} series declared`)
  const rows = await table('| Metric | Type | Labels |')
  t.ok(rows.length > 0, 'README.md has the table headed | Metric | Type | Labels |')
  const documented = new Map(rows.map((row) => [named(row[0])[0] ?? '', row[1] ?? '']))
  t.same([...declared.keys()].filter((name) => !documented.has(name)).sort(), [], 'declared but not in README.md')
  t.same(
    [...documented.keys()].filter((name) => !declared.has(name)),
    [],
    'in README.md but not declared',
  )
  for (const [name, type] of declared) if (documented.has(name)) t.match(documented.get(name), new RegExp(`^${type}\\b`), `${name} is a ${type}`)
  t.equal(rows.length, documented.size, 'no series twice')
})

t.test('the alert table names every alert of the shipped rules, and no other', async (t) => {
  const dir = join(ROOT, 'ops', 'prometheus', 'rules')
  const alerts = new Set<string>()
  for (const file of await readdir(dir)) {
    const doc = parse(await readFile(join(dir, file), 'utf8')) as { groups: Array<{ rules: Array<{ alert?: string }> }> }
    for (const group of doc.groups) for (const rule of group.rules) if (rule.alert !== undefined) alerts.add(rule.alert)
  }
  t.ok(alerts.size >= 12, `${alerts.size} alerts in ops/prometheus/rules`)
  const documented = (await table('| Alert | Fires when | prod | stage | dev |')).flatMap((row) => named(row[0]))
  t.same([...alerts].filter((alert) => !documented.includes(alert)).sort(), [], 'in the rules but not in README.md')
  t.same(
    documented.filter((alert) => !alerts.has(alert)),
    [],
    'in README.md but not in the rules',
  )
})
