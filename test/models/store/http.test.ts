// The HTTP store against real servers on loopback: conditional GET and 304, servers without ETag
// or Last-Modified, failures by status, timeouts, the size cap, index.json, credentials.
import { writeFile } from 'node:fs/promises'
import type { ServerResponse } from 'node:http'
import { join } from 'node:path'
import { inspect } from 'node:util'
import t from 'tap'
import type { StoreErrorCode } from '../../../lib/models/store/error.js'
import { createHttpStore } from '../../../lib/models/store/http.js'
import { artifactServer, contentEtag, tempTree } from '../../fixtures/model-store.js'
import { answeringServer, closedPort, httpServer, silentServer } from '../../fixtures/tcp.js'

const OPTIONS = { timeoutMs: 1000, maxBytes: 1024 }
const FILES = { 'index.json': '{"models":["iris"]}', 'iris/manifest.json': '{"default_version":"1"}', 'iris/1/model.json': '{"v":1}' }

t.test('a second read of a manifest sends If-None-Match, gets 304 and serves the bytes it kept', async (t) => {
  const root = await tempTree(t, FILES)
  const server = await artifactServer(t, root)
  const store = createHttpStore(new URL(server.url), OPTIONS)
  t.equal(store.description, `${server.url}/`)
  const first = await store.read('iris/manifest.json')
  const second = await store.read('iris/manifest.json')
  t.same(second, first)
  t.not(second, first, 'a fresh Buffer each time')
  const etag = contentEtag(Buffer.from('{"default_version":"1"}'))
  t.match(server.received, [
    {
      method: 'GET',
      url: '/models/iris/manifest.json',
      headers: { 'if-none-match': undefined, accept: 'application/json', 'accept-encoding': 'identity', authorization: undefined },
    },
    { method: 'GET', url: '/models/iris/manifest.json', headers: { 'if-none-match': etag } },
  ])

  await writeFile(join(root, 'iris/manifest.json'), '{"default_version":"2"}')
  const stat = await store.stat('iris/manifest.json')
  t.not(stat.etag, etag)
  t.equal(stat.etag, contentEtag(Buffer.from('{"default_version":"2"}')))
  t.same(await store.read('iris/manifest.json'), Buffer.from('{"default_version":"2"}'), 'a changed file answers 200 with its new bytes')
  t.same(await store.read('iris/manifest.json'), Buffer.from('{"default_version":"2"}'))
  t.match(server.received.slice(2), [
    { method: 'HEAD', url: '/models/iris/manifest.json' },
    { method: 'GET', headers: { 'if-none-match': etag } },
    { method: 'GET', headers: { 'if-none-match': stat.etag } },
  ])
})

t.test("a version's files are never kept: each read is a plain GET", async (t) => {
  const server = await artifactServer(t, await tempTree(t, FILES))
  const store = createHttpStore(new URL(server.url), OPTIONS)
  await store.read('iris/1/model.json')
  await store.read('iris/1/model.json')
  t.same(
    server.received.map(({ headers }) => headers['if-none-match']),
    [undefined, undefined],
    'nothing kept to stand for a 304, so none is asked for',
  )
})

t.test('the index and the manifests of the models it lists are kept; a model it drops loses its manifest', async (t) => {
  const root = await tempTree(t, { ...FILES, 'cars/manifest.json': '{"default_version":"1"}', 'index.json': '{"models":["iris","cars"]}' })
  const server = await artifactServer(t, root)
  const store = createHttpStore(new URL(server.url), OPTIONS)
  await store.list()
  await store.read('iris/manifest.json')
  await store.read('cars/manifest.json')
  await writeFile(join(root, 'index.json'), '{"models":["iris"]}')
  t.same(await store.list(), ['iris'])
  await store.read('iris/manifest.json')
  await store.read('cars/manifest.json')
  await store.list()
  t.same(
    server.received.map(({ url, headers }) => [url, headers['if-none-match'] !== undefined]),
    [
      ['/models/index.json', false],
      ['/models/iris/manifest.json', false],
      ['/models/cars/manifest.json', false],
      ['/models/index.json', true],
      ['/models/iris/manifest.json', true],
      ['/models/cars/manifest.json', false],
      ['/models/index.json', true],
    ],
    'cars, no longer listed, is read afresh',
  )
})

