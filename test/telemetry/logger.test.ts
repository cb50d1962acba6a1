import t from 'tap'
import type { LogFormat, LogLevel } from '../../lib/config/config.js'
import type { RequestBindings } from '../../lib/core/http/context.js'
import { createLogger, errorFields, type Logger } from '../../lib/telemetry/logger.js'
import { requestStore } from '../../lib/telemetry/request-store.js'

const NOW = Date.UTC(2024, 0, 2, 3, 4, 5, 678)
const STAMP = '2024-01-02T03:04:05.678Z'

type Options = { level?: LogLevel; format?: LogFormat; isColour?: boolean; now?: () => number }

const capture = (options: Options = {}): { logger: Logger; lines: string[] } => {
  const lines: string[] = []
  const logger = createLogger({
    name: 'svc',
    level: options.level ?? 'debug',
    format: options.format ?? 'json',
    isColour: options.isColour ?? false,
    now: options.now ?? (() => NOW),
    write: (chunk) => void lines.push(chunk),
  })
  return { logger, lines }
}

const parsed = (lines: readonly string[]): Record<string, unknown>[] => lines.map((l) => JSON.parse(l) as Record<string, unknown>)

const bindings = (requestId: string | undefined, traceId?: string, spanId?: string): RequestBindings => ({
  requestId,
  traceId,
  spanId,
  traceContext: undefined,
})

t.test('a JSON line holds timestamp, level, event, service name and the fields, in that order', async (t) => {
  const { logger, lines } = capture()
  logger.info('server_started', { port: 8000, host: '127.0.0.1', isReady: true })
  t.same(lines, [`{"timestamp":"${STAMP}","level":"info","event":"server_started","service.name":"svc","port":8000,"host":"127.0.0.1","isReady":true}\n`])
})

t.test('each level writes its own lower-case name', async (t) => {
  const { logger, lines } = capture()
  logger.debug('a')
  logger.info('b')
  logger.warning('c')
  logger.error('d')
  t.same(
    parsed(lines).map((l) => l['level']),
    ['debug', 'info', 'warning', 'error'],
  )
})

t.test('a line without fields has only the fixed members', async (t) => {
  const { logger, lines } = capture()
  logger.info('tick')
  t.same(lines, [`{"timestamp":"${STAMP}","level":"info","event":"tick","service.name":"svc"}\n`])
})

t.test('event, service name and field names are JSON-escaped', async (t) => {
  const lines: string[] = []
  const logger = createLogger({ name: 'a"b', level: 'info', format: 'json', now: () => NOW, write: (c) => void lines.push(c) })
  logger.info('say "hi"\n', { 'odd"key': 'new\nline' })
  t.same(parsed(lines), [{ timestamp: STAMP, level: 'info', event: 'say "hi"\n', 'service.name': 'a"b', 'odd"key': 'new\nline' }])
})

t.test('bindings add request_id, without trace members when there is no trace', async (t) => {
  const { logger, lines } = capture()
  logger.info('handled', { status: 200 }, bindings('req-1'))
  t.same(lines, [`{"timestamp":"${STAMP}","level":"info","event":"handled","service.name":"svc","request_id":"req-1","status":200}\n`])
})

t.test('bindings with a trace add trace_id and span_id', async (t) => {
  const { logger, lines } = capture()
  logger.info('handled', undefined, bindings('req-1', '4bf92f3577b34da6a3ce929d0e0e4736', '00f067aa0ba902b7'))
  t.same(parsed(lines), [
    {
      timestamp: STAMP,
      level: 'info',
      event: 'handled',
      'service.name': 'svc',
      request_id: 'req-1',
      trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
      span_id: '00f067aa0ba902b7',
    },
  ])
})

t.test('bindings come from the request store when not passed', async (t) => {
  const { logger, lines } = capture()
  const store = bindings('req-store')
  requestStore.run(store, () => {
    logger.info('inside')
    store.traceId = 'trace-1'
    store.spanId = 'span-1'
    logger.info('traced')
  })
  logger.info('outside')
  t.same(
    parsed(lines).map(({ event, request_id, trace_id, span_id }) => ({ event, request_id, trace_id, span_id })),
    [
      { event: 'inside', request_id: 'req-store', trace_id: undefined, span_id: undefined },
      { event: 'traced', request_id: 'req-store', trace_id: 'trace-1', span_id: 'span-1' },
      { event: 'outside', request_id: undefined, trace_id: undefined, span_id: undefined },
    ],
  )
})

