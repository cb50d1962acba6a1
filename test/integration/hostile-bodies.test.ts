// Hostile request bodies against the real service: over the limit (declared, chunked, endless, to
// routes that read their body and routes that do not), the wrong media type, malformed, deeply
// nested and huge JSON, prototype-pollution keys, bytes that are not UTF-8.
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { startApp } from '../fixtures/app.js'
import { MAX_DETAIL, problem } from '../../lib/core/http/problem-body.js'
import { checkResponse, exchange, httpSeries, RawConnection, scrape, startServer, type RawResponse } from '../fixtures/raw-http.js'
import { testRoutes } from '../fixtures/routes.js'

const ENV = { SVC_DRAIN_TIMEOUT_MS: '200' }
const H = 'Host: svc.test\r\n'
const portOf = (base: string): number => Number(new URL(base).port)
/** The http_* series (name and labels, without values) of a scrape, sorted. */
const seriesOf = (text: string): string[] =>
  httpSeries(text)
    .map((line) => line.replace(/ \S+$/, ''))
    .sort()

const post = (path: string, body: string | Buffer, contentType = 'application/json'): Buffer => {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body
  return Buffer.concat([Buffer.from(`POST ${path} HTTP/1.1\r\n${H}Content-Type: ${contentType}\r\nContent-Length: ${bytes.length}\r\n\r\n`, 'latin1'), bytes])
}

/** Sends one request on a fresh connection and checks the answer's invariants. */
const answer = async (
  t: Test,
  port: number,
  bytes: string | Buffer,
  label: string,
): Promise<{ response: RawResponse; problem: Record<string, unknown> | undefined; isClosed: boolean }> => {
  const { responses, isClosed } = await exchange(port, bytes, { closeWithinMs: 100 })
  const response = responses[0] as RawResponse
  t.ok(response, `${label}: answered`)
  return { response, problem: checkResponse(t, response, label), isClosed }
}

/** Writes `chunk` as fast as the server takes it until the socket closes, or `limitMs` passes. */
const flood = (port: number, head: string, chunk: Buffer, limitMs: number): Promise<{ sent: number; answer: string; closedAfterMs: number }> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const started = performance.now()
    let sent = 0
    let answer = ''
    let isDone = false
    const finish = (): void => {
      if (isDone) return
      isDone = true
      clearTimeout(timer)
      socket.destroy()
      resolve({ sent, answer, closedAfterMs: performance.now() - started })
    }
    const timer = setTimeout(finish, limitMs)
    const pump = (): void => {
      while (!socket.destroyed && !isDone) {
        sent += chunk.length
        if (!socket.write(chunk)) return void socket.once('drain', pump)
      }
    }
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')))
    socket.on('error', finish)
    socket.on('close', finish)
    socket.once('connect', () => {
      socket.write(head)
      pump()
    })
  })

t.test('a declared Content-Length over the limit is 413 at once, on a route that reads its body and on one that does not', async (t) => {
  const { base } = await startApp(t, { ...ENV, SVC_MAX_BODY_BYTES: '1024' }, testRoutes())
  const port = portOf(base)
  for (const path of ['/test/size', '/', '/nope']) {
    const { response, problem, isClosed } = await answer(t, port, `POST ${path} HTTP/1.1\r\n${H}Content-Length: 100000000\r\n\r\n{`, path)
    t.equal(response.status, 413, `${path}: 413`)
    t.match(problem, { type: 'urn:svc:problem:payload-too-large', detail: /1024 bytes/ })
    t.ok(isClosed, `${path}: closed`)
  }
})

t.test('an endless chunked body is cut: 413 where the body is read, the route’s answer where it is not, and the connection closes', async (t) => {
  const { base, lines } = await startApp(t, { ...ENV, SVC_MAX_BODY_BYTES: '65536' }, testRoutes(100))
  const port = portOf(base)
  const chunk = Buffer.from(`4000\r\n${'y'.repeat(0x4000)}\r\n`, 'latin1')
  const cases: Array<[string, string, number]> = [
    ['reads its body', `POST /test/size HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n`, 413],
    ['does not read it (sync 405)', `POST / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n`, 405],
    ['does not read it (sync 200)', `GET / HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n`, 200],
    ['does not read it (async 200)', `GET /test/slow HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n`, 200],
    ['unknown path', `POST /nope HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n`, 404],
  ]
  for (const [name, head, status] of cases) {
    const { sent, answer, closedAfterMs } = await flood(port, head, chunk, 5000)
    t.match(answer, new RegExp(`^HTTP/1\\.1 ${status} `), `${name}: ${status}`)
    t.match(answer, /\r\nconnection: close\r\n/i, `${name}: Connection: close`)
    t.ok(closedAfterMs < 2000, `${name}: closed after ${Math.round(closedAfterMs)} ms, ${Math.round(sent / 1024)} KiB sent`)
  }
  t.equal((await fetch(base)).status, 200, 'the service still serves')
  t.match(
    lines().find((l) => l.event === 'request_completed' && l['path'] === '/test/size'),
    { status: 413 },
  )
})

