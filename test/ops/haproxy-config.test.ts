// ops/haproxy/haproxy.cfg: HAProxy accepts it without a warning; its timings keep the three rules
// ops/README.md states, against the service's own defaults; and a real HAProxy running it retries
// an idempotent request that got no answer but never a POST, answers no 502 when a kept-alive
// connection closes under a request, closes its idle connections to the service within seconds,
// and sends a label batch sent again to the instance that scored it, which refuses it. The
// instances under load and a rolling restart are test/ops/haproxy.test.ts.
import { once } from 'node:events'
import { type IncomingMessage, request, type ServerResponse } from 'node:http'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { readConfig } from '../../lib/config/config.js'
import { INTERVAL_S } from '../../lib/endpoints/insights.js'
import { LIMITS } from '../../lib/server/server.js'
import { startApp } from '../fixtures/app.js'
import { backendDirectives, directives, readShipped, SHIPPED, startHaproxy, timings, waitForStatus } from '../fixtures/haproxy.js'
import { findTool } from '../fixtures/tools.js'
import { run, said } from './fixtures/ops.js'

/** RFC 9110 §9.2.2: the methods whose intended effect is the same however often they are sent. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'])

t.test('haproxy -c accepts haproxy.cfg, without a warning', async (t) => {
  const binary = await findTool(t, 'haproxy', 'haproxy')
  if (binary === undefined) return
  const result = await run(binary, ['-c', '-f', SHIPPED])
  t.equal(result.code, 0, said('haproxy -c', result))
  t.notMatch(result.stdout + result.stderr, /WARNING|ALERT/, 'no warning')
})

t.test('health checks take a stopping instance out within the shutdown delay', async (t) => {
  const { inter, fall, rise, timeout } = timings(await readShipped())
  const lines = directives(await readShipped()).map((w) => w.join(' '))
  t.ok(lines.includes('option httpchk GET /ready'), 'checks ask /ready')
  t.ok(lines.includes('http-check expect status 200'), 'and only 200 passes')
  const check = timeout['check'] as number
  for (const environment of ['prod', 'stage']) {
    const { shutdownDelayMs } = readConfig({ SVC_ENVIRONMENT: environment })
    t.ok(inter * fall < shutdownDelayMs, `${environment}: inter × fall = ${inter} × ${fall} ms < SVC_SHUTDOWN_DELAY_MS ${shutdownDelayMs} ms`)
    t.ok(
      fall * (inter + check) < shutdownDelayMs,
      `${environment}: even with every check taking its whole timeout, fall × (inter + timeout check) = ${fall * (inter + check)} ms < ${shutdownDelayMs} ms`,
    )
  }
  const { health } = readConfig({})
  t.ok(
    check > health.timeoutMs,
    `timeout check ${check} ms > SVC_HEALTH_TIMEOUT_MS ${health.timeoutMs} ms: /ready answers in time even when a dependency hangs`,
  )
  t.ok(rise >= 2, `rise ${rise}: one lucky answer does not bring an instance back`)
})

t.test("idle timeouts agree with the service's keep-alive", async (t) => {
  const { timeout } = timings(await readShipped())
  // The default: the timings are for an instance run as the units run it, with the setting left alone.
  const keepAlive = readConfig({}).keepAliveTimeoutMs
  t.equal(
    timeout['http-keep-alive'],
    keepAlive,
    `clients' side: idle connections kept ${keepAlive} ms, what svc's Keep-Alive header (passed on by HAProxy) tells clients`,
  )
  t.ok((timeout['client'] as number) >= keepAlive, `timeout client ${timeout['client']} ms does not cut an idle client connection short`)
  t.ok((timeout['http-request'] as number) <= LIMITS.headersTimeoutMs, "a request's headers are given no longer than svc gives them")
  t.ok(
    (timeout['server'] as number) > INTERVAL_S.max * 1000,
    `timeout server ${timeout['server']} ms outlasts the longest gap in an event stream (${INTERVAL_S.max} s)`,
  )
  t.ok((timeout['server'] as number) < keepAlive, 'and is no idle timeout in disguise')
})

t.test('retries: at once on another instance, and of idempotent requests only', async (t) => {
  const text = await readShipped()
  const { retries, retryOn, redispatch } = timings(text)
  const lines = directives(text)
  t.same(retryOn, ['conn-failure', 'empty-response', 'response-timeout'], 'retry-on: a refused connection, no answer, or no answer in time')
  t.ok(retries >= 1, `retries ${retries}`)
  t.equal(redispatch, 1, 'option redispatch 1: every retry goes to another instance')
  t.ok(
    lines.some((w) => w.join(' ') === 'http-reuse safe'),
    'http-reuse safe: the first request of a client connection never rides a reused connection',
  )

  const disable = lines.filter((w) => w[0] === 'http-request' && w[1] === 'disable-l7-retry')
  t.equal(disable.length, 1, 'one http-request disable-l7-retry rule')
  const [, , keyword, acl] = disable[0] ?? []
  t.equal(keyword, 'unless', 'retries stay enabled only for the requests an ACL names')
  const methods = lines.filter((w) => w[0] === 'acl' && w[1] === acl && w[2] === 'method').flatMap((w) => w.slice(3))
  t.ok(methods.length > 0, `acl ${acl} lists methods`)
  t.same(
    methods.filter((m) => !IDEMPOTENT.has(m)),
    [],
    `acl ${acl} names idempotent methods only (${methods.join(' ')})`,
  )
  t.ok(methods.includes('GET') && methods.includes('HEAD'), 'GET and HEAD are retried')
})

type Attempt = Readonly<{ server: string; method: string; path: string }>

/**
 * A server that answers HAProxy's health checks, answers the first `answered` requests on each
 * connection with 200, and drops the connection on the next one, unanswered: what HAProxy sees
 * when an instance dies mid-request, or closes a kept-alive connection as a request arrives.
 */
