// Inhibition end to end: a real Alertmanager with ops/alertmanager/alertmanager.yml, alerts added
// with amtool, and the result read back from its API.
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { startAlertmanager } from '../fixtures/alertmanager.js'
import { findTool } from '../fixtures/tools.js'
import { OPS, run, said } from './fixtures/ops.js'

type ApiAlert = { labels: Record<string, string>; status: { state: string; inhibitedBy: string[] } }

t.test("a page inhibits the same alert's warning in its environment, not in another", async (t) => {
  const binary = await findTool(t, 'prometheus-alertmanager', 'prometheus-alertmanager')
  const amtool = await findTool(t, 'amtool', 'prometheus-alertmanager')
  if (binary === undefined || amtool === undefined) return
  const { url, log } = await startAlertmanager(t, binary, join(OPS, 'alertmanager', 'alertmanager.yml'))

  const add = async (labels: string) => {
    const result = await run(amtool, ['alert', 'add', `--alertmanager.url=${url}`, ...labels.split(' '), 'summary=from the inhibition test'], {
      timeoutMs: 10_000,
    })
    t.equal(result.code, 0, said(`amtool alert add ${labels}`, result))
  }
  await add('alertname=SvcLatencyHigh environment=prod severity=page')
  await add('alertname=SvcLatencyHigh environment=prod severity=warning')
  await add('alertname=SvcLatencyHigh environment=dev severity=warning')

  const state = (alerts: ApiAlert[], environment: string, severity: string) =>
    alerts.find((a) => a.labels['environment'] === environment && a.labels['severity'] === severity)?.status.state
  const expected = { prodPage: 'active', prodWarning: 'suppressed', devWarning: 'active' }
  let seen: Record<string, string | undefined> = {}
  // The inhibitor learns of new alerts asynchronously: poll, bounded.
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(100)) {
    const alerts = (await (await fetch(`${url}/api/v2/alerts`)).json()) as ApiAlert[]
    seen = { prodPage: state(alerts, 'prod', 'page'), prodWarning: state(alerts, 'prod', 'warning'), devWarning: state(alerts, 'dev', 'warning') }
    if (JSON.stringify(seen) === JSON.stringify(expected)) break
  }
  t.same(seen, expected, log())
})
