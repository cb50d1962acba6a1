// The one error hierarchy (lib/core/errors.ts): every error class in lib/ is an SvcError carrying a
// stable code and its own name, and catch clauses read what was thrown with errorMessage.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { CodedError, errorCode, errorMessage, FieldError, SvcError } from '../../lib/core/errors.js'
import { HttpError } from '../../lib/core/http/errors.js'
import { ArtifactError } from '../../lib/models/artifact.js'
import { InputError } from '../../lib/models/inference/input-error.js'
import { RequestError } from '../../lib/models/inference/request-error.js'
import { OnnxGraphError } from '../../lib/models/onnx/graph.js'
import { OnnxMetadataError } from '../../lib/models/onnx/metadata.js'
import { PredictionBusyError } from '../../lib/models/onnx/pool/busy-error.js'
import { ProfileError } from '../../lib/models/profile.js'
import { StoreError } from '../../lib/models/store/error.js'
import { ExchangeError } from '../../lib/models/store/s3/exchange.js'
import { PushError } from '../../lib/tools/push/errors.js'
import { ManifestError } from '../../lib/models/store/manifest.js'
import { ModelLookupError } from '../../lib/serving/lookup-error.js'
import { SinkError } from '../../lib/serving/payload/sink.js'
import { ConfigError } from '../../lib/config/config.js'
import { UpstreamError } from '../../lib/rates/upstream-error.js'
import { ExportTimeoutError } from '../../lib/telemetry/span-processor.js'
import { LoadgenUsageError } from '../../lib/tools/loadgen/errors.js'
import { ProfileUsageError, ProfileWriteError } from '../../lib/tools/profile/command.js'
import { LineError, ProfileInputError } from '../../lib/tools/profile/errors.js'
import { ModelLoadError } from '../../lib/tools/profile/model.js'
import { PlanError } from '../../lib/tools/rollout/plan.js'
import { StateError } from '../../lib/tools/rollout/state.js'

const ROOT = join(import.meta.dirname, '..', '..')

/** One of each error class in lib/, with the code it carries. */
const ERRORS: ReadonlyArray<readonly [SvcError<string | number>, string | number]> = [
  [new HttpError(404, 'MODEL_NOT_FOUND', 'Model x not found'), 'MODEL_NOT_FOUND'],
  [new ConfigError(['PORT=x: expected an integer from 0 to 65535']), 'INVALID_CONFIGURATION'],
  [new ArtifactError('SHA256_MISMATCH', 'sha256', 'does not match'), 'SHA256_MISMATCH'],
  [new OnnxGraphError('TRUNCATED', 'model', 'ends inside a field'), 'TRUNCATED'],
  [new OnnxMetadataError('task: must be one of classification, regression'), 'INVALID_METADATA'],
  [new InputError([{ row: 0, feature: 'x', code: 'MISSING_FEATURE', message: 'row 0: x is missing' }]), 'INVALID_INPUT'],
  [new RequestError('BATCH_TOO_LARGE', 'the batch has 2 rows; at most 1 are allowed per request'), 'BATCH_TOO_LARGE'],
  [new ProfileError('INVALID_JSON', '(document)', 'is not UTF-8 JSON'), 'INVALID_JSON'],
  [new StoreError('NOT_FOUND', 'iris/manifest.json not found'), 'NOT_FOUND'],
  [new ManifestError('versions: must be an array'), 'INVALID_MANIFEST'],
  [new ModelLookupError('MODEL_NOT_FOUND', 'Model x not found'), 'MODEL_NOT_FOUND'],
  [new SinkError('SINK_FAILED', 'HTTP 503'), 'SINK_FAILED'],
  [new PredictionBusyError('queue_full'), 'OVERLOADED'],
  [new UpstreamError('UPSTREAM_TIMEOUT', 'No upstream answered with a rate'), 'UPSTREAM_TIMEOUT'],
  [new ExportTimeoutError('export did not finish within 30000 ms'), 4],
  [new LoadgenUsageError('--model is required'), 'INVALID_ARGUMENTS'],
  [new ProfileUsageError('--input is required'), 'INVALID_ARGUMENTS'],
  [new ProfileWriteError('out.json: cannot be written'), 'WRITE_FAILED'],
  [new ModelLoadError('model iris: not found'), 'MODEL_UNAVAILABLE'],
  [new LineError(3, 'expected 5 fields, found 4'), 'INVALID_LINE'],
  [new ProfileInputError('train.csv', 3, 'expected 5 fields, found 4'), 'INVALID_INPUT_FILE'],
  [new ExchangeError({ kind: 'timeout' }), 'EXCHANGE_TIMEOUT'],
  [new PushError('VERSION_EXISTS', 'iris version 2 already exists'), 'VERSION_EXISTS'],
  [new PlanError('UNKNOWN_MEMBER', 'gates.latency_p95.rol', 'unknown member'), 'UNKNOWN_MEMBER'],
  [new StateError('INVALID_TRANSITION', 'intent', 'is null: no transition is pending'), 'INVALID_TRANSITION'],
]