const droppingServer = async (t: Test, name: string, attempts: Attempt[], answered = 0): Promise<number> => {
  const server = createServer((socket: Socket) => {
    let buffer = ''
    let served = 0
    socket.on('error', () => {})
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString('latin1')
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n')
        if (end < 0) return
        const head = buffer.slice(0, end)
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
        if (buffer.length < end + 4 + length) return
        buffer = buffer.slice(end + 4 + length)
        const [method = '', path = ''] = head.split(' ')
        if (path === '/ready') return void socket.end('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n')
        attempts.push({ server: name, method, path })
        if (served++ === answered) return void socket.destroy()
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
      }
    })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return (server.address() as AddressInfo).port
}

/** A client connection written by hand, to send a second request on it. */
const rawClient = async (port: number) => {
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  let received = ''
  socket.setEncoding('latin1')
  socket.on('data', (d: string) => (received += d))
  const closed = once(socket, 'close').then(() => true)
  return {
    received: () => received,
    /** Sends a request and waits up to `withinMs` for `answers` status lines in all, or the close. */
    send: async (text: string, answers: number, withinMs = 5000): Promise<boolean> => {
      socket.write(text)
      const deadline = performance.now() + withinMs
      while ((received.match(/HTTP\/1\.1 \d{3}/g) ?? []).length < answers && performance.now() < deadline) {
        if (await Promise.race([closed, sleep(20).then(() => false)])) return true
      }
      return socket.destroyed
    },
    close: () => socket.destroy(),
  }
}

const send = (base: string, method: string, body?: string): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const req = request(`${base}/work`, { method, agent: false, headers: body === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res))
    })
    req.on('error', reject)
    req.end(body)
  })

t.test('a real HAProxy retries a GET that got no answer on the other instance, and never a POST', async (t) => {
  const binary = await findTool(t, 'haproxy', 'haproxy')
  if (binary === undefined) return
  const { retries } = timings(await readShipped())
  const attempts: Attempt[] = []
  const servers = [
    { name: 'one', port: await droppingServer(t, 'one', attempts) },
    { name: 'two', port: await droppingServer(t, 'two', attempts) },
  ]
  const haproxy = await startHaproxy(t, binary, servers)

  const get = await send(haproxy.base, 'GET')
  t.equal(get.statusCode, 502, 'the GET fails only once every attempt is spent')
  t.equal(attempts.length, 1 + retries, `sent ${1 + retries} times: once, then ${retries} retries`)
  t.ok(
    attempts.every((a, i) => i === 0 || a.server !== attempts[i - 1]?.server),
    `each retry on the other instance (${attempts.map((a) => a.server).join(', ')})`,
  )

  attempts.length = 0
  const post = await send(haproxy.base, 'POST', '{"model":"iris"}')
  t.equal(post.statusCode, 502, 'the POST fails at once')
  t.same(
    attempts.map((a) => a.method),
    ['POST'],
    'sent once: a POST that reached an instance is never sent again',
  )
})

