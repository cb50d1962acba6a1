// A small structured logger (lib/README.md §5): one JSON object per line, or a readable console line.
// Levels below the configured one are a shared no-op chosen at creation, so a disabled call costs
// a function call and nothing else. Request bindings come from the AsyncLocalStorage store.
//
// Every line: `timestamp` (ISO 8601 UTC, ms), `level`, `event`, `service.name`; inside a request
// `request_id`, and `trace_id` and `span_id` (lower-case hex) when it is sampled.
import type { LogFormat, LogLevel } from '../config/choices.js'
import { errorMessage } from '../core/errors.js'
import type { RequestBindings } from '../core/http/context.js'
import { requestStore } from './request-store.js'

export type Fields = Readonly<Record<string, unknown>>
export type LogFn = (event: string, fields?: Fields, bindings?: RequestBindings) => void
/**
 * The hot path, prepared once per (level, event): `membersJson` is already JSON members, each led
 * by a comma (`,"status":200`), so a call only joins strings.
 */
export type LineFn = (membersJson: string, bindings?: RequestBindings) => void

export type Logger = Readonly<{
  level: LogLevel
  isEnabled(level: LogLevel): boolean
  debug: LogFn
  info: LogFn
  warning: LogFn
  error: LogFn
  /** A writer of one event at one level, or undefined when that level is off. */
  prepare(level: LogLevel, event: string): LineFn | undefined
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
  error instanceof Error ? { type: error.constructor.name, message: error.message, stack: error.stack } : { type: typeof error, message: String(error) }

export const createLogger = (options: LoggerOptions): Logger => {
  const { level, write } = options
  const timestamp = isoClock(options.now ?? Date.now)
  const isOn = (lvl: LogLevel): boolean => RANK[lvl] >= RANK[level]
  // Each format takes one kind of input natively and converts the other; JSON's native input is
  // the pre-serialised members the request lines use, so the hot path does no conversion.
  let prepareMembers: (lvl: LogLevel, event: string) => (members: string, bindings: RequestBindings | undefined) => void
  let emitFields: (lvl: LogLevel, event: string, fields: Fields | undefined, bindings: RequestBindings | undefined) => void
  if (options.format === 'json') {
    const format = jsonLine(options.name)
    prepareMembers = (lvl, event) => {
      const head = format(lvl, event)
      return (members, bindings) => write(head(timestamp(), members, bindings))
    }
    emitFields = (lvl, event, fields, bindings) => write(format(lvl, event)(timestamp(), membersOf(fields), bindings))
  } else {
    const format = consoleLine(options.name, options.isColour === true)
    emitFields = (lvl, event, fields, bindings) => write(format(timestamp(), lvl, event, fields, bindings))
    prepareMembers = (lvl, event) => (members, bindings) => emitFields(lvl, event, JSON.parse(`{${members.slice(1)}}`) as Fields, bindings)
  }
  const at = (lvl: LogLevel): LogFn => (isOn(lvl) ? (event, fields, bindings = requestStore.getStore()) => emitFields(lvl, event, fields, bindings) : noop)
  return {
    level,
    isEnabled: isOn,
    debug: at('debug'),
    info: at('info'),
    warning: at('warning'),
    error: at('error'),
    prepare: (lvl, event) => {
      if (!isOn(lvl)) return undefined
      const emit = prepareMembers(lvl, event)
      return (members, bindings = requestStore.getStore()) => emit(members, bindings)
    },
  }
}

/** Everything between the timestamp and the bindings is fixed per (level, event): built once. */
const jsonLine = (name: string) => {
  const service = `,"service.name":${JSON.stringify(name)}`
  return (level: LogLevel, event: string) => {
    const middle = `","level":"${level}","event":${JSON.stringify(event)}${service}`
    return (timestamp: string, members: string, bindings: RequestBindings | undefined): string => {
      let line = `{"timestamp":"${timestamp}${middle}`
      if (bindings !== undefined) {
        if (bindings.requestId !== undefined) line += `,"request_id":"${bindings.requestId}"`
        if (bindings.traceId !== undefined) line += `,"trace_id":"${bindings.traceId}"`
        if (bindings.spanId !== undefined) line += `,"span_id":"${bindings.spanId}"`
      }
      return `${line}${members}}\n`
    }
  }
}

const membersOf = (fields: Fields | undefined): string => {
  let members = ''
  for (const key in fields) members += `,${JSON.stringify(key)}:${json(fields[key])}`
  return members
}

// A log call must never throw: values JSON cannot hold (BigInt, cycles) are written as text.
const json = (value: unknown): string => {
  try {
    return JSON.stringify(value instanceof Error ? errorFields(value) : value) ?? 'null'
  } catch (error: unknown) {
    return JSON.stringify(`[unserialisable: ${errorMessage(error)}]`)
  }
}

const consoleLine =
  (name: string, isColour: boolean) =>
  (timestamp: string, level: LogLevel, event: string, fields: Fields | undefined, bindings: RequestBindings | undefined): string => {
    const label = level.toUpperCase().padEnd(7)
    let line = `${timestamp} ${isColour ? COLOUR[level] + label + RESET : label} ${event} [${name}]`
    for (const key in fields) line += ` ${key}=${consoleValue(fields[key])}`
    if (bindings !== undefined) {
      if (bindings.requestId !== undefined) line += ` request_id=${bindings.requestId}`
      if (bindings.traceId !== undefined) line += ` trace_id=${bindings.traceId}`
      if (bindings.spanId !== undefined) line += ` span_id=${bindings.spanId}`
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
