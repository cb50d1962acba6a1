// lib/process/start.ts, as the CLI runs it: what the start-up line says about the environment, and a fault
// that is not a configuration problem. Exit codes and start-up errors are test/integration/cli.test.ts's.
import t, { type Test } from 'tap'
import type { Env } from '../../lib/config/config.js'
import { start } from '../../lib/process/start.js'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { spawnTs } from '../fixtures/spawn.js'

/** The CLI's `application_started` line under `env`, after which it is stopped cleanly. */
const startedLine = async (t: Test, env: Readonly<Record<string, string>>): Promise<Record<string, unknown>> => {
  const child = spawnTs('bin/svc.ts', ['--port', '0'], env)
  t.teardown(() => void (child.proc.exitCode === null && child.proc.kill('SIGKILL')))
  const started = await child.waitForEvent('application_started')
  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null })
  return started
}

t.test('an unset SVC_ENVIRONMENT starts as dev, and the start-up line says it was defaulted, at warning', async (t) => {
  // Empty is unset: whatever the environment running the tests holds.
  const started = await startedLine(t, { SVC_ENVIRONMENT: '' })
  t.match(started, { level: 'warning', version: PACKAGE_VERSION, environment: 'dev', environment_defaulted: true })
})

t.test('SVC_ENVIRONMENT set starts at info, with environment_defaulted false', async (t) => {
  // As the systemd units set it; an explicit dev and --env are test/config/config.environment-default.test.ts's.
  const started = await startedLine(t, { SVC_ENVIRONMENT: 'prod', SVC_SHUTDOWN_DELAY_MS: '0' })
  t.match(started, { level: 'info', version: PACKAGE_VERSION, environment: 'prod', environment_defaulted: false })
})

t.test('a fault while reading the configuration is thrown, not reported as invalid configuration', async (t) => {
  const fault = new TypeError('an environment that cannot be read')
  const env: Env = new Proxy(
    {},
    {
      get: () => {
        throw fault
      },
    },
  )
  await t.rejects(start({ argv: [], env }), fault)
  t.equal(process.exitCode, undefined, 'not exit 2')
})
