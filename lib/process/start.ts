// Start-up, as `svc` runs it (lib/README.md §8): configuration → logs → the app → models → listen →
// hot reload and drift schedule → signal handling → `application_started`. The command table
// (commands.ts) calls this and nothing else to serve; so does every test that starts a service
// process (test/fixtures/serve.ts), so the lifecycle tests exercise the very code the CLI runs.
//
// In order: configuration and credentials, and the payload log file's lock (exit 2 on a problem) → the stdout and stderr line
// writers and loggers, fatal-error handlers → `createApp` (registry, tracing, model registry,
// drift, probes, rates, route table, pipelines, listeners) → every model loaded and compiled → the
// public listener (once it is bound the lifecycle turns `ready`, so /startup and /ready can answer
// 200), then the admin one when SVC_ADMIN_PORT is set (exit 1 if either cannot listen) → hot reload
// and drift schedule started → signal handlers → `application_started` (a warning when
// SVC_ENVIRONMENT was left unset).
import { createApp, type App } from '../app.js'
import { errorCode, errorMessage } from '../core/errors.js'
import { ConfigError, type Env, readConfigAndDefaulted } from '../config/config.js'
import { withCredentials } from '../config/credentials.js'
import type { RouteDef } from '../core/pipeline.js'
import { lockPayloadLog, type PayloadLock } from '../serving/payload/lock.js'
import { exitOnFatal, stopOnSignals, type Exit } from './shutdown.js'
import { createLineWriter } from '../telemetry/line-writer.js'
import { createLogger } from '../telemetry/logger.js'
import { VERSION } from '../config/version.js'

export type StartOptions = Readonly<{
  argv: readonly string[]
  env: Env
  /** Routes beside the service's own: tests bring slow and failing endpoints. */
  routes?: readonly RouteDef[]
  /** How the process ends on a fatal error or a second signal; process.exit. */
  exit?: Exit
}>

const LISTEN_ERRORS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'address not available on this machine',
}

/**
 * Serves until a signal stops it. Resolves with the app once it listens, or with undefined when it
 * could not start; `process.exitCode` is then 2 (invalid configuration) or 1 (cannot listen).
 * Anything else thrown while reading the configuration is a fault and rejects.
 */
export const start = async ({ argv, env, routes = [], exit = process.exit }: StartOptions): Promise<App | undefined> => {
  let read: ReturnType<typeof readConfigAndDefaulted>
  let lock: PayloadLock | undefined
  try {
    read = readConfigAndDefaulted(withCredentials(env), argv)
    // A payload log file another live process writes is refused as a bad variable is.
    lock = lockPayloadLog(read.config.models.payloadLog?.target)
  } catch (error: unknown) {
    // Only a configuration problem is exit 2; anything else is a fault, and is not disguised as one.
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`svc: ${error.message}\nsvc --help lists the accepted flags and variables.\n`)
    process.exitCode = 2
    return undefined
  }
  const { config, defaulted } = read

  // Lines are buffered per event-loop turn; every exit path passes through 'exit', which flushes.
  const out = createLineWriter(1)
  const err = createLineWriter(2)
  process.on('exit', () => {
    lock?.release()
    out.flush()
    err.flush()
  })
  const logOptions = { name: config.name, level: config.logLevel, format: config.logFormat }
  const logger = createLogger({ ...logOptions, write: out.write, isColour: process.stdout.isTTY })
  // Failures of the process itself go to stderr, whatever the level.
  const processLog = createLogger({ ...logOptions, level: 'error', write: err.write, isColour: process.stderr.isTTY })
  exitOnFatal(processLog, exit)

  const app = createApp({ config, logger, routes, writeConsole: out.write, droppedLogLines: () => out.dropped() + err.dropped() })
  // Models are loaded before the listener opens; a broken one is reported, not fatal.
  await app.models.load()
  let port: number
  let adminPort: number | undefined
  let at = `${config.host}:${config.port}`
  try {
    port = (await app.server.listen()).port
    if (app.admin !== undefined && config.admin !== undefined) {
      at = `${config.admin.host}:${config.admin.port} (SVC_ADMIN_PORT)`
      adminPort = (await app.admin.listen()).port
    }
  } catch (error: unknown) {
    process.stderr.write(`svc: cannot listen on ${at}: ${LISTEN_ERRORS[String(errorCode(error))] ?? errorMessage(error)}\n`)
    // The public listener may already be open when the admin one fails; it must not keep the process up.
    app.server.http.close()
    process.exitCode = 1
    return undefined
  }

  app.models.start()
  app.drift?.scheduler.start()
  stopOnSignals(app, logger, config, exit)
  const admin = adminPort === undefined ? {} : { admin_host: config.admin?.host, admin_port: adminPort }
  // An unset SVC_ENVIRONMENT means dev, which a prod host must not run as unnoticed (its alerts and
  // shutdown delay follow the environment): then the line says so, at warning, seen at LOG_LEVEL=WARNING too.
  const isEnvironmentDefaulted = defaulted.has('SVC_ENVIRONMENT')
  logger[isEnvironmentDefaulted ? 'warning' : 'info']('application_started', {
    version: VERSION,
    environment: config.environment,
    environment_defaulted: isEnvironmentDefaulted,
    host: config.host,
    port,
    ...admin,
  })
  return app
}
