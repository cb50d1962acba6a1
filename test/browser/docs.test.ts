// /docs in headless Chromium: Swagger UI renders every operation from /openapi.json under the
// page's Content-Security-Policy, and "Try it out" on GET /api/insights streams real events; behind
// a proxy that serves the service under a path prefix, "Try it out" keeps the prefix.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { launchChromium, pageErrors, SCREENSHOT_DIR } from '../fixtures/browser.js'

t.test('/docs lists the operations and "Try it out" on GET /api/insights returns events', async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const { base } = await startApp(t, { SVC_DRAIN_TIMEOUT_MS: '1000' })
  const page = await browser.newPage({ locale: 'en-US' })
  const errors = await pageErrors(page)

  await page.goto(`${base}/docs`)
  await page.locator('.opblock').first().waitFor()
  const document = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> }
  const operations = Object.values(document.paths).reduce((n, ops) => n + Object.keys(ops).length, 0)
  t.equal(await page.locator('.opblock').count(), operations, `all ${operations} operations listed`)
  t.equal(
    await page
      .locator('.info .title')
      .innerText()
      .then((s) => s.split('\n')[0]?.trim()),
    'svc',
  )

  const insights = page.locator('#operations-insights-getInsights')
  await insights.locator('.opblock-summary').first().click()
  await insights.locator('button.try-out__btn').click()
  await insights.locator('tr[data-param-name="count"] input').fill('2')
  await insights.locator('tr[data-param-name="interval"] input').fill('0')
  await insights.locator('button.execute').click()
  const body = insights.locator('.live-responses-table .response-col_description pre').first()
  await body.waitFor()
  const text = await body.innerText()
  const events = text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)) as { seq: number; count: number })
  t.same(
    events.map((e) => [e.seq, e.count]),
    [
      [1, 2],
      [2, 2],
    ],
    'two events, as asked',
  )
  t.equal(await insights.locator('.live-responses-table .response .response-col_status').first().innerText(), '200')

  await body.scrollIntoViewIfNeeded()
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'docs.png') })
  t.same(errors, [], 'no console errors, no CSP violations')
  await page.close()
})

t.test('behind a proxy that serves the service under /svc/, "Try it out" calls /svc/… (servers: `.`)', async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const { base } = await startApp(t, { SVC_DRAIN_TIMEOUT_MS: '1000' })
  const upstream = new URL(base)
  const asked: string[] = []
  // The prefix is stripped on the way in, as a reverse proxy mounting the service at /svc/ does.
  const proxy = createServer((req, res) => {
    const path = req.url as string
    asked.push(path)
    if (!path.startsWith('/svc/')) return void res.writeHead(404).end()
    const forwarded = request({ host: upstream.hostname, port: upstream.port, path: path.slice(4), method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode as number, answer.headers)
      answer.pipe(res)
    })
    req.pipe(forwarded)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        proxy.closeAllConnections()
        proxy.close(() => resolve())
      }),
  )
  const page = await browser.newPage({ locale: 'en-US' })
  await page.goto(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/svc/docs`)
  await page.locator('.opblock').first().waitFor()
  const metadata = page.locator('#operations-inference-getServerMetadata')
  await metadata.locator('.opblock-summary').first().click()
  await metadata.locator('button.try-out__btn').click()
  await metadata.locator('button.execute').click()
  const status = metadata.locator('.live-responses-table .response .response-col_status').first()
  await status.waitFor()
  t.equal(await status.innerText(), '200')
  t.ok(asked.includes('/svc/v2'), 'the call went through the prefix')
  t.notOk(asked.includes('/v2'), 'and never around it')
  await page.close()
})
