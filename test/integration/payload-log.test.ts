// The payload log's events over real HTTP to a real file (lib/serving/payload/): every logged
// prediction and accepted label is a CloudEvents 1.0 event (validated against the specification's
// attributes, test/fixtures/cloudevents-schema.ts) holding the rows sent, the answers given, the
// role of the version that answered and the tokens that join a label to it; an excluded input is in
// no byte written; a reply the server replaced is not logged; two instances log the same keys; a
// manifest's `log` member overrides the percent, and a bad one is refused as a bad canary is.
import { readFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { App } from '../../lib/app.js'
import type { RouteDef } from '../../lib/core/pipeline.js'
import { createPayloadEvents } from '../../lib/serving/payload/events.js'
import { createPayloadLog } from '../../lib/serving/payload/log.js'
import { keyPoint } from '../../lib/models/registry/rollout.js'
import type { ServedModel } from '../../lib/models/registry/registry.js'
import type { Prediction } from '../../lib/models/runtime.js'
import { startApp, type Running } from '../fixtures/app.js'
import { cloudEventErrors } from '../fixtures/cloudevents-schema.js'
import { tempTree } from '../fixtures/model-store.js'
import { binomialBounds, inParallel, irisRow, irisVersions, predictIris, until, withCanary, writeManifest } from '../fixtures/rollout.js'

type Event = Record<string, any>

const SECRET = 'the fleet secret, 32 bytes long!'

const readLines = async (path: string): Promise<string[]> => {
  try {
    return (await readFile(path, 'utf8')).split('\n').filter(Boolean)
  } catch {
    return []
  }
}

/** The events in `path` once it holds `count` of them (within 10 s), parsed. */
const eventsWhen = async (path: string, count: number): Promise<Event[]> => {
  await until(async () => (await readLines(path)).length >= count, `${count} events in ${path}`)
  return (await readLines(path)).map((line) => JSON.parse(line) as Event)
}

/** Starts the service with its payload log in a fresh directory (startApp stops the writer at teardown). */
const startLogged = async (t: Test, manifest: Record<string, unknown>, env: Record<string, string> = {}, routes: RouteDef[] = []) => {
  const root = await tempTree(t, irisVersions(manifest))
  const path = join(root, 'payload.jsonl')
  const running = await startApp(t, { SVC_MODEL_STORE: root, SVC_PAYLOAD_LOG: path, ...env }, routes)
  return { root, path, running }
}

const infer = async (base: string, path: string, body: unknown): Promise<Record<string, any>> => {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return (await res.json()) as Record<string, any>
}

t.test('each logged prediction and label is a CloudEvent with what was asked, answered and by whom; an excluded input is never written', async (t) => {
  const { path, running } = await startLogged(t, withCanary(50), { SVC_PAYLOAD_LOG_EXCLUDE: 'sepal_width', SVC_FEEDBACK_SECRET: SECRET })
  const rowsOf = (i: number) => [
    { ...irisRow(i), sepal_width: 3.0123457 },
    { ...irisRow(i + 1), sepal_width: 2.0987653 },
  ]
  const keyed = await inParallel(20, 4, (i) => predictIris(running.base, { id: `user-${i}`, instances: rowsOf(i) }))
  const named = await predictIris(running.base, { id: 'named-1', version: '1', instances: rowsOf(0) })
  const { sepal_width: _, ...row } = irisRow(7)
  const inputs = Object.entries({ ...row, sepal_width: 3.0123457 }).map(([name, value]) => ({ name, datatype: 'FP64', shape: [1], data: [value] }))
  const v2 = await infer(running.base, '/v2/models/iris/versions/2/infer', { id: 'named-2', inputs })
  const answers: Record<string, any>[] = [...keyed.map((a) => a.body), named.body]
  t.ok([...keyed, named].every((a) => a.status === 200) && v2['model_version'] === '2', 'all answered')

  const first = answers[0] as Record<string, any>
  const token = first['feedback_tokens'][1] as string
  const label = await infer(running.base, '/api/v1/feedback', { feedback: [{ token, truth: 'setosa' }] })
  t.equal(label['accepted'], 1)

  const events = await eventsWhen(path, 23)
  t.equal(events.length, 23, 'one event per prediction request and per accepted label')
  for (const event of events) t.same(cloudEventErrors(event), [], `${event['type']} ${event['id']} is a CloudEvent`)
  const source = `svc://${hostname()}:${new URL(running.base).port}`
  t.ok(
    events.every((e) => e['source'] === source && e['datacontenttype'] === 'application/json'),
    'from this instance',
  )
  t.equal(new Set(events.map((e) => e['id'])).size, 23, 'every id its own')

  const byRequest = new Map(events.filter((e) => e['type'] === 'svc.prediction').map((e) => [e['data']['request_id'], e]))
  for (const [i, answer] of answers.entries()) {
    const event = byRequest.get(answer['id']) as Event
    const version = answer['model_version'] as string
    t.equal(event['subject'], `iris/${version}`)
    t.match(event['data'], { model: 'iris', version, role: answer['id'] === 'named-1' ? 'named' : version === '2' ? 'canary' : 'default' })
    const sent = answer['id'] === 'named-1' ? rowsOf(0) : rowsOf(i)
    t.same(
      event['data']['rows'],
      sent.map(({ sepal_width: _, ...kept }) => kept),
      'the rows sent, by input name, without the excluded one',
    )
    const species = answer['outputs'][0]['data'] as string[]
    const probabilities = answer['outputs'][1]['data'] as number[] // flat, shape [N, 3]
    t.same(
      event['data']['answers'],
      species.map((label, r) => ({ species: label, probabilities: probabilities.slice(r * 3, r * 3 + 3) })),
    )
    t.same(event['data']['feedback_tokens'], answer['feedback_tokens'], 'the tokens that join a label to it')
    t.ok(event['data']['duration_ms'] >= 0 && event['data']['trace_id'] === null)
    t.ok(Math.abs(Date.parse(event['time']) - Date.now()) < 60_000, 'stamped with the time of the reply')
  }
  t.match(byRequest.get('named-2'), { subject: 'iris/2', data: { role: 'named', rows: [row] } }, 'a tensor request logs named rows')

  const labelled = events.find((e) => e['type'] === 'svc.label') as Event
  t.match(labelled, { subject: `iris/${first['model_version']}` })
  t.same(Object.keys(labelled['data']), ['token', 'model', 'version', 'build', 'truth', 'predicted', 'delay_s'])
  t.match(labelled['data'], { token, model: 'iris', version: first['model_version'], truth: 'setosa', predicted: first['outputs'][0]['data'][1] })
  t.ok(byRequest.get(first['id'])?.['data']['feedback_tokens'].includes(labelled['data']['token']), 'the label joins its prediction by token')

  const bytes = await readFile(path, 'utf8')
  t.notOk(bytes.includes('sepal_width') || bytes.includes('3.0123457') || bytes.includes('2.0987653'), 'the excluded input: neither its name nor its values')
})

t.test('a reply the server replaced is not logged', async (t) => {
  let app: App | undefined
  // An endpoint that logs as the serving one does, then answers a body JSON cannot hold: the server
  // writes its last-resort 500 instead, and the written hooks hear why.
  const replaced: RouteDef = {
    method: 'POST',
    path: '/test/replaced',
    handler: (ctx) => {
      const served = (app as App).models.resolve('iris') as ServedModel
      const features = new Float64Array(Object.values(irisRow(0)))
      const prediction = served.predictor.predict(features, 1) as Prediction
      const events = createPayloadEvents({ source: () => 'svc://test', exclude: [] })
      const log = createPayloadLog({ writer: (app as App).payloadLog as NonNullable<App['payloadLog']>, events, percent: 100 })
      const capture = {
        served,
        requestId: ctx.requestId,
        role: 'default',
        rows: 1,
        features,
        prediction,
        tokens: undefined,
        durationMs: 1,
        traceId: 'ab',
      } as const
      log.prediction(ctx, capture)
      return { kind: 'json', status: 200, body: { count: 1n } }
    },
  }
  const { path, running } = await startLogged(t, { default_version: '1' }, {}, [replaced])
  app = running.app
  for (let i = 0; i < 3; i++) t.equal((await fetch(`${running.base}/test/replaced`, { method: 'POST' })).status, 500)
  t.equal((await predictIris(running.base, { id: 'answered' })).status, 200)
  const events = await eventsWhen(path, 1)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(
    (await readLines(path)).map((line) => JSON.parse(line).data.request_id),
    ['answered'],
    'only the answered request',
  )
  t.equal(events.length, 1)
})

t.test("two instances log the same keys, apart from the canary's; a request without a key is drawn", async (t) => {
  const PERCENT = 30
  const env = { SVC_PAYLOAD_LOG_PERCENT: String(PERCENT) }
  const [a, b] = await Promise.all([startLogged(t, withCanary(PERCENT), env), startLogged(t, withCanary(PERCENT), env)])
  const N = 400
  const ids = Array.from({ length: N }, (_, i) => `customer-${i}`)
  const answers = await inParallel(N, 8, (i) => predictIris(a.running.base, { id: ids[i] }))
  await inParallel(N, 8, (i) => predictIris(b.running.base, { id: ids[i] }))
  const expected = ids.filter((id) => keyPoint(`log:${id}`) < PERCENT)
  const logged = async ({ path }: { path: string }) => (await eventsWhen(path, expected.length)).map((e) => e['data']['request_id'] as string).sort()
  const [onA, onB] = await Promise.all([logged(a), logged(b)])
  t.same(onA, [...expected].sort(), 'instance A logged exactly the keys whose log: point is below the percent')
  t.same(onB, onA, 'instance B the very same keys')
  const [low, high] = binomialBounds(N, PERCENT / 100)
  t.ok(expected.length >= low && expected.length <= high, `${expected.length} of ${N} keys logged`)
  const canary = new Set(answers.filter((x) => x.version === '2').map((x) => x.body['id'] as string))
  const both = onA.filter((id) => canary.has(id)).length
  t.ok(both < onA.length && both < canary.size, `${both} keys both logged and canary: the logged share is not the canary's`)

  // Without a key: Math.random(), within binomial bounds.
  const before = (await readLines(a.path)).length
  const M = 600
  await inParallel(M, 8, () => predictIris(a.running.base))
  const [lowM, highM] = binomialBounds(M, PERCENT / 100)
  await until(async () => (await readLines(a.path)).length - before >= lowM, 'keyless events')
  await new Promise((resolve) => setTimeout(resolve, 1200))
  const drawn = (await readLines(a.path)).length - before
  t.ok(drawn >= lowM && drawn <= highM, `${drawn} of ${M} keyless requests logged`)
})

t.test("a manifest's log percent overrides SVC_PAYLOAD_LOG_PERCENT at reload; a bad one is refused and the model stays READY", async (t) => {
  const { root, path, running } = await startLogged(t, { default_version: '1', log: { percent: 0 } })
  const detail = async (r: Running) => (await fetch(`${r.base}/api/v1/models/iris`)).json() as Promise<Record<string, unknown>>
  for (let i = 0; i < 20; i++) t.equal((await predictIris(running.base, { id: `off-${i}` })).status, 200)

  await writeManifest(root, { default_version: '1', log: { percent: 150 } })
  await running.app.models.reload()
  t.match(await detail(running), { state: 'READY', rollout_error: 'log.percent: must be a number from 0 to 100, is 150' })
  for (let i = 0; i < 20; i++) t.equal((await predictIris(running.base, { id: `refused-${i}` })).status, 200)

  await writeManifest(root, { default_version: '1', log: { percent: 100 } })
  await running.app.models.reload()
  t.match(await detail(running), { state: 'READY', rollout_error: null })
  t.equal((await predictIris(running.base, { id: 'on' })).status, 200)
  const events = await eventsWhen(path, 1)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(
    events.map((e) => e['data']['request_id']),
    ['on'],
    'nothing at 0 %, nor while the refused member kept 0 %; everything at 100 %',
  )
})

t.test('with SVC_PAYLOAD_LOG=/dev/full every prediction is still answered 200, and the events count failed', async (t) => {
  const root = await tempTree(t, irisVersions({ default_version: '1' }))
  const running = await startApp(t, { SVC_MODEL_STORE: root, SVC_PAYLOAD_LOG: '/dev/full' })
  const answers = await inParallel(200, 8, (i) => predictIris(running.base, { instances: [irisRow(i)] }))
  t.ok(
    answers.every((a) => a.status === 200),
    'all 200',
  )
  const failed = async (): Promise<number> => {
    const text = await (await fetch(`${running.base}/metrics`)).text()
    const line = text.split('\n').find((l) => l.startsWith('svc_payload_log_events_total{') && l.includes('outcome="failed"'))
    return Number(line?.split(' ').at(-1) ?? 0)
  }
  await until(async () => (await failed()) > 0, 'failed events counted')
  t.ok((await failed()) > 0)
})

t.test('with SVC_ROLLOUT_KEY_HEADER the header is the key sampled by', async (t) => {
  const { path, running } = await startLogged(t, { default_version: '1' }, { SVC_PAYLOAD_LOG_PERCENT: '50', SVC_ROLLOUT_KEY_HEADER: 'x-user' })
  const users = Array.from({ length: 60 }, (_, i) => `u${i}`)
  await inParallel(users.length, 4, (i) => predictIris(running.base, { id: `request-${i}` }, { 'x-user': users[i] as string }))
  const expected = users.flatMap((user, i) => (keyPoint(`log:${user}`) < 50 ? [`request-${i}`] : []))
  const events = await eventsWhen(path, expected.length)
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(events.map((e) => e['data']['request_id']).sort(), expected.sort(), "the header's keys, not the body's ids")
})
