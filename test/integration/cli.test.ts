// bin/svc.ts as users run it: flags, exit codes, start-up, signals — in child processes.
import { mkdir, mkdtemp } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { jsonLines, spawnTs } from '../fixtures/spawn.js'

const CLI = 'bin/svc.ts'

t.test('--help prints usage with every flag and exits 0', async (t) => {
  const child = spawnTs(CLI, ['--help'])
  t.same(await child.exited, { code: 0, signal: null })
  for (const flag of [
    '--host',
    '--port',
    '--env',
    '--name',
    '--log-level',
    '--log-format',
    '--help',
    '--version',
    'SVC_MAX_BODY_BYTES',
    'SVC_DRAIN_TIMEOUT_MS',
  ]) {
    t.match(child.stdout(), flag)
  }
})

t.test('--version prints the package version and exits 0', async (t) => {
  const child = spawnTs(CLI, ['-V'])
  t.same(await child.exited, { code: 0, signal: null })
  t.equal(child.stdout(), `${PACKAGE_VERSION}\n`)
})

t.test('invalid configuration names every bad value and exits 2', async (t) => {
  const child = spawnTs(CLI, ['--env', 'qa', '--bogus'], { PORT: 'eighty', LOG_LEVEL: 'chatty' })
  t.same(await child.exited, { code: 2, signal: null })
  const err = child.stderr()
  t.match(err, /^svc: invalid configuration:/)
  t.match(err, /PORT=eighty: expected an integer from 0 to 65535/)
  t.match(err, /LOG_LEVEL=chatty: expected one of debug, info, warning, error/)
  t.match(err, /Unknown option '--bogus'/)
  t.equal(child.stdout(), '')
})

t.test('an unreadable systemd credential stops start-up with exit 2', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-credentials-'))
  await mkdir(join(dir, 'svc-cache-password'))
  const child = spawnTs(CLI, [], { CREDENTIALS_DIRECTORY: dir })
  t.same(await child.exited, { code: 2, signal: null })
  t.match(child.stderr(), /^svc: invalid configuration:\n {2}credential svc-cache-password in CREDENTIALS_DIRECTORY: EISDIR/)
})

t.test('a port in use is a one-line start-up error and exit 1', async (t) => {
  const blocker = createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
  t.teardown(() => void blocker.close())
  const port = (blocker.address() as { port: number }).port
  const child = spawnTs(CLI, ['--port', String(port)])
  t.same(await child.exited, { code: 1, signal: null })
  t.equal(child.stderr(), `svc: cannot listen on 127.0.0.1:${port}: address already in use\n`)
})

t.test('SVC_ADMIN_PORT: a second listener, its own start-up error, and a drain that closes both', async (t) => {
  const blocker = createServer()
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
  t.teardown(() => void blocker.close())
  const taken = (blocker.address() as { port: number }).port
  const busy = spawnTs(CLI, ['--port', '0'], { SVC_ADMIN_PORT: String(taken) })
  const child = spawnTs(CLI, ['--port', '0'], { SVC_ADMIN_PORT: '0' })
  t.same(await busy.exited, { code: 1, signal: null })
  t.equal(busy.stderr(), `svc: cannot listen on 127.0.0.1:${taken} (SVC_ADMIN_PORT): address already in use\n`)
  const started = await child.waitForEvent('application_started')
  t.match(started, { port: Number, admin_host: '127.0.0.1', admin_port: Number })
  t.equal((await fetch(`http://127.0.0.1:${String(started['admin_port'])}/ready`)).status, 200)
  t.equal((await fetch(`http://127.0.0.1:${String(started['port'])}/ready`)).status, 404)
  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null })
})

t.test('an unresolvable host is a one-line start-up error and exit 1', async (t) => {
  const child = spawnTs(CLI, ['--port', '0', '--host', 'no-such-host.invalid'])
  t.same(await child.exited, { code: 1, signal: null })
  t.match(child.stderr(), /^svc: cannot listen on no-such-host\.invalid:0: .+\n$/)
})

