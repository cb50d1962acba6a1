// Faults of the log output, on the CLI as users run it (bin/svc.ts in a child process, its stdout a
// pipe to this test): the reader going away (every later write fails with EPIPE) and a reader that
// stops reading for a while (the pipe fills). Neither stops the process: with the reader gone the
// lines are lost and counted, and it serves on; with the pipe full it waits for the reader, loses
// nothing, and serves as before once the reader reads again.
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { sample } from '../fixtures/metrics-text.js'
import { jsonLines, spawnTs, type Child } from '../fixtures/spawn.js'

const CLI = 'bin/svc.ts'

const start = async (t: Test): Promise<{ child: Child; base: string }> => {
  const child = spawnTs(CLI, ['--port', '0'])
  t.teardown(() => void (child.proc.exitCode === null && child.proc.kill('SIGKILL')))
  const started = await child.waitForEvent('application_started')
  return { child, base: `http://127.0.0.1:${String(started['port'])}` }
}

t.test('stdout closed by its reader: EPIPE does not stop the process, which serves on, counts the lost lines and stops cleanly', async (t) => {
  const { child, base } = await start(t)
  // The reading end goes away: each write to stdout from now on fails with EPIPE.
  child.proc.stdout?.destroy()
  const statuses: number[] = []
  for (let i = 0; i < 50; i++) statuses.push((await fetch(`${base}/?i=${i}`)).status)
  t.same(statuses, Array(50).fill(200), 'every request answered')
  t.equal((await fetch(`${base}/health`)).status, 200)
  t.equal((await fetch(`${base}/ready`)).status, 200)
  await sleep(100)
  t.equal(child.proc.exitCode, null, 'the process is still running')

  const text = await (await fetch(`${base}/metrics`)).text()
  const dropped = sample(text, 'svc_log_lines_dropped_total', { environment: 'dev' }) ?? 0
  t.ok(dropped >= 100, `svc_log_lines_dropped_total counts the lost lines (${dropped}), two per request`)

  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null }, 'a clean stop: the flush on exit meets EPIPE too, and carries on')
  t.equal(child.stderr(), '', 'nothing reported on stderr: no crash, no EPIPE')
})

t.test('a full stdout pipe: the process waits for its reader, loses no line, and serves as before once it reads again', async (t) => {
  const { child, base } = await start(t)
  child.proc.stdout?.pause()
  // Each request logs two lines of ~7 KB (its path): the pipe and this side's buffer fill quickly.
  const path = (i: number): string => `/${'x'.repeat(7000)}/${i}`
  let sent = 0
  let stalled: Promise<Response> | undefined
  while (stalled === undefined && sent < 1000) {
    const pending = fetch(base + path(sent++))
    const answered = await Promise.race([pending.then(() => true), sleep(1000).then(() => false)])
    if (!answered) stalled = pending
  }
  t.ok(stalled !== undefined, `the pipe filled after ${sent} requests, and the process waited for its reader`)
  t.equal(child.proc.exitCode, null, 'and did not exit')

  child.proc.stdout?.resume()
  t.equal((await stalled)?.status, 404, 'once the reader reads again, the waiting request is answered')
  const started = performance.now()
  t.equal((await fetch(`${base}/`)).status, 200)
  t.ok(performance.now() - started < 1000, 'and the next one at once')

  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null })
  const completed = jsonLines(child.stdout()).filter((l) => l['event'] === 'request_completed')
  t.equal(completed.length, sent + 1, 'a request_completed line for every request: none lost')
  t.same(
    completed.slice(0, sent).map((l) => l['path']),
    Array.from({ length: sent }, (_, i) => path(i)),
    'each whole and in order',
  )
  t.equal(child.stderr(), '')
})