t.test('every error class is an SvcError with its code and its own name', async (t) => {
  for (const [error, code] of ERRORS) {
    const name = error.constructor.name
    t.ok(error instanceof SvcError && error instanceof Error, `${name} is an SvcError`)
    t.equal(error.code, code, `${name}: code`)
    t.equal(error.name, name, `${name}: name`)
  }
  // A text code is UPPER_SNAKE; the one number is gRPC's DEADLINE_EXCEEDED, as the exporters' errors carry.
  for (const [error] of ERRORS) if (typeof error.code === 'string') t.match(error.code, /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/, error.constructor.name)
})

/** The TypeScript sources under `dir`, with their text. */
const sources = (dir: string): Array<readonly [string, string]> =>
  readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => [`${dir}/${path}`, readFileSync(join(ROOT, dir, path), 'utf8')] as const)

t.test('no error class in lib/ stands outside the hierarchy, and no catch clause casts what it caught', async (t) => {
  const all = [...sources('lib'), ...sources('bin')]
  t.ok(all.length > 50, `${all.length} modules`)
  t.same(
    all.filter(([path, text]) => path !== 'lib/core/errors.ts' && /\bextends Error\b/.test(text)).map(([path]) => path),
    [],
    'extends Error: extend SvcError (lib/core/errors.ts)',
  )
  t.same(
    all.filter(([, text]) => /\bas Error\b/.test(text)).map(([path]) => path),
    [],
    'as Error: read it with errorMessage (lib/core/errors.ts)',
  )
  t.same(
    ERRORS.length,
    all.filter(([path]) => path !== 'lib/core/errors.ts').flatMap(([, text]) => text.match(/\bextends (?:SvcError|CodedError|FieldError)\b/g) ?? []).length,
    'one case above per class',
  )
})

t.test('a coded error takes its code where it is thrown; a field error keeps the field and the reason', async (t) => {
  const store = new StoreError('TOO_LARGE', 'iris/1/model.json is larger than 1024 bytes', { cause: new RangeError('size') })
  t.ok(store instanceof CodedError, 'StoreError is a CodedError')
  t.match(store, { code: 'TOO_LARGE', message: 'iris/1/model.json is larger than 1024 bytes', cause: RangeError })
  t.equal(Object.keys(store).filter((key) => key === 'code').length, 1, 'the code is set once, by the base')
  const http = new HttpError(503, 'SERVER_NOT_READY', 'No model is ready to serve')
  t.ok(http instanceof CodedError, 'HttpError is a CodedError')
  t.match(http, { status: 503, code: 'SERVER_NOT_READY' })
  for (const error of [new ArtifactError('INVALID_SCHEMA', 'task', 'must be a string'), new ProfileError('INVALID_SCHEMA', 'task', 'must be a string')]) {
    t.ok(error instanceof FieldError, `${error.name} is a FieldError`)
    t.match(error, { code: 'INVALID_SCHEMA', field: 'task', reason: 'must be a string', message: 'task: must be a string' }, error.name)
  }
  const graph = new OnnxGraphError('TOO_DEEP', 'model.graph', 'nests types too deeply')
  t.match(graph, { code: 'TOO_DEEP', field: 'model.graph', reason: 'nests types too deeply', message: 'model.graph: nests types too deeply' })
})

t.test('errorMessage reads what was thrown: a message, or the value as text', async (t) => {
  t.equal(errorMessage(new TypeError('bad')), 'bad')
  t.equal(errorMessage('plain text'), 'plain text', 'a thrown string is its own message')
  t.equal(errorMessage({ message: 'from an object' }), 'from an object', 'anything with a message, as native addons throw')
  t.equal(errorMessage({ message: 42 }), '42')
  t.equal(errorMessage(undefined), 'undefined')
  t.equal(errorMessage(null), 'null')
  t.equal(errorMessage(7), '7')
  t.equal(errorMessage({ code: 'X' }), '[object Object]', 'an object without a message as text')
  t.equal(errorMessage(Symbol('s')), 'Symbol(s)', 'never throws on a symbol, which a template literal would')
})

t.test("errorCode reads Node's error code from what was thrown, and nothing else", async (t) => {
  const missing = Object.assign(new Error('no such file'), { code: 'ENOENT' })
  t.equal(errorCode(missing), 'ENOENT')
  t.equal(errorCode({ code: 'EAGAIN' }), 'EAGAIN', 'anything with a code, as native addons throw')
  t.equal(errorCode({ code: 5 }), undefined, 'a code that is not a string is no errno name')
  t.equal(errorCode(new Error('plain')), undefined)
  t.equal(errorCode(null), undefined, 'never throws on null, which a property read would')
  t.equal(errorCode('ENOENT'), undefined)
})