t.test('the etags kept are per path', async (t) => {
  const server = await artifactServer(t, await tempTree(t, FILES))
  const store = createHttpStore(new URL(`${server.url}/`), OPTIONS)
  await store.read('iris/manifest.json')
  await store.read('iris/1/model.json')
  t.match(server.received, [{ headers: { 'if-none-match': undefined } }, { headers: { 'if-none-match': undefined } }])
})

t.test('without ETag, read is a plain GET and stat derives an etag from Last-Modified and the size', async (t) => {
  const root = await tempTree(t, FILES)
  const server = await artifactServer(t, root, { hasEtag: false })
  const store = createHttpStore(new URL(server.url), OPTIONS)
  await store.read('iris/manifest.json')
  t.same(await store.read('iris/manifest.json'), Buffer.from(FILES['iris/manifest.json']))
  t.equal(server.received[1]?.headers['if-none-match'], undefined)
  const stat = await store.stat('iris/manifest.json')
  t.equal(stat.size, 23)
  t.equal(stat.mtimeMs % 1000, 0, 'Last-Modified has whole seconds')
  t.ok(stat.mtimeMs > Date.now() - 60_000)
  t.equal(stat.etag, `W/"${stat.mtimeMs.toString(16)}-17"`)
})

t.test('with neither ETag nor Last-Modified, stat fails and read still works', async (t) => {
  const server = await artifactServer(t, await tempTree(t, FILES), { hasEtag: false, hasLastModified: false })
  const store = createHttpStore(new URL(server.url), OPTIONS)
  await t.rejects(store.stat('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: `HEAD ${server.url}/iris/manifest.json answered with neither ETag nor Last-Modified, so a change cannot be seen`,
  })
  t.same(await store.read('iris/manifest.json'), Buffer.from(FILES['iris/manifest.json']))
})

