// ops/systemd/svc.env.example documents exactly the variables the configuration reads. The set
// read is observed, not listed: readConfig runs over an environment that records every lookup, so
// a variable added to lib/config/variables.ts fails here until the example documents it.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { readConfig } from '../../lib/config/config.js'
import { lookups } from '../config/fixtures/lookups.js'
import { OPS } from './fixtures/ops.js'

/** `# NAME=default` or `NAME=value` lines, each after a one-line explanation. */
const documented = async (): Promise<Map<string, { value: string; explanation: string | undefined }>> => {
  const lines = (await readFile(join(OPS, 'systemd', 'svc.env.example'), 'utf8')).split('\n')
  const found = new Map<string, { value: string; explanation: string | undefined }>()
  lines.forEach((line, i) => {
    const m = /^(?:# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)
    if (m === null) return
    const previous = lines[i - 1]
    const explanation = previous?.startsWith('# ') && !/^# [A-Z][A-Z0-9_]*=/.test(previous) ? previous : undefined
    found.set(m[1] as string, { value: m[2] as string, explanation })
  })
  return found
}

t.test('svc.env.example lists every variable the configuration reads, and nothing else', async (t) => {
  const docs = await documented()
  // Unset, then with every documented value: a variable read only when another is set is seen too.
  const values = Object.fromEntries([...docs].filter(([, d]) => d.value !== '').map(([k, d]) => [k, d.value]))
  const read = new Set([...lookups({}), ...lookups(values)])
  // Set by systemd itself (LoadCredential=), never by an operator.
  read.delete('CREDENTIALS_DIRECTORY')
  const missing = [...read].filter((v) => !docs.has(v)).sort()
  const extra = [...docs.keys()].filter((v) => !read.has(v)).sort()
  t.same(missing, [], 'read by the configuration but not in svc.env.example')
  t.same(extra, [], 'in svc.env.example but not read by the configuration')
})

t.test('SVC_ENVIRONMENT is set, not left commented out at its default', async (t) => {
  const text = await readFile(join(OPS, 'systemd', 'svc.env.example'), 'utf8')
  t.match(text, /^SVC_ENVIRONMENT=(dev|stage|prod)$/m)
})

t.test('each variable has a one-line explanation above it', async (t) => {
  for (const [name, { explanation }] of await documented()) t.ok(explanation, name)
})

t.test("the documented defaults are the configuration's defaults", async (t) => {
  const docs = await documented()
  const defaults = readConfig({})
  const shown = (name: string) => docs.get(name)?.value
  t.equal(shown('APP_NAME'), defaults.name)
  t.equal(shown('HOST'), defaults.host)
  t.equal(shown('PORT'), String(defaults.port))
  t.equal(shown('LOG_LEVEL')?.toLowerCase(), defaults.logLevel)
  t.equal(shown('LOG_FORMAT'), defaults.logFormat)
  t.equal(shown('SVC_MAX_BODY_BYTES'), String(defaults.maxBodyBytes))
  t.equal(shown('SVC_DRAIN_TIMEOUT_MS'), String(defaults.drainTimeoutMs))
  // The example is for the units, which run behind a load balancer: the prod default.
  t.equal(shown('SVC_SHUTDOWN_DELAY_MS'), String(readConfig({ SVC_ENVIRONMENT: 'prod' }).shutdownDelayMs))
  t.equal(shown('SVC_KEEP_ALIVE_TIMEOUT_MS'), String(defaults.keepAliveTimeoutMs))
  t.equal(shown('SVC_HEALTH_TIMEOUT_MS'), String(defaults.health.timeoutMs))
  t.equal(shown('SVC_HEALTH_CACHE_MS'), String(defaults.health.cacheMs))
})