t.test('a request that meets a kept-alive connection as svc closes it: never a 502, a POST never sent twice', async (t) => {
  const binary = await findTool(t, 'haproxy', 'haproxy')
  if (binary === undefined) return
  const attempts: Attempt[] = []
  const haproxy = await startHaproxy(t, binary, [{ name: 'one', port: await droppingServer(t, 'one', attempts, 1) }])
  const post = 'POST /two HTTP/1.1\r\nHost: svc\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'
  const get = 'GET /two HTTP/1.1\r\nHost: svc\r\n\r\n'

  // The first request of a client connection always gets a connection of its own ("safe" reuse);
  // the second may reuse it, and here that connection closes under it.
  const first = await rawClient(haproxy.port)
  await first.send('GET /one HTTP/1.1\r\nHost: svc\r\n\r\n', 1)
  const isClosed = await first.send(post, 2)
  first.close()
  t.same(
    attempts.map((a) => `${a.method} ${a.path}`),
    ['GET /one', 'POST /two'],
    'the POST reused the connection the first answer came on, and was sent once',
  )
  t.ok(isClosed, 'HAProxy closed the client connection')
  t.equal(
    (first.received().match(/HTTP\/1\.1 \d{3}/g) ?? []).length,
    1,
    'without an answer (no 502): the client sees what svc itself would show it, and may resend',
  )

  attempts.length = 0
  const second = await rawClient(haproxy.port)
  await second.send('GET /one HTTP/1.1\r\nHost: svc\r\n\r\n', 1)
  await second.send(get, 2)
  second.close()
  t.same(second.received().match(/HTTP\/1\.1 \d{3}/g), ['HTTP/1.1 200', 'HTTP/1.1 200'], 'a GET in the same spot is answered 200')
  t.same(
    attempts.map((a) => `${a.method} ${a.path}`),
    ['GET /one', 'GET /two', 'GET /two'],
    'after a retry on a new connection',
  )
})

t.test('HAProxy closes its idle connections to svc within seconds, where svc would wait 65 s', async (t) => {
  const binary = await findTool(t, 'haproxy', 'haproxy')
  if (binary === undefined) return
  const { timeout } = timings(await readShipped())
  const { app, base } = await startApp(t)
  const port = Number(new URL(base).port)

  // The connections that carried requests (HAProxy's health checks close theirs at once).
  type Idle = { idleSince: number; closedAfterMs?: number }
  const used = new Map<Socket, Idle>()
  app.server.http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/ready') return
    let entry = used.get(req.socket)
    if (entry === undefined) {
      const fresh: Idle = { idleSince: performance.now() }
      req.socket.on('close', () => (fresh.closedAfterMs = performance.now() - fresh.idleSince))
      used.set(req.socket, fresh)
      entry = fresh
    }
    const current = entry
    res.on('finish', () => (current.idleSince = performance.now()))
  })
  const haproxy = await startHaproxy(t, binary, [{ name: 'svc', port }])

  // Clients at once, so HAProxy opens many connections and pools them.
  const answers = await Promise.all(Array.from({ length: 20 }, () => send(haproxy.base, 'GET')))
  t.same(new Set(answers.map((r) => r.statusCode)), new Set([404]), 'answered by svc (no such route)')
  t.equal(
    answers[0]?.headers['keep-alive'],
    `timeout=${(timeout['http-keep-alive'] as number) / 1000}`,
    "clients are told HAProxy's own idle timeout: svc's Keep-Alive header passes through, and the two agree",
  )

  // Every pool-purge-delay HAProxy closes about half of the idle connections beyond those it
  // estimates it needs. HAProxy 2.6 now and then holds that estimate at one, and keeps the last
  // connection until svc closes it: the case the test above covers.
  const withinMs = 20_000
  const open = () => [...used.values()].filter((e) => e.closedAfterMs === undefined).length
  const deadline = performance.now() + withinMs
  while (open() > 1 && performance.now() < deadline) await sleep(250)
  const closedAfter = [...used.values()].flatMap((e) => (e.closedAfterMs === undefined ? [] : [e.closedAfterMs]))
  t.ok(
    open() <= 1,
    `HAProxy closed ${closedAfter.length} of ${used.size} idle connections, all but at most one (show servers conn: ${JSON.stringify(await haproxy.server('svc').then((r) => ({ idle: r['idle_conn_cur'], safe: r['safe_conn_cur'], needed: r['need_conn_est'] })))})`,
  )
  t.ok(
    Math.max(...closedAfter) < withinMs && withinMs < readConfig({}).keepAliveTimeoutMs,
    `each after at most ${(Math.max(...closedAfter) / 1000).toFixed(1)} s idle, where svc would have waited ${readConfig({}).keepAliveTimeoutMs / 1000} s`,
  )
})