t.test('with an ETag but no Last-Modified, mtimeMs is 0', async (t) => {
  const server = await artifactServer(t, await tempTree(t, FILES), { hasLastModified: false })
  t.match(await createHttpStore(new URL(server.url), OPTIONS).stat('iris/manifest.json'), { size: 23, mtimeMs: 0, etag: /^"/ })
})

t.test('a HEAD answered without Content-Length is an upstream error', async (t) => {
  const server = await answeringServer(t, ['HTTP/1.1 200 OK\r\nETag: "a"\r\nConnection: close\r\n\r\n'])
  const url = `http://127.0.0.1:${server.port}/`
  await t.rejects(createHttpStore(new URL(url), OPTIONS).stat('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: `HEAD ${url}iris/manifest.json answered without a Content-Length`,
  })
})

t.test('an ETag dropped by the server is forgotten', async (t) => {
  let hasEtag = true
  const received: Array<string | undefined> = []
  const server = await httpServer(t, (req, res) => {
    received.push(req.headers['if-none-match'])
    res.writeHead(200, hasEtag ? { etag: '"a"' } : {}).end('{}')
  })
  const store = createHttpStore(new URL(`http://127.0.0.1:${server.port}/`), OPTIONS)
  await store.read('iris/manifest.json')
  hasEtag = false
  await store.read('iris/manifest.json')
  await store.read('iris/manifest.json')
  t.same(received, [undefined, '"a"', undefined])
})

t.test('a 304 to a request without If-None-Match is an upstream error', async (t) => {
  const server = await httpServer(t, (_, res) => void res.writeHead(304).end())
  const url = `http://127.0.0.1:${server.port}/`
  await t.rejects(createHttpStore(new URL(url), OPTIONS).read('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: `GET ${url}iris/manifest.json answered HTTP 304`,
  })
})

const STATUSES: ReadonlyArray<readonly [number, StoreErrorCode, string]> = [
  [404, 'NOT_FOUND', 'answered HTTP 404'],
  [410, 'NOT_FOUND', 'answered HTTP 410'],
  [401, 'UNREADABLE', 'answered HTTP 401'],
  [403, 'UNREADABLE', 'answered HTTP 403'],
  [500, 'UPSTREAM_ERROR', 'answered HTTP 500'],
  [503, 'UPSTREAM_ERROR', 'answered HTTP 503'],
  [429, 'UPSTREAM_ERROR', 'answered HTTP 429'],
  [302, 'UPSTREAM_ERROR', 'answered HTTP 302, a redirect (not followed)'],
  [301, 'UPSTREAM_ERROR', 'answered HTTP 301, a redirect (not followed)'],
]

t.test('a status other than 200 maps to a code, for read and stat', async (t) => {
  for (const [status, code, text] of STATUSES) {
    t.test(`HTTP ${status}`, async (t) => {
      const paths: string[] = []
      const server = await httpServer(t, (req, res) => {
        paths.push(req.url as string)
        const body = '<html><body>error page</body></html>'
        res
          .writeHead(status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(body), location: `http://127.0.0.1:${server.port}/elsewhere` })
          .end(body)
      })
      const url = `http://127.0.0.1:${server.port}/`
      const store = createHttpStore(new URL(url), OPTIONS)
      await t.rejects(store.read('iris/manifest.json'), { name: 'StoreError', code, message: `GET ${url}iris/manifest.json ${text}` })
      await t.rejects(store.stat('iris/manifest.json'), { name: 'StoreError', code, message: `HEAD ${url}iris/manifest.json ${text}` })
      t.same(paths, ['/iris/manifest.json', '/iris/manifest.json'], 'no redirect followed')
    })
  }
})

t.test('a silent server times out, for read, stat and list', async (t) => {
  const server = await silentServer(t)
  const url = `http://127.0.0.1:${server.port}/`
  const store = createHttpStore(new URL(url), { timeoutMs: 100, maxBytes: 1024 })
  const started = performance.now()
  await t.rejects(store.read('iris/manifest.json'), { code: 'UPSTREAM_ERROR', message: `GET ${url}iris/manifest.json timed out after 100 ms` })
  await t.rejects(store.stat('iris/manifest.json'), { code: 'UPSTREAM_ERROR', message: `HEAD ${url}iris/manifest.json timed out after 100 ms` })
  await t.rejects(store.list(), { code: 'UPSTREAM_ERROR', message: `GET ${url}index.json timed out after 100 ms` })
  t.ok(performance.now() - started < 1500, 'each gives up at its deadline')
})

t.test('a body that stalls times out too', async (t) => {
  const server = await answeringServer(t, ['HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"default_'], { isClosing: false })
  const url = `http://127.0.0.1:${server.port}/`
  await t.rejects(createHttpStore(new URL(url), { timeoutMs: 150, maxBytes: 1024 }).read('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: /timed out after 150 ms$/,
  })
})

t.test('a server closing in the middle of the body is an upstream error in words', async (t) => {
  const server = await answeringServer(t, ['HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{"default_'])
  const url = `http://127.0.0.1:${server.port}/`
  await t.rejects(createHttpStore(new URL(url), OPTIONS).read('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: `GET ${url}iris/manifest.json failed: connection closed`,
  })
})

t.test('a refused connection is an upstream error in words', async (t) => {
  const url = `http://127.0.0.1:${await closedPort()}/`
  await t.rejects(createHttpStore(new URL(url), OPTIONS).read('iris/manifest.json'), {
    code: 'UPSTREAM_ERROR',
    message: `GET ${url}iris/manifest.json failed: connection refused`,
  })
})

t.test('a body over maxBytes is TOO_LARGE, by Content-Length or while streaming', async (t) => {
  const chunked = (res: ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'application/json' })
    for (let i = 0; i < 8; i++) res.write('x'.repeat(200))
    res.end()
  }
  const server = await httpServer(t, (req, res) => {
    if (req.url === '/declared.json') res.writeHead(200, { 'content-length': 1025 }).end('x'.repeat(1025))
    else if (req.url === '/exact.json') res.writeHead(200, { 'content-length': 1024 }).end('x'.repeat(1024))
    else chunked(res)
  })
  const url = `http://127.0.0.1:${server.port}/`
  const store = createHttpStore(new URL(url), OPTIONS)
  await t.rejects(store.read('declared.json'), { code: 'TOO_LARGE', message: `GET ${url}declared.json sent a body over the limit of 1024 bytes` })
  await t.rejects(store.read('chunked.json'), { code: 'TOO_LARGE', message: `GET ${url}chunked.json sent a body over the limit of 1024 bytes` })
  t.equal((await store.read('exact.json')).length, 1024, 'the limit itself is allowed')
})

