// /demo in headless Chromium: the live chart follows the /api/insights stream, the BTC rate comes
// from a loopback fake upstream, the models and the health of each component are shown, on a
// desktop and on a phone, with no console error and no Content-Security-Policy violation.
import { join } from 'node:path'
import t from 'tap'
import { launchChromium, pageErrors, SCREENSHOT_DIR, type PageGlobals } from '../fixtures/browser.js'
import { startApp } from '../fixtures/app.js'
import { fakeCoingecko } from '../fixtures/rate-upstreams.js'

/** Chart updates so far; runs in the page, where `globalThis` is the window. */
const updates = (): number => Number((globalThis as unknown as PageGlobals).document.getElementById('chart')?.dataset['updates'])
const atLeast = (n: number): boolean => Number((globalThis as unknown as PageGlobals).document.getElementById('chart')?.dataset['updates']) >= n

t.test('/demo charts the stream, shows the rate, the models and the health, without an error', async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const upstream = await fakeCoingecko(t)
  const { base } = await startApp(t, { SVC_RATE_PROVIDERS: 'coingecko', SVC_RATE_COINGECKO_URL: upstream.url, SVC_DRAIN_TIMEOUT_MS: '1000' })
  const page = await browser.newPage({ locale: 'en-US', viewport: { width: 1280, height: 900 } })
  const errors = await pageErrors(page)
  await page.goto(`${base}/demo`)

  await page.waitForFunction(atLeast, 2, { timeout: 15_000 })
  const first = await page.evaluate(updates)
  t.ok(first >= 2, `${first} chart updates from the stream`)
  t.ok((await page.locator('#chart .figure').count()) >= 2, 'one chart per figure so far')
  t.match(await page.locator('#chart .figure[data-metric="http_requests_in_flight"] .line').getAttribute('points'), /^[\d.]+,[\d.]+/)
  t.equal(await page.locator('#stream-status').innerText(), 'live')

  await page.locator('#rate-value', { hasText: '$64,012.50' }).waitFor()
  t.match(await page.locator('#rate-meta').innerText(), /from coingecko/)
  t.ok(upstream.received.length >= 1, 'the rate came from the fake upstream')

  await page.locator('#models-table tbody tr').nth(1).waitFor()
  const models = await page
    .locator('#models-table tbody tr')
    .evaluateAll((rows) => rows.map((row) => [row.getAttribute('data-model'), row.children[1]?.textContent]))
  t.same(models, [
    ['cars', 'READY'],
    ['iris', 'READY'],
  ])
  await page.locator('#health-table tbody tr').nth(3).waitFor()
  const health = await page.locator('#health-table tbody tr td:first-child').allInnerTexts()
  t.same(health, ['database', 'cache', 'external api', 'models'])
  t.equal(await page.locator('#health-status').innerText(), 'ok')

  // The chart keeps following the stream.
  await page.waitForFunction(atLeast, first + 1, { timeout: 15_000 })
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'demo.png'), fullPage: true })

  await page.setViewportSize({ width: 390, height: 844 })
  const overflow = await page.evaluate(() => {
    const { documentElement } = (globalThis as unknown as PageGlobals).document
    return documentElement.scrollWidth - documentElement.clientWidth
  })
  t.equal(overflow, 0, 'nothing wider than a phone screen')
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'demo-phone.png'), fullPage: true })

  t.same(errors, [], 'no console errors, no CSP violations')
  await page.close()
})

t.test('/demo shows drift per feature from the model detail, and tolerates a model without it', async (t) => {
  const browser = await launchChromium(t)
  if (browser === undefined) return
  const upstream = await fakeCoingecko(t)
  const { base } = await startApp(t, { SVC_RATE_PROVIDERS: 'coingecko', SVC_RATE_COINGECKO_URL: upstream.url, SVC_DRAIN_TIMEOUT_MS: '1000' })
  const page = await browser.newPage({ locale: 'en-US' })
  const errors = await pageErrors(page)
  // The detail of iris as drift monitoring reports it after a check; cars without a drift block.
  const drift = {
    status: 'ok',
    checked_at: '2026-11-22T06:00:00.000Z',
    scored_at: '2026-11-22T06:00:00.000Z',
    window: { samples: 500, capacity: 1000 },
    min_samples: 100,
    features: [
      { name: 'petal_length', psi: 0.031, severity: 'none' },
      { name: 'petal_width', psi: 0.18, severity: 'moderate' },
      { name: 'sepal_width', psi: 0.42, severity: 'severe' },
    ],
  }
  await page.route('**/api/v1/models/*', async (route) => {
    const response = await route.fetch()
    const body = (await response.json()) as Record<string, unknown>
    const { drift: _, ...rest } = body
    await route.fulfill({ response, json: body['name'] === 'iris' ? { ...rest, drift } : rest })
  })
  await page.goto(`${base}/demo`)
  const iris = page.locator('#models-table tr[data-model="iris"]')
  await iris.locator('.psi').nth(2).waitFor()
  t.same(await iris.locator('.psi').allInnerTexts(), ['petal_length 0.031', 'petal_width 0.180', 'sepal_width 0.420'])
  t.same(await iris.locator('.psi').evaluateAll((els) => els.map((el) => el.className)), ['psi ok', 'psi warn', 'psi bad'])
  t.match(await iris.locator('td.drift').innerText(), /ok\s+500\/1000 samples/)
  t.match(await page.locator('#models-table tr[data-model="cars"] td.drift').innerText(), /not reported/)
  t.same(errors, [], 'no console errors')
  await page.close()
})
