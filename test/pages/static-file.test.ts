// Files served as built at start-up: types by extension, strong validators, 304, a fixed list.
import t from 'tap'
import type { HttpError } from '../../lib/core/http/errors.js'
import { contentType, etagOf, isFresh, serveFolder, serveText } from '../../lib/pages/static-file.js'
import { makeCtx } from '../fixtures/ctx.js'

t.test('a file is typed by its extension, and start-up refuses an extension it cannot type', async (t) => {
  t.same(['a.html', 'a.js', 'a.css', 'a.svg', 'a.json'].map(contentType), [
    'text/html; charset=utf-8',
    'text/javascript; charset=utf-8',
    'text/css; charset=utf-8',
    'image/svg+xml; charset=utf-8',
    'application/json',
  ])
  t.throws(() => contentType('favicon.png'), new TypeError('favicon.png: no content type is known for its extension'))
  t.throws(() => contentType('.html'), /no content type/, 'a name that is all extension has none')
})

t.test('the ETag is the SHA-256 of the body, and If-None-Match compares weakly', async (t) => {
  const etag = etagOf('hello')
  t.equal(etag, '"LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ"')
  t.notOk(isFresh(undefined, etag))
  t.ok(isFresh(etag, etag))
  t.ok(isFresh(`W/${etag}`, etag))
  t.ok(isFresh(`"other", ${etag}`, etag))
  t.ok(isFresh('*', etag))
  t.notOk(isFresh('"other"', etag))
  t.notOk(isFresh('', etag))
})

t.test('a file is one reply built once, and 304 without a body to a client holding it', async (t) => {
  const handler = serveText('body { }', 'text/css; charset=utf-8', { 'content-security-policy': "default-src 'none'" })
  const reply = (await handler(makeCtx())) as any
  t.same(reply, {
    kind: 'text',
    status: 200,
    headers: {
      'content-type': 'text/css; charset=utf-8',
      'cache-control': 'no-cache',
      etag: etagOf('body { }'),
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'",
    },
    text: 'body { }',
  })
  t.ok(Object.isFrozen(reply) && Object.isFrozen(reply.headers))
  t.equal(await handler(makeCtx()), reply, 'the same reply each time')
  const notModified = (await handler(makeCtx('GET', '/', { 'if-none-match': etagOf('body { }') }))) as any
  t.same(notModified, { kind: 'json', status: 304, headers: { 'cache-control': 'no-cache', etag: etagOf('body { }') } })
  t.equal(await handler(makeCtx('GET', '/', { 'if-none-match': '"stale"' })), reply)
  t.same(Object.keys(((await serveText('x', 'text/plain')(makeCtx())) as any).headers), ['content-type', 'cache-control', 'etag', 'x-content-type-options'])
})

t.test('a folder serves its listed files by name, and 404 for any other name', async (t) => {
  const handler = serveFolder(
    new Map([
      ['app.js', 'run()'],
      ['app.css', 'p { }'],
    ]),
    '/things',
  )
  const at = (asset: string) => {
    const ctx = makeCtx('GET', `/things/${asset}`)
    ctx.params = { asset }
    return ctx as typeof ctx & { readonly params: { asset: string } }
  }
  t.match(await handler(at('app.js')), { status: 200, text: 'run()', headers: { 'content-type': 'text/javascript; charset=utf-8' } })
  t.match(await handler(at('app.css')), { status: 200, text: 'p { }', headers: { 'content-type': 'text/css; charset=utf-8' } })
  for (const name of ['nope.js', '../package.json', 'app.js/', '']) {
    const error = t.throws(() => handler(at(name))) as HttpError
    t.match(error, { status: 404, code: 'ASSET_NOT_FOUND', message: 'No such file under /things' }, JSON.stringify(name))
  }
  t.throws(() => serveFolder(new Map([['x.exe', '']]), '/things'), /x\.exe: no content type/, 'an untyped file stops start-up')
})
