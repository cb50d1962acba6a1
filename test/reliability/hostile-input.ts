// A seeded batch of hostile requests (test/fixtures/fuzz.ts) against the real CLI for
// `npm run reliability`, over a few keep-alive raw sockets and many fresh ones. Each answer must be
// one of the statuses its request may get, never a 5xx, with no stack trace or internal path; the
// http_* series stay within their label sets; the service still serves at the end. The full checks
// are test/integration/fuzz.test.ts (20 000 requests).
import { createFuzzer, type Shot } from '../fixtures/fuzz.js'
import { httpSeries, LEAK, RawConnection, type RawResponse } from '../fixtures/raw-http.js'
import { closedPort } from '../fixtures/tcp.js'
import { startService, stopService, type Launch } from './service.js'

export type HostileInput = Readonly<{
  seed: number
  sent: number
  /** Requests of a hostile shape (everything but well-formed requests to known routes). */
  hostile: number
  byShape: Readonly<Record<string, number>>
  violations: readonly string[]
  /** http_* samples before and after the batch, and whether the service still answered GET / with 200. */
  seriesBefore: number
  series: number
  isServing: boolean
  exit: Readonly<{ code: number | null; signal: NodeJS.Signals | null }>
}>

const WELL_FORMED = new Set(['known', 'body-valid'])
const MAX_BODY = 65_536

const violation = (shot: Shot, response: RawResponse | undefined): string | undefined => {
  if (response === undefined) return shot.mayGoUnanswered ? undefined : 'no answer'
  if (response.status >= 500) return `a ${response.status}`
  if (!shot.expected.includes(response.status)) return `status ${response.status}, expected one of ${shot.expected.join(', ')}`
  if (LEAK.test(response.head + response.body.toString('latin1'))) return 'something internal leaked'
  return undefined
}

export const hostileInput = async ({
  launch,
  seed,
  requests,
  connections = 6,
}: Readonly<{ launch: Launch; seed: number; requests: number; connections?: number }>): Promise<HostileInput> => {
  const closed = `http://127.0.0.1:${await closedPort()}`
  const service = await startService(launch, {
    SVC_MAX_BODY_BYTES: String(MAX_BODY),
    SVC_DRAIN_TIMEOUT_MS: '200',
    // Should a request reach the rate upstreams, they refuse at once: nothing leaves the machine.
    SVC_RATE_COINGECKO_URL: closed,
    SVC_RATE_COINBASE_URL: closed,
  })
  try {
    const root = (await (await fetch(service.base)).json()) as { endpoints: Array<{ method: string; path: string }> }
    const getPaths = root.endpoints.filter((e) => e.method === 'GET' && !e.path.includes('{') && e.path !== '/api/external-data').map((e) => e.path)
    const fuzzer = createFuzzer(seed, { getPaths, maxBodyBytes: MAX_BODY })
    const seriesBefore = httpSeries(await (await fetch(`${service.base}/metrics`)).text()).length
    const byShape: Record<string, number> = {}
    const violations: string[] = []
    let sent = 0
    let hostile = 0

    const worker = async (): Promise<void> => {
      let conn: RawConnection | undefined
      while (sent < requests) {
        const shot = fuzzer.next()
        const index = sent++
        byShape[shot.shape] = (byShape[shot.shape] ?? 0) + 1
        if (!WELL_FORMED.has(shot.shape)) hostile++
        if (shot.isFresh || conn === undefined || conn.isClosed) {
          conn?.destroy()
          conn = await RawConnection.open(service.port)
        }
        conn.send(shot.bytes, shot.isHead)
        if (shot.shape === 'garbage') conn.socket.end()
        const response = await conn.next(5000)
        const found = violation(shot, response)
        if (found !== undefined && violations.length < 20) violations.push(`#${index} ${shot.shape}: ${found}`)
        if (shot.isFresh || response === undefined || /close/i.test(response.headers['connection'] ?? '')) {
          conn.destroy()
          conn = undefined
        }
      }
      conn?.destroy()
    }
    await Promise.all(Array.from({ length: connections }, worker))
    const series = httpSeries(await (await fetch(`${service.base}/metrics`)).text()).length
    const isServing = (await fetch(service.base)).status === 200
    return { seed, sent, hostile, byShape, violations, seriesBefore, series, isServing, exit: await stopService(service) }
  } catch (error: unknown) {
    await stopService(service)
    throw error
  }
}
