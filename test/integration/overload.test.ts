// Load shedding over real sockets: past SVC_MAX_IN_FLIGHT, or while the event loop lags past
// SVC_MAX_EVENT_LOOP_DELAY_MS, requests get 503 + Retry-After; probes and /metrics never do.
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { testRoutes } from '../fixtures/routes.js'
import type { RouteDef } from '../../lib/pipeline.js'

const shed = async (base: string, reason: string): Promise<number | undefined> =>
  sample(await (await fetch(`${base}/metrics`)).text(), 'svc_requests_shed_total', { reason, environment: 'dev' })

t.test('past SVC_MAX_IN_FLIGHT, new requests are shed at once; probes and /metrics still answer', async (t) => {
  const { base, lines } = await startApp(t, { SVC_MAX_IN_FLIGHT: '2' }, testRoutes(400))
  const slow = Array.from({ length: 5 }, () => fetch(`${base}/test/slow`))
  await new Promise((resolve) => setTimeout(resolve, 100))
  const started = performance.now()
  const during = await fetch(`${base}/api/v1/models`)
  t.equal(during.status, 503)
  t.ok(performance.now() - started < 200, 'answered without waiting for a slot')
  t.equal(during.headers.get('retry-after'), '1')
  t.match(await during.json(), { type: 'urn:svc:problem:overloaded', reason: 'max_in_flight' })
  for (const probe of ['/health', '/ready', '/startup', '/metrics']) t.equal((await fetch(`${base}${probe}`)).status, 200, `${probe} is never shed`)
  const statuses = (await Promise.all(slow)).map((response) => response.status).sort()
  t.same(statuses, [200, 200, 503, 503, 503], 'two admitted, three shed')
  t.equal(await shed(base, 'max_in_flight'), 4)
  t.equal(await shed(base, 'event_loop_delay'), 0)
  t.equal((await fetch(`${base}/api/v1/models`)).status, 200, 'back to normal once the slots free up')
  t.ok(
    lines().some((line) => line.event === 'request_completed' && line['status'] === 503),
    'shed requests are logged like any answer',
  )
})

t.test('while the event loop lags past SVC_MAX_EVENT_LOOP_DELAY_MS, requests are shed until it catches up', async (t) => {
  const block: RouteDef = {
    method: 'GET',
    path: '/test/block',
    handler: () => {
      const until = performance.now() + 300
      while (performance.now() < until) {
        // CPU-bound work holding the loop
      }
      return { kind: 'json', status: 204 }
    },
  }
  const { base } = await startApp(t, { SVC_MAX_EVENT_LOOP_DELAY_MS: '100' }, [block])
  const blocking = fetch(`${base}/test/block`)
  await new Promise((resolve) => setTimeout(resolve, 50))
  const behind = fetch(`${base}/api/v1/models`)
  const probe = fetch(`${base}/ready`)
  t.equal((await blocking).status, 204)
  const answer = await behind
  t.equal(answer.status, 503, 'a request that waited behind the blocked loop is shed')
  t.match(await answer.json(), { reason: 'event_loop_delay' })
  t.equal((await probe).status, 200, 'the probe that waited with it is answered')
  t.equal(await shed(base, 'event_loop_delay'), 1)
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal((await fetch(`${base}/api/v1/models`)).status, 200, 'admitted again once the loop is on time')
})