t.test('a small unread Content-Length body keeps the connection usable', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  const conn = await RawConnection.open(portOf(base))
  t.teardown(() => conn.destroy())
  conn.send(`POST / HTTP/1.1\r\n${H}Content-Length: 5\r\n\r\nhello`)
  t.equal((await conn.next())?.status, 405)
  conn.send(`GET /test/empty HTTP/1.1\r\n${H}\r\n`)
  t.equal((await conn.next())?.status, 204, 'the next request on the same connection is answered')
  t.notOk(conn.isClosed)
})

t.test('a chunked body read in full keeps the connection usable', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  const conn = await RawConnection.open(portOf(base))
  t.teardown(() => conn.destroy())
  conn.send(`POST /test/size HTTP/1.1\r\n${H}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n`)
  const first = await conn.next()
  t.equal(first?.body.toString(), '{"bytes":3}')
  t.notMatch(first?.headers['connection'] ?? '', /close/)
  conn.send(`GET /test/empty HTTP/1.1\r\n${H}\r\n`)
  t.equal((await conn.next())?.status, 204)
})

t.test('a JSON endpoint refuses other media types with 415', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  const port = portOf(base)
  const body = JSON.stringify({ model: 'iris', instances: [{ sepal_length: 5, sepal_width: 3, petal_length: 1, petal_width: 0.2 }] })
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonp',
    'json',
    'application/json5',
    '*/*',
  ]) {
    const { response, problem } = await answer(t, port, post('/api/v1/predict', body, type), type)
    t.equal(response.status, 415, `${type}: 415`)
    t.match(problem, { type: 'urn:svc:problem:unsupported-media-type', error: String })
  }
  const bare = Buffer.from(`POST /api/v1/predict HTTP/1.1\r\n${H}Content-Length: ${body.length}\r\n\r\n${body}`, 'latin1')
  t.equal((await answer(t, port, bare, 'no Content-Type')).response.status, 415)
})