t.test('labels go to a backend that picks the instance by a hash of the body, over the same instances', async (t) => {
  const text = await readShipped()
  const lines = directives(text).map((w) => w.join(' '))
  const acl = lines.map((l) => /^acl (\S+) path \/api\/v1\/feedback$/.exec(l)?.[1]).find((name) => name !== undefined)
  t.ok(acl, 'an acl names the feedback path')
  t.ok(lines.includes(`use_backend svc_feedback if ${acl}`), 'and sends it to backend svc_feedback')
  const feedback = backendDirectives(text, 'svc_feedback').map((w) => w.join(' '))
  for (const line of ['balance hash req.body', 'hash-type consistent', 'option http-buffer-request'])
    t.ok(feedback.includes(line), `${line}: the same body, the same instance, and a changed pool moves only the changed share`)
  t.same(
    backendDirectives(text, 'svc_feedback')
      .findLast((w) => w[0] === 'retry-on')
      ?.slice(1),
    ['conn-failure'],
    'a batch is retried only when nothing was sent: never scored twice by a retry',
  )

  const servers = (backend: string) => backendDirectives(text, backend).filter((w) => w[0] === 'server')
  t.same(
    servers('svc_feedback').map((w) => w.slice(1, 3)),
    servers('svc').map((w) => w.slice(1, 3)),
    'the same instances, by name and address',
  )
  t.same(
    servers('svc_feedback').map((w) => w.slice(3)),
    servers('svc').map((w) => ['track', `svc/${w[1]}`]),
    "each tracks its namesake's health checks",
  )
})

const SECRET = 'fleet-secret-for-haproxy-tests!!'

t.test('a real HAProxy sends a label batch sent again to the instance that scored it, which refuses it as duplicate', async (t) => {
  const binary = await findTool(t, 'haproxy', 'haproxy')
  if (binary === undefined) return
  const instances = await Promise.all(['a', 'b', 'c'].map(async (name) => ({ name, ...(await startApp(t, { SVC_FEEDBACK_SECRET: SECRET })) })))
  // Which instance each label request reached, in order.
  const reached: string[] = []
  for (const { name, app } of instances)
    app.server.http.on('request', (req: IncomingMessage) => {
      if (req.url === '/api/v1/feedback') reached.push(name)
    })
  const haproxy = await startHaproxy(
    t,
    binary,
    instances.map(({ name, base }) => ({ name, port: Number(new URL(base).port) })),
  )
  for (const { name } of instances) await waitForStatus(haproxy, name, 'UP')

  // Tokens from one instance: any instance of the fleet scores them (one secret).
  const sizes = [...Array.from({ length: 12 }, () => 3), 400]
  const rows = Array.from({ length: sizes.reduce((a, b) => a + b) }, (_, i) => ({
    sepal_length: 4.5 + (i % 30) / 10,
    sepal_width: 2 + (i % 20) / 10,
    petal_length: 1 + (i % 50) / 10,
    petal_width: 0.1 + (i % 25) / 10,
  }))
  const predicted = await fetch(`${instances[0]?.base}/api/v1/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'iris', instances: rows }),
  })
  const tokens = ((await predicted.json()) as { feedback_tokens: string[] }).feedback_tokens
  t.equal(tokens.length, rows.length, 'a token per row')

  const post = async (body: string) => {
    const res = await fetch(`${haproxy.base}/api/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    return { status: res.status, ...((await res.json()) as { accepted: number; refused: Array<{ reason: string }> }) }
  }
  let start = 0
  const first: string[] = []
  for (const size of sizes) {
    const body = JSON.stringify({ feedback: tokens.slice(start, start + size).map((token) => ({ token, truth: 'setosa' })) })
    start += size
    const sent = await post(body)
    const again = await post(body)
    const [to, againTo] = reached.slice(-2)
    first.push(to as string)
    t.same([sent.status, sent.accepted], [200, size], `${size} labels (${body.length} bytes) scored on ${to}`)
    t.equal(againTo, to, `sent again, the same body reached ${to} again`)
    t.same(
      [again.accepted, again.refused.map((r) => r.reason)],
      [0, Array(size).fill('duplicate')],
      'which refused every label as duplicate: none scored twice',
    )
  }
  t.ok(new Set(first).size > 1, `batches spread over the instances (${first.join(', ')})`)
})
