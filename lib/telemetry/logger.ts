// A small structured logger (DESIGN §5): one JSON object per line, or a readable console line.
// Levels below the configured one are a shared no-op chosen at creation, so a disabled call costs
// a function call and nothing else. Request bindings come from the AsyncLocalStorage store.
import type { LogFormat, LogLevel } from '../config.js'
import type { RequestBindings } from '../http/context.js'
import { requestStore } from './request-store.js'

export type Fields = Readonly<Record<string, unknown>>
export type LogFn = (event: string, fields?: Fields, bindings?: RequestBindings) => void

export type Logger = Readonly<{
  level: LogLevel
  isEnabled(level: LogLevel): boolean
  debug: LogFn
  info: LogFn
  warning: LogFn
  error: LogFn
}>

export type LoggerOptions = Readonly<{
  name: string
  level: LogLevel
  format: LogFormat
  write: (chunk: string) => void
  /** Colour the console format (only when writing to a terminal). */
  isColour?: boolean
  now?: () => number
}>

const RANK: Readonly<Record<LogLevel, number>> = { debug: 10, info: 20, warning: 30, error: 40 }
const COLOUR: Readonly<Record<LogLevel, string>> = { debug: '\x1b[90m', info: '\x1b[36m', warning: '\x1b[33m', error: '\x1b[31m' }
const RESET = '\x1b[0m'
const noop: LogFn = () => {}

/** An Error as log fields: JSON.stringify would print `{}`. */
export const errorFields = (error: unknown): Fields =>
  error instanceof Error
    ? { type: error.constructor.name, message: error.message, stack: error.stack }
    : { type: typeof error, message: String(error) }

export const createLogger = (options: LoggerOptions): Logger => {
  const { level, write } = options
  const now = options.now ?? Date.now
  const timestamp = isoClock(now)
  const format = options.format === 'json' ? jsonLine(options.name) : consoleLine(options.name, options.isColour === true)
  const at = (lvl: LogLevel): LogFn =>
    RANK[lvl] < RANK[level]
      ? noop
      : (event, fields, bindings = requestStore.getStore()) => write(format(timestamp(), lvl, event, fields, bindings))
  return {
    level,
    isEnabled: (lvl) => RANK[lvl] >= RANK[level],
    debug: at('debug'),
    info: at('info'),
    warning: at('warning'),
    error: at('error'),
  }
}

type Format = (timestamp: string, level: LogLevel, event: string, fields: Fields | undefined, bindings: RequestBindings | undefined) => string

const jsonLine = (name: string): Format => {
  const service = `,"service.name":${JSON.stringify(name)}`
  return (timestamp, level, event, fields, bindings) => {
    let line = `{"timestamp":"${timestamp}","level":"${level}","event":${JSON.stringify(event)}${service}`
    if (bindings !== undefined) {
      line += `,"request_id":"${bindings.requestId}"`
      if (bindings.traceId !== undefined) line += `,"trace_id":"${bindings.traceId}"`
      if (bindings.spanId !== undefined) line += `,"span_id":"${bindings.spanId}"`
    }
    for (const key in fields) line += `,${JSON.stringify(key)}:${json(fields[key])}`
    return `${line}}\n`
  }
}

// A log call must never throw: values JSON cannot hold (BigInt, cycles) are written as text.
const json = (value: unknown): string => {
  try {
    return JSON.stringify(value instanceof Error ? errorFields(value) : value) ?? 'null'
  } catch (error: unknown) {
    return JSON.stringify(`[unserialisable: ${(error as Error).message}]`)
  }
}

const consoleLine = (name: string, isColour: boolean): Format => (timestamp, level, event, fields, bindings) => {
  const label = level.toUpperCase().padEnd(7)
  let line = `${timestamp} ${isColour ? COLOUR[level] + label + RESET : label} ${event} [${name}]`
  for (const key in fields) line += ` ${key}=${consoleValue(fields[key])}`
  if (bindings !== undefined) {
    line += ` request_id=${bindings.requestId}`
    if (bindings.traceId !== undefined) line += ` trace_id=${bindings.traceId}`
  }
  return `${line}\n`
}

const consoleValue = (value: unknown): string =>
  typeof value === 'string' ? (/^[\w./:<>{}@+-]*$/.test(value) && value !== '' ? value : JSON.stringify(value)) : json(value)

/** ISO 8601 UTC with milliseconds; formatted at most once per millisecond, however many lines. */
const isoClock = (now: () => number): (() => string) => {
  let last = Number.NaN
  let text = ''
  return () => {
    const ms = now()
    if (ms !== last) {
      last = ms
      text = new Date(ms).toISOString()
    }
    return text
  }
}
