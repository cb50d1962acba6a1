// Faults: the OTLP collector down, up, down again and up again, on the port the service exports to
// (a real gRPC receiver, stopped and started there). Requests never wait on the collector; each
// failing period is reported once and counted; each return is noticed and logged by the exporter
// itself, and the spans of later requests arrive again, none of them dropped.
import { status as GrpcStatus } from '@grpc/grpc-js'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startApp, type LogLine, type Running } from '../fixtures/app.js'
import { sample } from '../fixtures/metrics-text.js'
import { startReceiver, type Receiver } from '../fixtures/otlp-receiver.js'
import { closedPort } from '../fixtures/tcp.js'

/** Requests served while the collector is away: all answered, and quickly. */
const REQUESTS = 30
/** gRPC's first reconnect backoff (INITIAL_BACKOFF_MS, grpc-js 1.14): what a request waiting on the channel would wait. */
const GRPC_INITIAL_BACKOFF_MS = 1000
const DROPPED = { exporter: 'otlp', reason: 'export_failed', environment: 'dev' }

const waitFor = async (what: string, isDone: () => boolean, timeoutMs = 20_000): Promise<void> => {
  const deadline = performance.now() + timeoutMs
  while (!isDone()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(20)
  }
}

const events = (running: Running, event: string): LogLine[] => running.lines().filter((l) => l.event === event)

const dropped = async (running: Running): Promise<number> => sample((await running.app.metrics.render(undefined)).text, 'svc_spans_dropped_total', DROPPED) ?? 0

/** svc_spans_dropped_total{reason="export_failed"} once it reaches `atLeast`, or after 5 s. */
const droppedReaching = async (running: Running, atLeast: number): Promise<number> => {
  const deadline = performance.now() + 5000
  let count = await dropped(running)
  while (count < atLeast && performance.now() < deadline) {
    await sleep(20)
    count = await dropped(running)
  }
  return count
}

/** Serves REQUESTS requests with no collector to export to: their statuses, and the slowest in ms. */
const serveWhileDown = async (running: Running): Promise<{ statuses: number[]; slowest: number }> => {
  const statuses: number[] = []
  let slowest = 0
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now()
    const res = await fetch(`${running.base}/`)
    await res.arrayBuffer()
    slowest = Math.max(slowest, performance.now() - started)
    statuses.push(res.status)
  }
  return { statuses, slowest }
}

/** Keeps serving until spans reach the new `receiver`: gRPC reconnects by itself, after its backoff. */
const serveUntilExported = async (running: Running, receiver: Receiver): Promise<void> => {
  const deadline = performance.now() + 20_000
  while (receiver.spans().length === 0) {
    if (performance.now() > deadline) throw new Error('no span reached the collector within 20 s of its return')
    await (await fetch(`${running.base}/`)).arrayBuffer()
    await sleep(50)
  }
}

t.test('the collector down, up, down again and up again: requests never wait, each outage is reported once, each return by itself', async (t) => {
  const port = await closedPort()
  const running = await startApp(t, { OTLP_ENDPOINT: `127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '5' })
  let receiver: Receiver | undefined
  t.teardown(() => receiver?.close())

  for (const [round, label] of [
    [1, 'down'],
    [2, 'down again'],
  ] as const) {
    // Down: nobody listens on the collector's port.
    const droppedBefore = await dropped(running)
    const { statuses, slowest } = await serveWhileDown(running)
    t.same(statuses, Array(REQUESTS).fill(200), `${label}: every request answered`)
    // Under one reconnect backoff, which a request waiting on the channel would spend; all of it is
    // slack for a loaded machine.
    t.ok(slowest < GRPC_INITIAL_BACKOFF_MS, `${label}: the slowest of ${REQUESTS} requests took ${slowest.toFixed(0)} ms`)
    await waitFor(`trace_export_failed number ${round}`, () => events(running, 'trace_export_failed').length >= round)
    t.ok(
      (await droppedReaching(running, droppedBefore + REQUESTS)) >= droppedBefore + REQUESTS,
      `${label}: every span of those requests counted in svc_spans_dropped_total`,
    )
    t.match(events(running, 'trace_export_failed')[round - 1], { level: 'error', exporter: 'otlp', code: 'StatusCode.UNAVAILABLE' })
    t.equal(events(running, 'trace_export_failed').length, round, `${label}: reported once, not once per batch`)

    // Up: a collector returns on the same port; nothing is done to the service.
    receiver = await startReceiver(port)
    await serveUntilExported(running, receiver)
    await waitFor(`trace_export_recovered number ${round}`, () => events(running, 'trace_export_recovered').length >= round)
    t.match(events(running, 'trace_export_recovered')[round - 1], { level: 'info', exporter: 'otlp', failed_for_ms: Number, spans_dropped: Number })

    // Back to normal: every span of a burst of requests arrives, and none is dropped.
    const settled = await dropped(running)
    const marker = `/after-round-${round}/`
    for (let i = 0; i < 10; i++) await (await fetch(`${running.base}${marker}${i}`)).arrayBuffer()
    const ofBurst = (): number => (receiver as Receiver).spans().filter((s) => String(s.attributes['url.path']?.value).startsWith(marker)).length
    await waitFor('the spans of the burst', () => ofBurst() === 10, 5000)
    t.equal(ofBurst(), 10, `up after ${label}: every span of 10 requests reached the collector`)
    t.equal(await dropped(running), settled, `up after ${label}: no span dropped`)

    await receiver.close()
    receiver = undefined
  }
})

t.test('a collector that refuses the data for a while, then accepts it again: reported once, recovered by itself', async (t) => {
  const receiver = await startReceiver()
  t.teardown(() => receiver.close())
  const running = await startApp(t, { OTLP_ENDPOINT: receiver.hostPort, OTEL_BSP_SCHEDULE_DELAY: '20' })
  receiver.refuseWith(GrpcStatus.RESOURCE_EXHAUSTED)
  const { statuses } = await serveWhileDown(running)
  t.same(statuses, Array(REQUESTS).fill(200))
  t.ok((await droppedReaching(running, REQUESTS)) >= REQUESTS, 'every span of those requests refused and counted')
  t.match(events(running, 'trace_export_failed'), [{ code: 'StatusCode.RESOURCE_EXHAUSTED', message: 'refused by the test receiver' }])

  receiver.refuseWith(undefined)
  await serveUntilExported(running, receiver)
  await waitFor('trace_export_recovered', () => events(running, 'trace_export_recovered').length > 0)
  t.equal(events(running, 'trace_export_failed').length, 1, 'one report for the whole refusal')
  t.ok(Number(events(running, 'trace_export_recovered')[0]?.['spans_dropped']) >= REQUESTS, 'the recovery line says what the refusal cost')
})
