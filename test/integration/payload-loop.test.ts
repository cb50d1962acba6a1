// The payload log as an input (README, "Payload log"): a real service logs real traffic to a real
// file, `svc profile --model cars --input payload.jsonl` builds a reference from the cars rows it
// holds, and `svc loadgen --rows payload.jsonl` replays them against another instance serving a
// canary; both read the file as written, skipping (and counting) the other events: iris's
// predictions and the labels.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { runLoadgen } from '../../lib/tools/loadgen/loadgen.js'
import { runProfileCommand } from '../../lib/tools/profile/command.js'
import { startApp } from '../fixtures/app.js'
import { loadgenOptions } from '../fixtures/loadgen.js'
import { rebuilt } from '../fixtures/model-registry.js'
import { tempTree } from '../fixtures/model-store.js'
import { artifactBytes } from '../fixtures/models.js'
import { predictIris } from '../fixtures/rollout.js'

/** The payload log's events, one a line. */
const eventsOf = async (path: string): Promise<Record<string, any>[]> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, any>)

/** `svc profile --model cars` of the log into `reference`, which must succeed; what it said on stderr. */
const profiled = async (t: Test, path: string, reference: string): Promise<string> => {
  const err: string[] = []
  const status = await runProfileCommand(['--model', 'cars', '--input', path, '--output', reference], {
    stdout: () => {},
    stderr: (text) => void err.push(text),
  })
  t.equal(status, 0, err.join(''))
  return err.join('')
}

t.test('profile and loadgen read a payload log the service wrote: log, build a reference, replay against a canary', async (t) => {
  const dir = await tempTree(t, {})
  const path = join(dir, 'payload.jsonl')
  const logged = await startApp(t, { SVC_PAYLOAD_LOG: path, SVC_FEEDBACK_SECRET: 'the fleet secret, 32 bytes long!' })
  const summary = await runLoadgen(loadgenOptions(logged.base, { model: 'cars', batch: 5, durationMs: 500, feedback: true }), () => {})
  for (let i = 0; i < 3; i++) t.equal((await predictIris(logged.base)).status, 200)
  await logged.app.payloadLog?.stop(5000) // everything queued is written
  const events = await eventsOf(path)
  const cars = events.filter((e) => e['type'] === 'svc.prediction' && e['data']['model'] === 'cars')
  const rows = cars.reduce((sum, e) => sum + e['data']['rows'].length, 0)
  const others = events.length - cars.length
  t.equal(rows, summary.rows, "every answered cars row is in the log, by the model's inputs")
  t.ok(others >= 3 + 1, `${others} other events: iris's predictions and the labels`)
  t.match(cars[0]?.['data']['rows'][0], { origin: String, cylinders: Number }, 'a categorical input as its level')
  t.match(cars[0]?.['data']['answers'][0], { miles_per_gallon: Number })

  const reference = join(dir, 'reference.json')
  const err = await profiled(t, path, reference)
  t.match(err, `${rows} rows of ${path} (${others} other payload log events skipped)`)
  const profile = JSON.parse(await readFile(reference, 'utf8')) as Record<string, any>
  t.equal(profile['rows'], rows, 'the reference is built from the logged rows')
  t.same(
    profile['features'].map((f: Record<string, unknown>) => f['name']),
    ['cylinders', 'displacement', 'horsepower', 'weight_in_lbs', 'acceleration', 'year', 'origin'],
  )

  const canaryRoot = await tempTree(t, {
    'cars/manifest.json': JSON.stringify({ default_version: '1', versions: ['2'], canary: { version: '2', percent: 50 } }),
    'cars/1/model.json': artifactBytes('cars'),
    'cars/2/model.json': rebuilt('cars', '2', 3),
  })
  const canary = await startApp(t, { SVC_MODEL_STORE: canaryRoot })
  const lines: string[] = []
  const replayed = await runLoadgen(
    loadgenOptions(canary.base, { model: 'cars', rows: { path, file: 'payload.jsonl', format: 'ndjson', delimiter: ',' }, batch: 5, durationMs: 300 }),
    (line) => void lines.push(line),
  )
  t.match(lines[0], `${rows} rows of payload.jsonl (${others} other payload log events skipped)`)
  t.ok(replayed.sent > 0 && replayed.ok === replayed.sent, `${replayed.ok} of ${replayed.sent} replayed requests answered`)
})

t.test(
  'with SVC_PAYLOAD_LOG_EXCLUDE naming inputs, the loop still runs: profile and loadgen say what was left out and draw it from the reference',
  async (t) => {
    const dir = await tempTree(t, {})
    const path = join(dir, 'payload.jsonl')
    const logged = await startApp(t, { SVC_PAYLOAD_LOG: path, SVC_PAYLOAD_LOG_EXCLUDE: 'origin,horsepower' })
    const summary = await runLoadgen(loadgenOptions(logged.base, { model: 'cars', batch: 5, durationMs: 500 }), () => {})
    await logged.app.payloadLog?.stop(5000)
    const events = await eventsOf(path)
    const rows = events.reduce((sum, e) => sum + e['data']['rows'].length, 0)
    t.equal(rows, summary.rows)
    t.same(
      Object.keys(events[0]?.['data']['rows'][0] ?? {}),
      ['cylinders', 'displacement', 'weight_in_lbs', 'acceleration', 'year'],
      'the excluded inputs are not written',
    )

    const reference = join(dir, 'reference.json')
    const err = await profiled(t, path, reference)
    t.match(err, `${rows} rows of ${path}`)
    t.match(err, "horsepower, origin: not in the payload log (SVC_PAYLOAD_LOG_EXCLUDE left them out); each row's value drawn from model cars's reference")
    const profile = JSON.parse(await readFile(reference, 'utf8')) as Record<string, any>
    t.equal(profile['rows'], rows)
    const shipped = (await logged.app.models.resolve('cars')?.model.reference?.features) ?? []
    const byName = (features: readonly Record<string, unknown>[], name: string) => features.find((f) => f['name'] === name)
    t.same(byName(profile['features'], 'origin'), byName(shipped as never, 'origin'), "an excluded input keeps the model's reference")
    t.same(byName(profile['features'], 'horsepower'), byName(shipped as never, 'horsepower'))
    t.not(
      JSON.stringify(byName(profile['features'], 'weight_in_lbs')),
      JSON.stringify(byName(shipped as never, 'weight_in_lbs')),
      'a logged input is profiled anew',
    )

    const lines: string[] = []
    const replayed = await runLoadgen(
      loadgenOptions(logged.base, { model: 'cars', rows: { path, file: 'payload.jsonl', format: 'ndjson', delimiter: ',' }, batch: 5, durationMs: 300 }),
      (line) => void lines.push(line),
    )
    t.match(
      lines[0],
      "loadgen: horsepower, origin: not in the payload log (SVC_PAYLOAD_LOG_EXCLUDE left them out); each row's value drawn from model cars's reference",
    )
    t.match(lines[1], `${rows} rows of payload.jsonl`)
    t.ok(replayed.sent > 0 && replayed.ok === replayed.sent, `${replayed.ok} of ${replayed.sent} replayed requests answered`)
  },
)
