// ops/alertmanager/alertmanager.yml: amtool accepts it, routes each kind of alert to its receiver,
// and it holds no secret.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { findTool } from '../fixtures/tools.js'
import { OPS, readYaml, run, said } from './fixtures/ops.js'
import { alertRules } from './fixtures/rules.js'

const CONFIG = join(OPS, 'alertmanager', 'alertmanager.yml')

// Label sets as Prometheus sends them, and the receiver each must reach.
const ROUTES: ReadonlyArray<readonly [labels: string, receiver: string]> = [
  ['alertname=SvcLatencyHigh environment=prod severity=page', 'chat-page'],
  ['alertname=SvcErrorRateHigh environment=stage severity=page', 'chat-page'],
  ['alertname=SvcTargetDown environment=prod severity=page instance=10.0.1.10:8000', 'chat-page'],
  ['alertname=SvcLatencyHigh environment=dev severity=warning', 'ops-email'],
  ['alertname=SvcSaturationHigh environment=stage severity=warning instance=10.0.2.10:8000', 'ops-email'],
  ['alertname=SvcDriftModerate environment=prod severity=warning model=iris feature=petal_length', 'ops-email'],
  ['alertname=SvcPredictionDriftSevere environment=prod severity=page model=iris output=species', 'chat-page'],
  ['alertname=Watchdog severity=none', 'deadmans-switch'],
  // The heartbeat route comes first: whatever severity it were given, no person is notified.
  ['alertname=Watchdog severity=page', 'deadmans-switch'],
  ['alertname=SomethingNew environment=prod', 'default'],
  ['alertname=SomethingNew environment=prod severity=critical', 'default'],
]

const RECEIVER_BY_SEVERITY: Readonly<Record<string, string>> = { page: 'chat-page', warning: 'ops-email', none: 'default' }

t.test('amtool check-config accepts alertmanager.yml', async (t) => {
  const amtool = await findTool(t, 'amtool', 'prometheus-alertmanager')
  if (amtool === undefined) return
  const result = await run(amtool, ['check-config', CONFIG])
  t.equal(result.code, 0, said('amtool check-config', result))
  t.match(result.stdout, /SUCCESS/)
})

t.test('each label set reaches its receiver (amtool config routes test --verify.receivers)', async (t) => {
  const amtool = await findTool(t, 'amtool', 'prometheus-alertmanager')
  if (amtool === undefined) return
  // Every alert the rules can raise, besides the table above.
  const fromRules = (await alertRules()).map((r): [string, string] => {
    const labels: Record<string, string> = { alertname: r.alert, ...r.labels }
    const receiver = r.alert === 'Watchdog' ? 'deadmans-switch' : (RECEIVER_BY_SEVERITY[labels['severity'] ?? ''] ?? 'default')
    return [
      Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(' '),
      receiver,
    ]
  })
  await Promise.all(
    [...ROUTES, ...fromRules].map(async ([labels, receiver]) => {
      const result = await run(amtool, ['config', 'routes', 'test', `--config.file=${CONFIG}`, `--verify.receivers=${receiver}`, ...labels.split(' ')])
      t.equal(result.code, 0, said(`${labels} → ${receiver}`, result))
    }),
  )
})

t.test('grouped by alertname and environment; a page inhibits the warning of the same alert and environment', async (t) => {
  type Config = {
    route: { group_by: string[] }
    inhibit_rules: Array<{ source_matchers: string[]; target_matchers: string[]; equal: string[] }>
    receivers: Array<{ name: string; slack_configs?: Array<Record<string, unknown>>; email_configs?: Array<Record<string, unknown>> }>
  }
  const config = await readYaml<Config>('alertmanager/alertmanager.yml')
  t.same(config.route.group_by, ['alertname', 'environment'])
  t.same(config.inhibit_rules, [{ source_matchers: ['severity="page"'], target_matchers: ['severity="warning"'], equal: ['alertname', 'environment'] }])
  const receiver = (name: string) => config.receivers.find((r) => r.name === name)
  t.ok(receiver('chat-page')?.slack_configs?.[0]?.['api_url_file'], 'pages: Slack-compatible webhook, URL from a file')
  t.ok(receiver('ops-email')?.email_configs?.[0]?.['auth_password_file'], 'warnings: e-mail, password from a file')
})

t.test('no secret in the file: every credential is read from a file', async (t) => {
  const text = await readFile(CONFIG, 'utf8')
  for (const key of [
    'api_url',
    'auth_password',
    'auth_secret',
    'password',
    'credentials',
    'bearer_token',
    'smtp_auth_password',
    'service_key',
    'routing_key',
    'api_key',
    'bot_token',
  ]) {
    t.notMatch(text, new RegExp(`^\\s*-?\\s*${key}:`, 'm'), `no ${key}: (only ${key}_file)`)
  }
})