t.test('malformed, deeply nested, huge and non-UTF-8 JSON gets a clean 4xx', async (t) => {
  const { base } = await startApp(t, { ...ENV, SVC_MAX_BODY_BYTES: String(1024 * 1024) }, testRoutes())
  const port = portOf(base)
  const row = { sepal_length: 5, sepal_width: 3, petal_length: 1, petal_width: 0.2 }
  const cases: Array<[string, string | Buffer, number, string]> = [
    ['truncated JSON', '{"model":"iris","instances":[', 400, 'invalid-json'],
    ['a JSON string, not an object', '"iris"', 400, 'invalid-request'],
    ['null', 'null', 400, 'invalid-request'],
    ['an empty body', '', 400, 'invalid-json'],
    ['arrays nested 400 000 deep', `${'['.repeat(400_000)}${']'.repeat(400_000)}`, 400, 'invalid-request'],
    ['objects nested 100 000 deep', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, 400, 'invalid-request'],
    ['instances nested 200 000 deep', `{"model":"iris","instances":${'['.repeat(200_000)}${']'.repeat(200_000)}}`, 400, 'invalid-input'],
    [
      'a feature nested 200 000 deep',
      `{"model":"iris","instances":[{"sepal_length":${'['.repeat(200_000)}${']'.repeat(200_000)},"sepal_width":3,"petal_length":1,"petal_width":0.2}]}`,
      400,
      'invalid-input',
    ],
    ['50 000 instances (over the batch limit)', JSON.stringify({ model: 'iris', instances: Array.from({ length: 50_000 }, () => 1) }), 400, 'batch-too-large'],
    ['a 900 KiB model name', JSON.stringify({ model: 'x'.repeat(900 * 1024), instances: [row] }), 404, 'model-not-found'],
    ['a 900 KiB id', JSON.stringify({ model: 'iris', id: 'x'.repeat(900 * 1024), instances: [row] }), 400, 'invalid-request'],
    [
      'numbers past double range',
      '{"model":"iris","instances":[{"sepal_length":1e999,"sepal_width":3,"petal_length":1,"petal_width":0.2}]}',
      400,
      'invalid-input',
    ],
    [
      'bytes that are not UTF-8',
      Buffer.concat([Buffer.from('{"model":"ir'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(`is","instances":[${JSON.stringify(row)}]}`)]),
      404,
      'model-not-found',
    ],
    ['a UTF-16 body', Buffer.from('\ufeff{"model":"iris"}', 'utf16le'), 400, 'invalid-json'],
    ['a lone surrogate escape', '{"model":"\\ud800","instances":[{}]}', 404, 'model-not-found'],
  ]
  const round = async (): Promise<string[]> => {
    for (const [name, body, status, code] of cases) {
      const { response, problem } = await answer(t, port, post('/api/v1/predict', body), name)
      t.equal(response.status, status, `${name}: ${status}`)
      t.equal(problem?.['type'], `urn:svc:problem:${code}`, `${name}: ${code}`)
      t.ok(response.body.length < 4096, `${name}: the answer stays small (${response.body.length} bytes)`)
    }
    return seriesOf(await scrape(base))
  }
  t.same(await round(), await round(), 'a second round adds no metric series')
  // An endpoint that echoes what it parsed cannot serialise 400 000 levels: a 500, not a crash.
  const { response } = await answer(t, port, post('/test/echo', `${'['.repeat(400_000)}${']'.repeat(400_000)}`), 'echo of a deep body')
  t.equal(response.status, 500)
  t.equal((await fetch(base)).status, 200, 'the service still serves')
})

t.test('prototype-pollution keys are refused with a clean 400 and pollute nothing', async (t) => {
  const { base } = await startApp(t, ENV, testRoutes())
  const port = portOf(base)
  const row = '"sepal_length":5,"sepal_width":3,"petal_length":1,"petal_width":0.2'
  const bodies: Array<[string, string, string]> = [
    ['a top-level __proto__', `{"model":"iris","__proto__":{"polluted":true},"instances":[{${row}}]}`, 'invalid-request'],
    ['a top-level constructor.prototype', `{"model":"iris","constructor":{"prototype":{"polluted":true}},"instances":[{${row}}]}`, 'invalid-request'],
    ['a top-level prototype', `{"model":"iris","prototype":{"polluted":true},"instances":[{${row}}]}`, 'invalid-request'],
    ['__proto__ in an instance', `{"model":"iris","instances":[{${row},"__proto__":{"polluted":true}}]}`, 'invalid-input'],
    ['features given only through __proto__', `{"model":"iris","instances":[{"__proto__":{${row}}}]}`, 'invalid-input'],
    ['constructor.prototype in an instance', `{"model":"iris","instances":[{${row},"constructor":{"prototype":{"polluted":true}}}]}`, 'invalid-input'],
    ['an escaped __proto__ key', `{"model":"iris","instances":[{${row},"\\u005f_proto__":{"polluted":true}}]}`, 'invalid-input'],
    [
      '__proto__ as a tensor member (OIP)',
      '{"inputs":[{"name":"x","datatype":"FP64","shape":[1,4],"data":[1,2,3,4],"__proto__":{"polluted":true}}]}',
      'invalid-input',
    ],
  ]
  const round = async (): Promise<string[]> => {
    for (const [name, body, code] of bodies) {
      const path = name.endsWith('(OIP)') ? '/v2/models/iris/infer' : '/api/v1/predict'
      const { response, problem } = await answer(t, port, post(path, body), name)
      t.equal(response.status, 400, `${name}: 400`)
      t.equal(problem?.['type'], `urn:svc:problem:${code}`, `${name}: ${code}`)
    }
    return seriesOf(await scrape(base))
  }
  t.same(await round(), await round(), 'a second round adds no metric series')
  const probe: Record<string, unknown> = {}
  t.equal(probe['polluted'], undefined, 'Object.prototype is untouched')
  t.same(Object.keys(Object.prototype), [])
  t.equal((await fetch(base)).status, 200)
})

t.test('a problem quotes at most 1 KiB of any text, so no answer echoes a large part of a request back', async (t) => {
  const long = 'q'.repeat(5000)
  const body = problem(404, 'MODEL_NOT_FOUND', `Model ${long} not found`, { error: long, ready: false, rows: 3 })
  t.equal((body.detail as string).length, MAX_DETAIL)
  t.match(body.detail, /^Model q+…$/)
  t.equal((body['error'] as string).length, MAX_DETAIL)
  t.match(body, { ready: false, rows: 3, status: 404, title: 'Not Found' }, 'other members are kept as they are')
  t.equal(problem(400, 'X', 'short').detail, 'short')
})

t.test('a reply body JSON cannot hold is a 500 with a log line, never an exception in the server', async (t) => {
  const cycle: Record<string, unknown> = {}
  cycle['self'] = cycle
  const bodies: ReadonlyArray<readonly [string, unknown]> = [
    ['cycle', cycle],
    ['bigint', { n: 1n }],
    ['function', () => 1],
    ['symbol', Symbol('s')],
  ]
  const { base, lines } = await startServer(t, {
    routes: bodies.map(([name, value]) => ({ method: 'GET' as const, path: `/test/${name}`, handler: () => ({ kind: 'json', status: 200, body: value }) })),
  })
  for (const [name] of bodies) {
    const res = await fetch(`${base}/test/${name}`)
    t.equal(res.status, 500, `${name}: 500`)
    t.match(await res.json(), { type: 'urn:svc:problem:internal-error' })
  }
  t.equal(lines().filter((l) => l.event === 'request_failed').length, bodies.length)
  t.equal((await fetch(`${base}/metrics`)).status, 200, 'the server still serves')
})

t.test('a route that takes a JSON body has it read before its pipeline: split, chunked, over the limit, typed twice', async (t) => {
  const { base } = await startApp(t, { ...ENV, SVC_MAX_BODY_BYTES: '512' }, testRoutes())
  const port = portOf(base)
  const body = JSON.stringify({ model: 'iris', instances: [{ sepal_length: 5, sepal_width: 3, petal_length: 1, petal_width: 0.2 }] })

  // Head and body in separate packets, the body itself in two, with pauses: answered once it is whole.
  const conn = await RawConnection.open(port)
  t.teardown(() => conn.destroy())
  const bytes = post('/api/v1/predict', body)
  const split = bytes.indexOf('\r\n\r\n') + 4
  conn.send(bytes.subarray(0, split))
  await new Promise((resolve) => setTimeout(resolve, 30))
  conn.send(bytes.subarray(split, split + 10))
  await new Promise((resolve) => setTimeout(resolve, 30))
  conn.send(bytes.subarray(split + 10))
  const first = await conn.next()
  t.equal(first?.status, 200, 'a body in pieces is read whole')
  t.match(JSON.parse(first?.body.toString() ?? '{}'), { model_name: 'iris' })

  // Chunked framing, then a second request on the same connection.
  const chunked = `POST /api/v1/predict HTTP/1.1\r\n${H}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
  conn.send(`${chunked}${(10).toString(16)}\r\n${body.slice(0, 10)}\r\n${(body.length - 10).toString(16)}\r\n${body.slice(10)}\r\n0\r\n\r\n`)
  t.equal((await conn.next())?.status, 200, 'a chunked body is read whole, and the connection carries on')

  // A chunked body over the limit: 413 once the limit is passed, and the connection closes.
  const big = `{"model":"iris","instances":[${'{"sepal_length":5},'.repeat(40)}{}]}`
  const { response, isClosed } = await answer(t, port, `${chunked}${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`, 'chunked over the limit')
  t.equal(response.status, 413)
  t.ok(isClosed, 'the rest of an over-limit body is never read')

  // Content-Type twice: the first counts, as Node keeps it in req.headers.
  const twice = (first: string, second: string): string =>
    `POST /api/v1/predict HTTP/1.1\r\n${H}Content-Type: ${first}\r\nContent-Type: ${second}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  t.equal((await answer(t, port, twice('application/json', 'text/plain'), 'JSON first')).response.status, 200)
  t.equal((await answer(t, port, twice('text/plain', 'application/json'), 'text first')).response.status, 415)
})
