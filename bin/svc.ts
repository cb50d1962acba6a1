#!/usr/bin/env node
// svc: flags + environment → Config, start, signals, exit codes.
//   0 stopped cleanly · 1 start-up or runtime failure · 2 invalid configuration
//   128+n when a second signal n cuts a graceful shutdown short
import { createApp } from '../lib/app.js'
import { ConfigError, readConfig, USAGE, type Config } from '../lib/config.js'
import { withCredentials } from '../lib/credentials.js'
import { createLineWriter } from '../lib/telemetry/line-writer.js'
import { exitOnFatal, stopOnSignals } from '../lib/lifecycle.js'
import { LOADGEN_USAGE, LoadgenUsageError, parseLoadgenArgs, runLoadgen } from '../lib/loadgen/loadgen.js'
import { createLogger } from '../lib/telemetry/logger.js'
import { VERSION } from '../lib/version.js'

const LISTEN_ERRORS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'address already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'address not available on this machine',
}

/** `svc loadgen …`: 0 when every request succeeded, 1 otherwise, 2 for a bad command line. */
const loadgen = async (argv: readonly string[]): Promise<void> => {
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(LOADGEN_USAGE)
  const write = (line: string): void => void process.stdout.write(`${line}\n`)
  try {
    const summary = await runLoadgen(parseLoadgenArgs(argv), write)
    process.exitCode = summary.failed === 0 && summary.skipped === 0 ? 0 : 1
  } catch (error: unknown) {
    const isUsage = error instanceof LoadgenUsageError
    process.stderr.write(`svc loadgen: ${(error as Error).message}\n${isUsage ? 'svc loadgen --help lists the options.\n' : ''}`)
    process.exitCode = isUsage ? 2 : 1
  }
}

const main = async (argv: readonly string[]): Promise<void> => {
  if (argv[0] === 'loadgen') return loadgen(argv.slice(1))
  if (argv.includes('--help') || argv.includes('-h')) return void process.stdout.write(USAGE)
  if (argv.includes('--version') || argv.includes('-V')) return void process.stdout.write(`${VERSION}\n`)

  let config: Config
  try {
    config = readConfig(withCredentials(process.env), argv)
  } catch (error: unknown) {
    /* c8 ignore next -- readConfig and withCredentials throw nothing else */
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`svc: ${error.message}\nsvc --help lists the accepted flags and variables.\n`)
    return void (process.exitCode = 2)
  }

  // Lines are buffered per event-loop turn; every exit path passes through 'exit', which flushes.
  const out = createLineWriter(1)
  const err = createLineWriter(2)
  process.on('exit', () => {
    out.flush()
    err.flush()
  })
  const logOptions = { name: config.name, level: config.logLevel, format: config.logFormat }
  const logger = createLogger({ ...logOptions, write: out.write, isColour: process.stdout.isTTY })
  // Failures of the process itself go to stderr, whatever the level.
  const processLog = createLogger({ ...logOptions, level: 'error', write: err.write, isColour: process.stderr.isTTY })
  exitOnFatal(processLog, process.exit)

  const app = createApp({ config, logger, writeConsole: out.write, droppedLogLines: () => out.dropped() + err.dropped() })
  const { server } = app
  // DESIGN §8: models are loaded before the listener opens; a broken one is reported, not fatal.
  await app.models.load()
  let port: number
  let adminPort: number | undefined
  let at = `${config.host}:${config.port}`
  try {
    port = (await server.listen()).port
    if (app.admin !== undefined && config.admin !== undefined) {
      at = `${config.admin.host}:${config.admin.port} (SVC_ADMIN_PORT)`
      adminPort = (await app.admin.listen()).port
    }
  } catch (error: unknown) {
    const { code, message } = error as NodeJS.ErrnoException
    process.stderr.write(`svc: cannot listen on ${at}: ${LISTEN_ERRORS[String(code)] ?? message}\n`)
    // The public listener may already be open when the admin one fails; it must not keep the process up.
    server.http.close()
    return void (process.exitCode = 1)
  }

  app.models.start()
  app.drift?.scheduler.start()
  stopOnSignals(app, logger, config, process.exit)
  const admin = adminPort === undefined ? {} : { admin_host: config.admin?.host, admin_port: adminPort }
  logger.info('application_started', { version: VERSION, environment: config.environment, host: config.host, port, ...admin })
}

await main(process.argv.slice(2))