t.test('bindings survive an await inside the request store', async (t) => {
  const { logger, lines } = capture()
  await requestStore.run(bindings('req-async'), async () => {
    await new Promise((resolve) => setImmediate(resolve))
    logger.info('later')
  })
  t.equal(parsed(lines)[0]?.['request_id'], 'req-async')
})

t.test('bindings passed explicitly win over the request store', async (t) => {
  const { logger, lines } = capture()
  requestStore.run(bindings('from-store'), () => logger.info('x', {}, bindings('explicit')))
  t.equal(parsed(lines)[0]?.['request_id'], 'explicit')
})

t.test('levels below the configured one write nothing', async (t) => {
  const { logger, lines } = capture({ level: 'warning' })
  logger.debug('d')
  logger.info('i')
  logger.warning('w')
  logger.error('e')
  t.same(
    parsed(lines).map((l) => l['event']),
    ['w', 'e'],
  )
})

t.test('isEnabled agrees with what is written, for every configured level', async (t) => {
  const levels: readonly LogLevel[] = ['debug', 'info', 'warning', 'error']
  for (const configured of levels) {
    const { logger, lines } = capture({ level: configured })
    t.equal(logger.level, configured)
    for (const level of levels) {
      const before = lines.length
      logger[level]('probe')
      t.equal(logger.isEnabled(level), lines.length > before, `${configured} logger, ${level} call`)
    }
  }
})

t.test('disabled levels share one no-op', async (t) => {
  const { logger } = capture({ level: 'error' })
  t.equal(logger.debug, logger.info)
  t.equal(logger.info, logger.warning)
  t.not(logger.warning, logger.error)
})

t.test('an Error field is written with type, message and stack', async (t) => {
  const { logger, lines } = capture()
  const error = new TypeError('boom')
  logger.error('failed', { error })
  const [line] = parsed(lines)
  t.same(line?.['error'], { type: 'TypeError', message: 'boom', stack: error.stack })
  t.match(line?.['error'], { stack: /^TypeError: boom\n\s+at / })
})

t.test('errorFields names an Error subclass by its class', async (t) => {
  class ModelLoadError extends Error {}
  const error = new ModelLoadError('no weights')
  t.same(errorFields(error), { type: 'ModelLoadError', message: 'no weights', stack: error.stack })
})

t.test('errorFields describes a thrown value that is not an Error', async (t) => {
  t.same(errorFields('nope'), { type: 'string', message: 'nope' })
  t.same(errorFields(42), { type: 'number', message: '42' })
  t.same(errorFields(undefined), { type: 'undefined', message: 'undefined' })
  t.same(errorFields({ code: 1 }), { type: 'object', message: '[object Object]' })
})

t.test('a thrown value that is not an Error is logged through errorFields', async (t) => {
  const { logger, lines } = capture()
  logger.error('failed', { error: errorFields('just a string') })
  t.same(parsed(lines)[0]?.['error'], { type: 'string', message: 'just a string' })
})

t.test('undefined and unserialisable field values are written as null', async (t) => {
  const { logger, lines } = capture()
  logger.info('x', { a: undefined, b: null, c: () => 1, d: [undefined] })
  t.same(lines, [`{"timestamp":"${STAMP}","level":"info","event":"x","service.name":"svc","a":null,"b":null,"c":null,"d":[null]}\n`])
})

t.test('a console line is plain text with padded level, event and service name', async (t) => {
  const { logger, lines } = capture({ format: 'console' })
  logger.info('server_started', { port: 8000, path: '/api/v1/models/{name}', note: 'two words', empty: '', nothing: undefined, obj: { a: 1 } })
  logger.warning('slow')
  t.same(lines, [
    `${STAMP} INFO    server_started [svc] port=8000 path=/api/v1/models/{name} note="two words" empty="" nothing=null obj={"a":1}\n`,
    `${STAMP} WARNING slow [svc]\n`,
  ])
})