t.test('an invalid path sends no request', async (t) => {
  const server = await artifactServer(t, await tempTree(t, FILES))
  const store = createHttpStore(new URL(server.url), OPTIONS)
  for (const path of ['../etc/passwd', '/iris', 'iris/%2e%2e/../x', 'iris\\1']) {
    await t.rejects(store.read(path), { code: 'INVALID_PATH' }, path)
    await t.rejects(store.stat(path), { code: 'INVALID_PATH' }, path)
  }
  t.same(server.received, [])
})

const INDEXES: ReadonlyArray<readonly [string, readonly string[] | undefined]> = [
  ['{"models":["iris","cars","iris"]}', ['cars', 'iris']],
  ['{"models":[],"generated_at":"2026-11-22T06:00:00Z"}', []],
  ['not json', undefined],
  ['null', undefined],
  ['["iris"]', undefined],
  ['{"models":"iris"}', undefined],
  ['{"model":["iris"]}', undefined],
  ['{"models":["iris",2]}', undefined],
  ['{"models":["../etc"]}', undefined],
  ['{"models":["iris/1"]}', undefined],
  ['{"models":[""]}', undefined],
]

t.test('list reads index.json: {"models":[names]}, sorted and without duplicates', async (t) => {
  for (const [index, expected] of INDEXES) {
    t.test(index, async (t) => {
      const server = await artifactServer(t, await tempTree(t, { 'index.json': index }))
      const store = createHttpStore(new URL(server.url), OPTIONS)
      if (expected !== undefined) t.same(await store.list(), expected)
      else
        await t.rejects(store.list(), {
          code: 'INVALID_INDEX',
          message: `${server.url}/index.json is not {"models":["<model>", …]} (names of directories under ${server.url}/)`,
        })
    })
  }
})

t.test('a missing index.json is NOT_FOUND', async (t) => {
  const server = await artifactServer(t, await tempTree(t, { 'iris/manifest.json': '{}' }))
  await t.rejects(createHttpStore(new URL(server.url), OPTIONS).list(), { code: 'NOT_FOUND', message: `GET ${server.url}/index.json answered HTTP 404` })
})

t.test('credentials in the URL are sent as Basic authentication and never shown', async (t) => {
  const root = await tempTree(t, FILES)
  const server = await artifactServer(t, root, { authorization: `Basic ${Buffer.from('reader:s3:cr@t').toString('base64')}` })
  const withCredentials = (port: number) => new URL(`http://reader:s3%3Acr%40t@127.0.0.1:${port}/models`)
  const store = createHttpStore(withCredentials(server.port), OPTIONS)
  t.equal(store.description, `${server.url}/`)
  t.same(await store.read('iris/manifest.json'), Buffer.from(FILES['iris/manifest.json']), 'the server accepted them')
  t.same(await store.list(), ['iris'])
  t.match(server.received[0]?.url, '/models/iris/manifest.json')

  const silent = await silentServer(t)
  const wrongPassword = await artifactServer(t, root, { authorization: 'Basic other' })
  const refused = await closedPort()
  const failures = [
    () => store.read('iris/2/model.json'),
    () => store.stat('nope/manifest.json'),
    () => store.read('iris/../x'),
    () => createHttpStore(withCredentials(server.port), { timeoutMs: 1000, maxBytes: 10 }).read('iris/manifest.json'),
    () => createHttpStore(withCredentials(silent.port), { timeoutMs: 100, maxBytes: 10 }).read('iris/manifest.json'),
    () => createHttpStore(withCredentials(refused), OPTIONS).read('iris/manifest.json'),
    () => createHttpStore(withCredentials(wrongPassword.port), OPTIONS).read('iris/manifest.json'),
  ]
  for (const failure of failures) {
    const error = await failure().then(
      () => undefined,
      (e: unknown) => e,
    )
    t.type(error, Error)
    const shown = `${String(error)}\n${inspect(error, { depth: 10 })}`
    t.notMatch(shown, /s3|cr@t|cr%40t|reader/, String(error))
  }
  t.match(wrongPassword.received[0]?.headers.authorization, /^Basic /, 'sent, and refused')
})
