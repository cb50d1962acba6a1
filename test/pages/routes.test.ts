// /docs, /demo and their files over a real socket: types, caching, the Content-Security-Policy,
// a fixed list of files, and one metrics label per folder whatever names clients try.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { defaultSources, SWAGGER_UI_FILES } from '../../lib/pages/assets.js'
import { DEMO_CSP, DOCS_CSP, pageRoutes } from '../../lib/pages/routes.js'
import { startApp } from '../fixtures/app.js'
import { labelValues, sample } from '../fixtures/metrics-text.js'

t.test('the pages are HTML under a strict Content-Security-Policy with no inline script', async (t) => {
  const { base } = await startApp(t)
  for (const [path, csp] of [
    ['/docs', DOCS_CSP],
    ['/demo', DEMO_CSP],
  ] as const) {
    const res = await fetch(base + path)
    const html = await res.text()
    t.equal(res.status, 200, path)
    t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8')
    t.equal(res.headers.get('content-security-policy'), csp)
    t.equal(res.headers.get('cache-control'), 'no-cache')
    t.equal(res.headers.get('x-content-type-options'), 'nosniff')
    t.match(res.headers.get('etag'), /^"[\w-]{43}"$/)
    t.match(csp, /script-src 'self';/)
    t.notMatch(csp, /unsafe-inline|unsafe-eval|https?:/, 'nothing inline, nothing from elsewhere')
    t.match(csp, /frame-ancestors 'none'/)
    t.notMatch(html, /<script>|<script(?![^>]*\bsrc=)[^>]*>|\bon[a-z]+="|style="|<style/i, 'no inline script, handler or style')
    t.notMatch(html, /\b(?:src|href)="(?:https?:)?\/\//, 'no file from another origin')
  }
})

t.test('the pages link their files relative to themselves, and every file they link is served', async (t) => {
  const { base } = await startApp(t)
  for (const page of ['/docs', '/demo']) {
    const html = await (await fetch(base + page)).text()
    const links = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string)
    t.ok(links.length >= 4, `${page} links ${links.join(', ')}`)
    for (const link of links) {
      t.notOk(link.startsWith('/'), `${link} is relative, so a path prefix in front works`)
      const res = await fetch(new URL(link, base + page))
      t.equal(res.status, 200, `${page} → ${link}`)
      await res.arrayBuffer()
    }
  }
})

t.test('each file has its type and validator; 304 while unchanged; HEAD sends no body', async (t) => {
  const { base } = await startApp(t)
  const types: Record<string, string> = {
    '/docs/swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
    '/docs/swagger-ui.css': 'text/css; charset=utf-8',
    '/docs/docs.js': 'text/javascript; charset=utf-8',
    '/docs/docs.css': 'text/css; charset=utf-8',
    '/docs/favicon.svg': 'image/svg+xml; charset=utf-8',
    '/demo/demo.js': 'text/javascript; charset=utf-8',
    '/demo/demo.css': 'text/css; charset=utf-8',
    '/demo/favicon.svg': 'image/svg+xml; charset=utf-8',
  }
  for (const [path, type] of Object.entries(types)) {
    const res = await fetch(base + path)
    const body = await res.text()
    t.equal(res.status, 200, path)
    t.equal(res.headers.get('content-type'), type, path)
    t.equal(res.headers.get('cache-control'), 'no-cache')
    t.equal(Number(res.headers.get('content-length')), Buffer.byteLength(body))
    t.notOk(res.headers.has('content-security-policy'), 'a policy belongs to a page, not to its files')
    const etag = res.headers.get('etag') as string
    const again = await fetch(base + path, { headers: { 'if-none-match': `W/${etag}` } })
    t.equal(again.status, 304, `${path} unchanged`)
    t.equal(await again.text(), '')
  }
  const head = await fetch(`${base}/docs/swagger-ui-bundle.js`, { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(await head.text(), '')
  t.ok(Number(head.headers.get('content-length')) > 1_000_000, 'the length of what GET would send')
})

t.test('any other name under /docs or /demo is a 404 problem, the package files left out included', async (t) => {
  const { base } = await startApp(t)
  for (const path of [
    '/docs/index.html',
    '/docs/swagger-ui-bundle.js.map',
    '/docs/favicon-32x32.png',
    '/docs/..%2Fpackage.json',
    '/demo/docs.js',
    '/demo/demo.html',
    '/docs/',
  ]) {
    const res = await fetch(base + path)
    t.equal(res.status, 404, path)
    t.equal(res.headers.get('content-type'), 'application/problem+json')
    const body = (await res.json()) as Record<string, unknown>
    if (path !== '/docs/') t.match(body, { type: /asset-not-found$/, status: 404, detail: /^No such file under \/(docs|demo)$/, instance: path }, path)
  }
})

t.test('the pages count in the HTTP metrics with one endpoint label per folder', async (t) => {
  const { base } = await startApp(t, { SVC_ENVIRONMENT: 'stage' })
  for (const path of ['/docs', '/docs/docs.js', '/docs/docs.css', '/docs/a', '/docs/b', '/docs/c', '/demo', '/demo/demo.js', '/demo/x'])
    await (await fetch(base + path)).arrayBuffer()
  const text = await (await fetch(`${base}/metrics`)).text()
  const endpoints = [...labelValues(text, 'http_requests_total', 'endpoint')].sort()
  t.same(endpoints, ['/demo', '/demo/{asset}', '/docs', '/docs/{asset}'])
  const labels = (endpoint: string, status: string) => ({ method: 'GET', endpoint, status, environment: 'stage' })
  t.equal(sample(text, 'http_requests_total', labels('/docs/{asset}', '200')), 2)
  t.equal(sample(text, 'http_requests_total', labels('/docs/{asset}', '404')), 3)
  t.equal(sample(text, 'http_requests_total', labels('/demo/{asset}', '404')), 1)
})

t.test('start-up fails, naming the file, when a page file is missing', async (t) => {
  const empty = await mkdtemp(join(tmpdir(), 'svc-pages-'))
  t.teardown(() => rm(empty, { recursive: true, force: true }))
  t.throws(() => pageRoutes({ ...defaultSources(), staticDir: empty }), /ENOENT.*docs\.html/)
  await writeFile(join(empty, SWAGGER_UI_FILES[0]), '')
  t.throws(() => pageRoutes({ staticDir: defaultSources().staticDir, swaggerUiDir: empty }), /ENOENT.*swagger-ui\.css/)
})