t.test('the CLI starts, serves, logs JSON lines and stops cleanly on SIGTERM', async (t) => {
  const child = spawnTs(CLI, ['--port', '0', '--name', 'cli-test', '--env', 'stage'])
  const started = await child.waitForEvent('application_started')
  t.match(started, { 'service.name': 'cli-test', version: PACKAGE_VERSION, environment: 'stage', host: '127.0.0.1', level: 'info' })
  const res = await fetch(`http://127.0.0.1:${String(started['port'])}/`)
  t.equal(res.status, 200)
  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null })
  const events = jsonLines(child.stdout()).map((l) => l['event'])
  t.same(
    events,
    ['model_loaded', 'model_loaded', 'application_started', 'request_started', 'request_completed', 'shutdown_started', 'application_stopped'],
    'the shipped models load before the listener opens',
  )
  t.equal(child.stderr(), '')
})

t.test('console log format writes readable lines', async (t) => {
  // SVC_ENVIRONMENT set: unset, the line is a warning (test/process/start.test.ts).
  const child = spawnTs(CLI, ['--port', '0', '--log-format', 'console'], { SVC_ENVIRONMENT: 'dev' })
  for (let i = 0; i < 1000 && !child.stdout().includes('application_started'); i++) await sleep(20)
  child.proc.kill('SIGINT')
  t.same(await child.exited, { code: 0, signal: null })
  t.match(child.stdout(), /^\d{4}-\d\d-\d\dT[\d:.]+Z INFO {4}application_started \[svc\] version=/m)
  t.match(child.stdout(), `application_started [svc] version=${PACKAGE_VERSION} `)
})

t.test('SIGTERM lets a slow in-flight request finish, then exits 0', async (t) => {
  const child = spawnTs('test/fixtures/serve.ts', [], { SLOW_MS: '500' })
  const { port } = await child.waitForEvent('application_started')
  const slow = fetch(`http://127.0.0.1:${String(port)}/test/slow`)
  await sleep(100)
  child.proc.kill('SIGTERM')
  const res = await slow
  t.equal(res.status, 200)
  t.same(await res.json(), { slow: true })
  t.same(await child.exited, { code: 0, signal: null })
  const events = jsonLines(child.stdout()).map((l) => l['event'])
  t.same(events.slice(-3), ['shutdown_started', 'request_completed', 'application_stopped'])
})

t.test('a second signal during the drain exits at once with 128 + its number', async (t) => {
  const child = spawnTs('test/fixtures/serve.ts', [], { SLOW_MS: '20000' })
  const { port } = await child.waitForEvent('application_started')
  const slow = fetch(`http://127.0.0.1:${String(port)}/test/slow`).catch((error: unknown) => error)
  await sleep(100)
  child.proc.kill('SIGTERM')
  await child.waitForEvent('shutdown_started')
  child.proc.kill('SIGINT')
  t.same(await child.exited, { code: 130, signal: null })
  t.match(jsonLines(child.stdout()).at(-1), { event: 'shutdown_forced', signal: 'SIGINT', level: 'warning' })
  t.type(await slow, Error)
})

t.test('a drain timeout closes what is left and still exits 0', async (t) => {
  const child = spawnTs('test/fixtures/serve.ts', [], { SLOW_MS: '20000', SVC_DRAIN_TIMEOUT_MS: '100' })
  const { port } = await child.waitForEvent('application_started')
  const slow = fetch(`http://127.0.0.1:${String(port)}/test/slow`).catch((error: unknown) => error)
  await sleep(100)
  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null })
  t.match(jsonLines(child.stdout()).at(-1), { event: 'application_stopped', level: 'warning', reason: /drain timeout after 100 ms/ })
  t.type(await slow, Error)
})

for (const [mode, event, message] of [
  ['exception', 'uncaught_exception', 'kaboom'],
  ['rejection', 'unhandled_rejection', 'nobody caught me'],
] as const) {
  t.test(`${event.replace('_', ' ')} is logged with its stack on stderr, buffered lines are flushed, exit 1`, async (t) => {
    const child = spawnTs('test/fixtures/crash.ts', [mode])
    t.same(await child.exited, { code: 1, signal: null })
    const [fatal] = jsonLines(child.stderr())
    t.match(fatal, { level: 'error', event, error: { message, stack: /\n\s+at / } })
    t.match(jsonLines(child.stdout()), [{ event: 'about_to_fail' }], 'the line buffered just before was not lost')
  })
}