t.test('a console line quotes string values that need it', async (t) => {
  const { logger, lines } = capture({ format: 'console' })
  logger.info('x', { a: 'user@example.com', b: 'a=b', c: 'quote"d', d: 'tab\there' })
  t.same(lines, [`${STAMP} INFO    x [svc] a=user@example.com b="a=b" c="quote\\"d" d="tab\\there"\n`])
})

t.test('a console line shows an Error field as JSON', async (t) => {
  const { logger, lines } = capture({ format: 'console' })
  const error = new RangeError('out')
  logger.error('failed', { error })
  t.equal(lines[0], `${STAMP} ERROR   failed [svc] error=${JSON.stringify({ type: 'RangeError', message: 'out', stack: error.stack })}\n`)
})

t.test('a console line appends request_id, and trace_id and span_id when there is a trace, as the JSON line does', async (t) => {
  const { logger, lines } = capture({ format: 'console' })
  logger.info('a', { status: 200 }, bindings('req-1'))
  logger.info('b', undefined, bindings('req-2', 'trace-2', 'span-2'))
  t.same(lines, [`${STAMP} INFO    a [svc] status=200 request_id=req-1\n`, `${STAMP} INFO    b [svc] request_id=req-2 trace_id=trace-2 span_id=span-2\n`])
})

t.test('a colour console line wraps the level in its colour code', async (t) => {
  const { logger, lines } = capture({ format: 'console', isColour: true })
  logger.debug('d')
  logger.info('i')
  logger.warning('w')
  logger.error('e')
  t.same(lines, [
    `${STAMP} \x1b[90mDEBUG  \x1b[0m d [svc]\n`,
    `${STAMP} \x1b[36mINFO   \x1b[0m i [svc]\n`,
    `${STAMP} \x1b[33mWARNING\x1b[0m w [svc]\n`,
    `${STAMP} \x1b[31mERROR  \x1b[0m e [svc]\n`,
  ])
})

t.test('a console line has no colour codes unless asked', async (t) => {
  const lines: string[] = []
  createLogger({ name: 'svc', level: 'info', format: 'console', now: () => NOW, write: (c) => void lines.push(c) }).error('e')
  t.equal(lines[0], `${STAMP} ERROR   e [svc]\n`)
})

t.test('the timestamp text is reused within a millisecond and changes when the clock moves', async (t) => {
  let clock = NOW
  const { logger, lines } = capture({ now: () => clock })
  const formats = t.capture(Date.prototype, 'toISOString', Date.prototype.toISOString)
  logger.info('a')
  logger.info('b')
  logger.info('c')
  t.equal(formats().length, 1, 'formatted once for three lines in one millisecond')
  clock += 1
  logger.info('d')
  t.equal(formats().length, 1, 'formatted again after the clock moved')
  formats.restore()
  t.same(
    parsed(lines).map((l) => l['timestamp']),
    [STAMP, STAMP, STAMP, '2024-01-02T03:04:05.679Z'],
  )
})

t.test('without an injected clock the timestamp is the current time', async (t) => {
  const lines: string[] = []
  const logger = createLogger({ name: 'svc', level: 'info', format: 'json', write: (c) => void lines.push(c) })
  const before = Date.now()
  logger.info('now')
  const after = Date.now()
  const stamp = Date.parse(String(parsed(lines)[0]?.['timestamp']))
  t.ok(stamp >= before && stamp <= after, `${stamp} within [${before}, ${after}]`)
})

t.test('values JSON cannot hold are written as text instead of throwing', async (t) => {
  const { logger, lines } = capture()
  const cycle: Record<string, unknown> = {}
  cycle['self'] = cycle
  t.doesNotThrow(() => logger.info('odd', { big: 10n, cycle }))
  t.match(parsed(lines)[0], { big: /unserialisable: .*BigInt/, cycle: /unserialisable: .*circular/ })
})

t.test('span_id is written only when the store holds one', async (t) => {
  const { logger, lines } = capture()
  logger.info('a', {}, bindings('r1', 'trace'))
  t.same(
    Object.keys(parsed(lines)[0] ?? {}).filter((k) => k.endsWith('_id')),
    ['request_id', 'trace_id'],
  )
})
