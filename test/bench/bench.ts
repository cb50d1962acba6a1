// `npm run bench`: bare node:http against the full service in one run, plus each layer on and off.
// Each server runs alone on CPU 0, the load generator on CPU 1 (where there are two), keep-alive,
// at saturation: wrk (Debian's `wrk`; autocannon, with a warning, when it is missing).
// Reports first the server's CPU µs per request (its utime+stime from /proc over the requests
// served), and each variant as a ratio to its bare counterpart in the same round: GET variants to
// bare node:http answering `{"ok":true}`, POST variants to bare node:http reading the same body,
// running JSON.parse on it and answering a fixed JSON of a prediction's size. Then req/s and its
// ratio to the bare GET, p99 latency, rows per CPU-second for predictions, and the server's CPU use.
//
// Variants run in interleaved rounds and each figure is the median over the rounds, so a noisy
// moment on the machine moves one sample, not the comparison.
//
// Two ladders make the account: GET (bare node:http to the CLI's GET /) and POST (the bare POST to
// the CLI's batch-1 predict), each rung one piece more than the one before, so the differences add
// up. A calibration rung, the bare POST plus 5 µs of pure CPU, shows what an added microsecond costs
// at saturation here (test/bench/README.md).
//
// Predictions are also measured from a model store written for the run (onnx-store.ts), served with
// SVC_MODEL_STORE: the kernel's iris beside ONNX Runtime's iris-sized classifier and 300-tree
// forest, at batch 1 and 64, in the same rounds.
//
// Drift monitoring (the window and the bin counters) is priced per row: predict variants with it on,
// off (SVC_DRIFT_ENABLED=false) and, at batch 64, without the bin series (SVC_DRIFT_BIN_SERIES=false),
// each on-and-off pair back to back in the same rounds; and in process (predict.ts), each part alone.
//
// Rollouts (lib/models/registry/rollout.ts, lib/serving/shadow/): the CLI's batch-1 predict of iris
// from stores holding iris 1 and the same artifact re-signed as 2 (rollout-store.ts), with no
// rollout, a 5 % canary and a 100 % shadow, in the same rounds, each scraped for the share version 2
// answered or copied; and in process (rollout.ts), a routing decision and a shadow copy.
//
// Feedback tokens (lib/serving/feedback/): the CLI's predict at batch 1 and 64 with SVC_FEEDBACK_SECRET
// set, each just before its feedback-off twin in every round; POST /api/v1/feedback with 64 labels,
// fresh tokens in every request (a wrk script turning through bodies minted for the run,
// feedback.ts), and the same 64 replayed (every label then a duplicate); and in process, minting and
// reading tokens.
//
// The payload log (lib/serving/payload/): the CLI's batch-1 predict with SVC_PAYLOAD_LOG set to a file
// and every request sampled out (SVC_PAYLOAD_LOG_PERCENT=0), and with every one logged, on either
// side of its logging-off twin in every round; and in process, building an event and the writer;
// named by BENCH_ONLY, a backlog of 100-row events drained once its sink recovers (the longest turn).
//
// Scale (scale.ts): stores of 1, 10, 100 and 500 iris copies, each size a service of its own: the
// samples and time of a scrape, the stall it causes, RSS, a drift check, and p99.9 under scrapes.
//
// The S3 store (s3-store.ts): an unchanged reload pass over 500 models, its requests and wall time.
//
// Heavy models (heavy.ts), named by BENCH_ONLY only: a 34 MB MLP and 300 trees of depth 8, the runtime
// alone and the CLI at 1, 16 and 64 connections, /health and the event loop's delay under load.
//
// Environment: BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50), BENCH_LOADGEN (wrk if
// installed, else autocannon), BENCH_ONLY (a regular expression: only the variants whose names
// match, with their bare counterparts; the account then prints only the rows it has).
import { spawn, type ChildProcess } from 'node:child_process'
import { openSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { asItsShebangRuns } from '../fixtures/shebang.js'
import { startCollector } from './collector.js'
import { hasCommand, metricTotal, parseAutocannon, parseWrk, run, waitForPort, wrkBodiesScript } from './load-tools.js'
import { createBenchStore, forestRows } from './onnx-store.js'
import { FEEDBACK_SECRET, feedbackBodies, inProcessFeedbackUs, LABELS_PER_REQUEST } from './feedback.js'
import { BACKLOG_NAME, inProcessPayloadUs, payloadBacklog } from './payload.js'
import { postPathPieces } from './post-path.js'
import { inProcessDriftNs, inProcessOnnxUs, inProcessRowNs } from './predict.js'
import { DECISIONS, inProcessRoutingNs, inProcessShadowUs, SAMPLES } from './rollout.js'
import { CANARY_PERCENT, createRolloutStores, SHADOW_PERCENT } from './rollout-store.js'
import { measureReducer, REDUCER_NAME, reducerReport } from './memory-reducer.js'
import { measureScale, SCALE_SIZES, scaleName, scaleReport } from './scale.js'
import { HEAVY_MODELS, heavyName, heavyReport, measureHeavy } from './heavy.js'
import { measureS3Pass, S3_PASS_NAME, s3PassReport } from './s3-store.js'

// Runs compiled, from dist/test/bench/, like every server it starts: no loader in any process.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const SECONDS = Number(process.env['BENCH_SECONDS'] ?? '10')
const CONNECTIONS = Number(process.env['BENCH_CONNECTIONS'] ?? '50')
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? '3')
const WARMUP_SECONDS = 3

/**
 * A POST with a JSON body instead of `GET /`; `rows` is how many predictions (or labels) one request
 * carries. `bodies`: wrk sends these in turn instead of `body`, one a request (autocannon sends `body`).
 */
type Post = Readonly<{ path: string; body: string; rows: number; bodies?: readonly string[] }>
/**
 * `base`: the bare counterpart the variant is a ratio to (the bare GET unless named). `scrape`: the
 * server's /metrics is read once the measured load ends, into its result's `metrics`.
 */
type Variant = { name: string; args: string[]; env?: Readonly<Record<string, string>>; post?: Post; base?: string; scrape?: boolean }
type Result = {
  name: string
  rps: number
  p99Ms: number
  cpuUsPerRequest: number
  serverCpu: number
  requests: number
  errors: number
  metrics?: string
}

// Spans go over OTLP/gRPC to a receiver in this process, on loopback: the export's whole cost
// (serialising, gRPC, HTTP/2) lands in the server's CPU figure, as it would with a real collector.
const collector = await startCollector()
const otlp = (sampler: string, ratio: string): Readonly<Record<string, string>> => ({
  OTLP_ENDPOINT: `127.0.0.1:${collector.port}`,
  OTEL_TRACES_SAMPLER: sampler,
  OTEL_TRACES_SAMPLER_ARG: ratio,
})
const ALWAYS = otlp('parentbased_always_on', '1')
const ONE_PERCENT = otlp('parentbased_traceidratio', '0.01')
const NEVER = otlp('parentbased_traceidratio', '0')

// Drift monitoring's cost is what the predict variants lose against these: NO_DRIFT turns it off,
// NO_BIN_SERIES keeps the window and the missing and out-of-range counters, without the bin series.
const NO_DRIFT = { SVC_DRIFT_ENABLED: 'false' }
const NO_BIN_SERIES = { SVC_DRIFT_BIN_SERIES: 'false' }
// The CLI as /usr/local/bin/svc runs it: dist/bin/svc.js with its `#!` line's Node flags, on the Node measured.
const CLI = [...asItsShebangRuns(join(ROOT, 'dist/bin/svc.js')), '--log-level', 'info', '--port']
const IRIS_ROW = { sepal_length: 6.3, sepal_width: 3.3, petal_length: 6.0, petal_width: 2.5 }
const predictRows = (model: string, instances: readonly Readonly<Record<string, number>>[]): Post => ({
  path: '/api/v1/predict',
  body: JSON.stringify({ model, instances }),
  rows: instances.length,
})
const irisRows = (rows: number): (typeof IRIS_ROW)[] => Array.from({ length: rows }, () => IRIS_ROW)
const predict = (rows: number, model = 'iris'): Post => predictRows(model, irisRows(rows))
/** The same row as Open Inference Protocol tensors, one FP64 tensor per input, for /v2/models/iris/infer. */
const inferTensors = (rows: number): Post => ({
  path: '/v2/models/iris/infer',
  body: JSON.stringify({
    inputs: Object.entries(IRIS_ROW).map(([name, value]) => ({ name, datatype: 'FP64', shape: [rows], data: Array.from({ length: rows }, () => value) })),
  }),
  rows,
})

// The limits: bare node:http with nothing of svc's. The bare POST reads whatever body it is sent,
// parses it and answers a fixed JSON of a batch-1 prediction's size; one per body compared.
const BARE_GET = 'bare node:http GET, {"ok":true}'
const BARE_POST = 'bare node:http POST, predict body'
const BARE_POST_V2 = 'bare node:http POST, OIP tensors body'
const BARE_POST_64 = 'bare node:http POST, batch-64 body'
const BARE_POST_FEEDBACK = 'bare node:http POST, 64-label feedback bodies'
const SPIN_US = 5
const BARE_POST_SPIN = `bare node:http POST + ${SPIN_US} µs of CPU`

// The run's model store: iris for the kernel, and the ONNX graphs when /usr/bin/python3 can write them.
const store = await createBenchStore(ROOT)
const STORE = { SVC_MODEL_STORE: store.dir }
const KERNEL_1 = 'store: kernel iris, batch 1'
const KERNEL_64 = 'store: kernel iris, batch 64'
const ONNX_1 = 'store: ONNX iris-size classifier, batch 1'
const ONNX_64 = 'store: ONNX iris-size classifier, batch 64'
const FOREST_1 = 'store: ONNX forest 300 trees, batch 1'
const FOREST_64 = 'store: ONNX forest 300 trees, batch 64'
// Each batch size's kernel and ONNX variants run back to back, so their per-round difference
// compares the machine in one state.
const ONNX_VARIANTS: ReadonlySet<string> = new Set([ONNX_1, FOREST_1, ONNX_64, FOREST_64])
const STORE_VARIANTS: readonly Variant[] = [
  { name: KERNEL_1, args: CLI, env: STORE, post: predict(1), base: BARE_POST },
  { name: ONNX_1, args: CLI, env: STORE, post: predict(1, 'iris_onnx'), base: BARE_POST },
  { name: FOREST_1, args: CLI, env: STORE, post: predictRows('forest', forestRows(1)), base: BARE_POST },
  { name: KERNEL_64, args: CLI, env: STORE, post: predict(64), base: BARE_POST_64 },
  { name: ONNX_64, args: CLI, env: STORE, post: predict(64, 'iris_onnx'), base: BARE_POST_64 },
  { name: FOREST_64, args: CLI, env: STORE, post: predictRows('forest', forestRows(64)), base: BARE_POST_64 },
].filter(({ name }) => store.skipped === undefined || !ONNX_VARIANTS.has(name))

// Rollouts: iris 1 and 2 (the same artifact re-signed) in three stores, one per manifest, back to
// back in each round; the same body as the CLI's predict, which has no `id`, so the canary's share
// is drawn with Math.random, as for every request without a routing key.
const rollouts = await createRolloutStores(ROOT)
const ROLLOUT_NONE = 'rollout: iris v1 + v2, batch 1, no rollout'
const ROLLOUT_CANARY = `rollout: iris v1 + v2, batch 1, canary ${CANARY_PERCENT} %`
const ROLLOUT_SHADOW = `rollout: iris v1 + v2, batch 1, shadow ${SHADOW_PERCENT} %`
const ROLLOUT_VARIANTS: readonly Variant[] = [
  { name: ROLLOUT_NONE, args: CLI, env: { SVC_MODEL_STORE: rollouts.dirs.none }, post: predict(1), base: BARE_POST, scrape: true },
  { name: ROLLOUT_CANARY, args: CLI, env: { SVC_MODEL_STORE: rollouts.dirs.canary }, post: predict(1), base: BARE_POST, scrape: true },
  { name: ROLLOUT_SHADOW, args: CLI, env: { SVC_MODEL_STORE: rollouts.dirs.shadow }, post: predict(1), base: BARE_POST, scrape: true },
]

const server = (variant: string): string[] => ['dist/test/bench/servers.js', variant]
// The account's ladder (servers.ts): each rung adds one thing the CLI does per request.
const BARE_NO_DATE = 'bare node:http without Date'
const BARE = 'bare node:http'
const BARE_ID = 'bare + request id'
const BARE_HEADERS = 'bare + request id + nosniff, cache'
const ROUTER = 'svc server + router, no layers'
const ALS_ONLY = '+ logging layer, lines off (ALS only)'
const ENCODED = '+ log lines built, not written'
const LOGGING = '+ log lines written'
const BOTH = '+ metrics layer'
const FULL = 'svc CLI: logging (to a file) + metrics'
const TRACED = 'svc CLI + tracing 1 % (OTLP)'
const ALWAYS_ON = 'svc CLI + tracing always-on (OTLP)'
const METRICS = 'metrics layer only'
const SAMPLED = 'tracing layer only, sampled + OTLP'
const UNSAMPLED = 'tracing layer only, unsampled'
const BODY = 'svc server: POST, body read, fixed answer'
// The POST ladder (servers.ts): svc's server and router without layers, one piece more each rung.
const POST_BODY = 'svc server: POST read, JSON parsed, fixed answer'
const POST_VALIDATE = '+ validation (readPredictRequest)'
const POST_PREDICT = '+ encodeInputs + kernel predict'
const POST_RESPONSE = '+ the OIP response text'
const POST_LOGGING = '+ logging layer (lines written)'
const POST_BOTH = '+ metrics layer '
const PREDICT_1 = 'svc CLI: predict iris, batch 1'
const PREDICT_64 = 'svc CLI: predict iris, batch 64'
const PREDICT_1_NO_DRIFT = 'svc CLI: predict iris, batch 1, drift off'
const PREDICT_64_NO_BIN_SERIES = 'svc CLI: predict iris, batch 64, no bin series'
const PREDICT_64_NO_DRIFT = 'svc CLI: predict iris, batch 64, drift off'
const INFER_1 = 'svc CLI: /v2 infer iris, batch 1'
const PREDICT_1_FEEDBACK = 'svc CLI: predict iris, batch 1, feedback on'
const PREDICT_64_FEEDBACK = 'svc CLI: predict iris, batch 64, feedback on'
const FEEDBACK_64 = 'svc CLI: feedback, 64 labels, fresh tokens'
const FEEDBACK_64_REPLAYED = 'svc CLI: feedback, the same 64 labels (duplicates)'
const PREDICT_1_PAYLOAD_OUT = 'svc CLI: predict iris, batch 1, payload log, sampled out'
const PREDICT_1_PAYLOAD = 'svc CLI: predict iris, batch 1, payload log to a file'
// The conventional stack (fastify.ts): fastify 5 + pino + fastify-metrics, and with OpenTelemetry always-on.
const FASTIFY = 'fastify + pino + fastify-metrics'
const FASTIFY_ALWAYS_ON = 'fastify stack + OTel always-on (OTLP)'

// Feedback on: predictions carry a token per row. The feedback requests turn through more distinct
// labels than the seen set holds (SVC_FEEDBACK_SEEN), so each token is forgotten before it comes
// round again and every label is accepted, counted and remembered, evicting the oldest: the steady
// state of a full seen set. Replaying one body instead prices the whole check (format, tag, age,
// build, truth) and the seen-set lookup, without the counting.
const FEEDBACK_ON = { SVC_FEEDBACK_SECRET: FEEDBACK_SECRET }
const FEEDBACK_SEEN = 100_000
const FEEDBACK_BODIES = 2 * Math.ceil(FEEDBACK_SEEN / LABELS_PER_REQUEST)
const labelBodies = await feedbackBodies(FEEDBACK_BODIES)
const feedbackPost = (bodies: readonly string[]): Post => ({ path: '/api/v1/feedback', body: bodies[0] as string, rows: LABELS_PER_REQUEST, bodies })
const FRESH_LABELS = feedbackPost(labelBodies)
const REPLAYED_LABELS = feedbackPost(labelBodies.slice(0, 1))

// The payload log to a file of the run's temporary directory, one file a variant (rotated at the
// default size, so a run keeps a bounded amount): every request sampled out, or every one logged.
const payloadDir = await mkdtemp(join(tmpdir(), 'svc-bench-payload-'))
const payloadLog = (file: string, percent: number): Readonly<Record<string, string>> => ({
  SVC_PAYLOAD_LOG: join(payloadDir, file),
  SVC_PAYLOAD_LOG_PERCENT: String(percent),
})

const onPredict = (name: string, args: string[], env: Readonly<Record<string, string>> = {}): Variant => ({
  name,
  args,
  env,
  post: predict(1),
  base: BARE_POST,
})
const VARIANTS_ALL: readonly Variant[] = [
  { name: BARE_GET, args: server('bare-get') },
  { name: BARE_POST, args: server('bare-post'), post: predict(1), base: BARE_POST },
  { name: BARE_POST_SPIN, args: server(`bare-post-spin-${SPIN_US}`), post: predict(1), base: BARE_POST },
  { name: BARE_POST_V2, args: server('bare-post'), post: inferTensors(1), base: BARE_POST_V2 },
  { name: BARE_POST_64, args: server('bare-post'), post: predict(64), base: BARE_POST_64 },
  { name: BARE_POST_FEEDBACK, args: server('bare-post'), post: FRESH_LABELS, base: BARE_POST_FEEDBACK },
  { name: BARE, args: server('bare') },
  { name: BARE_NO_DATE, args: server('bare-no-date') },
  { name: BARE_ID, args: server('bare-id') },
  { name: BARE_HEADERS, args: server('bare-headers') },
  { name: ROUTER, args: server('none') },
  { name: ALS_ONLY, args: server('store') },
  { name: ENCODED, args: server('lines-encoded') },
  { name: LOGGING, args: server('logging') },
  { name: BOTH, args: server('both') },
  { name: FULL, args: CLI },
  { name: TRACED, args: CLI, env: ONE_PERCENT },
  { name: ALWAYS_ON, args: CLI, env: ALWAYS },
  { name: FASTIFY, args: ['dist/test/bench/fastify.js'] },
  { name: FASTIFY_ALWAYS_ON, args: ['dist/test/bench/fastify.js'], env: ALWAYS },
  { name: METRICS, args: server('metrics') },
  { name: SAMPLED, args: server('tracing'), env: ALWAYS },
  { name: UNSAMPLED, args: server('tracing'), env: NEVER },
  { name: BODY, args: server('body'), post: predict(1), base: BARE_POST },
  onPredict(POST_BODY, server('post-body')),
  onPredict(POST_VALIDATE, server('post-validate')),
  onPredict(POST_PREDICT, server('post-predict')),
  onPredict(POST_RESPONSE, server('post-response')),
  onPredict(POST_LOGGING, server('post-logging')),
  onPredict(POST_BOTH, server('post-both')),
  // Feedback on, off, and drift off back to back, so their per-round differences compare the machine
  // in one state; the payload log's two on either side of them, each next to logging off with BENCH_ONLY.
  { ...onPredict(PREDICT_1_PAYLOAD_OUT, CLI, payloadLog('sampled-out.jsonl', 0)), scrape: true },
  onPredict(PREDICT_1_FEEDBACK, CLI, FEEDBACK_ON),
  onPredict(PREDICT_1, CLI),
  { ...onPredict(PREDICT_1_PAYLOAD, CLI, payloadLog('logged.jsonl', 100)), scrape: true },
  onPredict(PREDICT_1_NO_DRIFT, CLI, NO_DRIFT),
  { name: INFER_1, args: CLI, post: inferTensors(1), base: BARE_POST_V2 },
  { name: PREDICT_64_FEEDBACK, args: CLI, env: FEEDBACK_ON, post: predict(64), base: BARE_POST_64 },
  { name: PREDICT_64, args: CLI, post: predict(64), base: BARE_POST_64 },
  { name: PREDICT_64_NO_BIN_SERIES, args: CLI, env: NO_BIN_SERIES, post: predict(64), base: BARE_POST_64 },
  { name: PREDICT_64_NO_DRIFT, args: CLI, env: NO_DRIFT, post: predict(64), base: BARE_POST_64 },
  {
    name: FEEDBACK_64,
    args: CLI,
    env: { ...FEEDBACK_ON, SVC_FEEDBACK_SEEN: String(FEEDBACK_SEEN) },
    post: FRESH_LABELS,
    base: BARE_POST_FEEDBACK,
    scrape: true,
  },
  { name: FEEDBACK_64_REPLAYED, args: CLI, env: FEEDBACK_ON, post: REPLAYED_LABELS, base: BARE_POST_FEEDBACK, scrape: true },
  ...STORE_VARIANTS,
  ...ROLLOUT_VARIANTS,
]
const only = process.env['BENCH_ONLY'] === undefined ? undefined : new RegExp(process.env['BENCH_ONLY'])
const isChosen = (v: Variant): boolean => only === undefined || only.test(v.name)
const wanted = new Set(VARIANTS_ALL.filter(isChosen).flatMap((v) => [v.name, v.base ?? BARE_GET]))
const VARIANTS = VARIANTS_ALL.filter((v) => wanted.has(v.name))
const baseOf = (v: Variant): string => v.base ?? BARE_GET

/**
 * wrk sends a body through a Lua script; one per request shape, written once. Several bodies are
 * read from a file, one a line, and sent in turn: formatting each request is wrk's CPU, not the server's.
 */
const scripts = new Map<Post, Promise<string>>()
const writeScript = async (post: Post): Promise<string> => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-bench-wrk-'))
  const file = join(dir, 'post.lua')
  const head = 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
  if (post.bodies === undefined) {
    await writeFile(file, `${head}wrk.body = ${JSON.stringify(post.body)}\n`)
    return file
  }
  return wrkBodiesScript(dir, post.bodies)
}
const postScript = (post: Post): Promise<string> => {
  const known = scripts.get(post) ?? writeScript(post)
  scripts.set(post, known)
  return known
}

const pinning = availableParallelism() >= 2 && (await hasCommand('taskset'))
const loadgen = process.env['BENCH_LOADGEN'] ?? ((await hasCommand('wrk')) ? 'wrk' : 'autocannon')
if (loadgen !== 'wrk') {
  process.stderr.write(
    'warning: measuring with autocannon, which shares the load CPU with its own JavaScript and saturates later than wrk; ' +
      'install wrk (Debian: apt-get install wrk) for the figures test/bench/README.md publishes\n',
  )
}
const clockTicks = Number((await run('getconf', ['CLK_TCK'])).stdout.trim())

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

const cpuSeconds = (pid: number): number => {
  // /proc/<pid>/stat: fields 14 and 15 (utime, stime) in clock ticks, after the parenthesised name.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) / clockTicks
}

const pinned = (cpu: number, command: string, args: readonly string[]): [string, string[]] =>
  pinning ? ['taskset', ['-c', String(cpu), command, ...args]] : [command, [...args]]

const load = async (port: number, seconds: number, post: Post | undefined): Promise<{ rps: number; p99Ms: number; requests: number; errors: number }> => {
  const url = `http://127.0.0.1:${port}${post?.path ?? '/'}`
  if (loadgen === 'wrk') {
    const script = post === undefined ? [] : ['-s', await postScript(post)]
    const [cmd, args] = pinned(1, 'wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', ...script, url])
    const { stdout } = await run(cmd, args)
    return parseWrk(stdout)
  }
  const body = post === undefined ? [] : ['-m', 'POST', '-H', 'content-type=application/json', '-b', post.body]
  const [cmd, args] = pinned(1, process.execPath, [
    join(ROOT, 'node_modules/autocannon/autocannon.js'),
    '-j',
    '-c',
    String(CONNECTIONS),
    '-d',
    String(seconds),
    ...body,
    url,
  ])
  const { stdout } = await run(cmd, args, { maxBuffer: 64 * 1024 * 1024 })
  return parseAutocannon(stdout)
}

const measure = async (variant: Variant, logDir: string): Promise<Result> => {
  const port = await freePort()
  const out = openSync(join(logDir, `${variant.name.replace(/\W+/g, '-')}.log`), 'w')
  const [cmd, args] = pinned(0, process.execPath, [...variant.args, String(port)])
  const server: ChildProcess = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', out, 'inherit'], env: { ...process.env, ...variant.env } })
  try {
    await waitForPort(port)
    await load(port, WARMUP_SECONDS, variant.post)
    const before = cpuSeconds(server.pid as number)
    const result = await load(port, SECONDS, variant.post)
    const cpu = cpuSeconds(server.pid as number) - before
    const metrics = variant.scrape === true ? await (await fetch(`http://127.0.0.1:${port}/metrics`)).text() : undefined
    return {
      name: variant.name,
      ...result,
      cpuUsPerRequest: (cpu * 1e6) / result.requests,
      serverCpu: cpu / SECONDS,
      ...(metrics === undefined ? {} : { metrics }),
    }
  } finally {
    server.kill('SIGKILL')
  }
}

const logDir = await mkdtemp(join(tmpdir(), 'svc-bench-'))
process.stdout.write(
  `node ${process.version}, ${availableParallelism()} CPUs, load: ${loadgen} ${CONNECTIONS} connections × ${SECONDS} s after ${WARMUP_SECONDS} s warm-up, ` +
    `median of ${ROUNDS} interleaved rounds, ` +
    `${pinning ? 'server on CPU 0, load on CPU 1' : 'no CPU pinning'}; logs in ${logDir}\n` +
    `"store:" variants serve SVC_MODEL_STORE=${store.dir}` +
    (store.skipped === undefined ? ' (kernel iris, ONNX iris-size classifier, ONNX forest)\n' : `; ONNX rows skipped: ${store.skipped}\n`) +
    `"rollout:" variants serve SVC_MODEL_STORE=${rollouts.dirs.none}, …/canary, …/shadow (iris 1 and 2, the same artifact re-signed)\n\n`,
)
const rounds: Array<Map<string, Result>> = []
for (let round = 0; round < ROUNDS; round++) {
  const results = new Map<string, Result>()
  for (const variant of VARIANTS) results.set(variant.name, await measure(variant, logDir))
  rounds.push(results)
  const line = [...results.values()].map((r) => `${r.rps.toFixed(0)}/s ${r.cpuUsPerRequest.toFixed(1)} µs`).join(' · ')
  process.stdout.write(`round ${round + 1}: ${line}\n`)
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}
/** Median over rounds of a figure computed within each round, so the pairs compared ran back to back. */
const perRound = (figure: (round: Map<string, Result>) => number): number => median(rounds.map(figure))
const has = (name: string): boolean => wanted.has(name)
const get = (round: Map<string, Result>, name: string): Result => round.get(name) as Result
const cpuOf = (name: string): number => perRound((r) => get(r, name).cpuUsPerRequest)
/** CPU per request over its bare counterpart's, in the same round: the figure every target is set in. */
const cpuRatio = (name: string, base: string): number => perRound((r) => get(r, name).cpuUsPerRequest / get(r, base).cpuUsPerRequest)
const rpsRatio = (name: string, base = BARE_GET): number => perRound((r) => get(r, name).rps / get(r, base).rps)
/** CPU µs per request of `name` over `base`: the median of the per-round differences. */
const over = (name: string, base: string): number => perRound((r) => get(r, name).cpuUsPerRequest - get(r, base).cpuUsPerRequest)
const verdict = (isMet: boolean): string => (isMet ? 'met' : 'NOT met')
const accountRow = (label: string, us: number, digits = 2): string => `  ${label.padEnd(78)}${us.toFixed(digits).padStart(8)}\n`
const ONNX_BATCH_1_MAX_US = 15
const ONNX_BATCH_64_MIN_ROWS = 200_000

process.stdout.write('\n')
const row = (cells: readonly string[]): string =>
  `${(cells[0] ?? '').padEnd(46)}${cells
    .slice(1)
    .map((c) => c.padStart(11))
    .join('')}\n`
process.stdout.write(row(['variant', 'CPU µs/req', '× its bare', 'bare', 'req/s', '× bare GET', 'p99 ms', 'rows/CPU s', 'server CPU', 'errors']))
/** Rows per second of server CPU: rows per request ÷ CPU seconds per request. */
const rowsPerCpuSecond = (round: Map<string, Result>, name: string, rows: number): number => (rows * 1e6) / get(round, name).cpuUsPerRequest
const BARE_LABELS: Readonly<Record<string, string>> = {
  [BARE_GET]: 'GET',
  [BARE_POST]: 'POST',
  [BARE_POST_V2]: 'POST v2',
  [BARE_POST_64]: 'POST ×64',
  [BARE_POST_FEEDBACK]: 'POST fb64',
}
for (const variant of VARIANTS) {
  const { name, post } = variant
  process.stdout.write(
    row([
      name,
      cpuOf(name).toFixed(1),
      cpuRatio(name, baseOf(variant)).toFixed(2),
      BARE_LABELS[baseOf(variant)] ?? '',
      perRound((r) => get(r, name).rps).toFixed(0),
      has(BARE_GET) ? rpsRatio(name).toFixed(2) : '',
      perRound((r) => get(r, name).p99Ms).toFixed(2),
      post === undefined ? '' : perRound((r) => rowsPerCpuSecond(r, name, post.rows)).toFixed(0),
      `${(perRound((r) => get(r, name).serverCpu) * 100).toFixed(0)} %`,
      String(rounds.reduce((sum, r) => sum + get(r, name).errors, 0)),
    ]),
  )
}

// The targets, each a ratio of CPU per request to the bare counterpart in the same round (or of
// req/s for tracing always-on), as the medians over the rounds.
const targets: ReadonlyArray<readonly [string, string, string, number]> = [
  ['POST /api/v1/predict, iris batch 1', PREDICT_1, BARE_POST, 1.4],
  ['POST /v2/models/iris/infer, batch 1', INFER_1, BARE_POST_V2, 1.4],
  ['the iris-sized ONNX classifier, batch 1', ONNX_1, BARE_POST, 1.6],
  ['GET / with logs and metrics', FULL, BARE_GET, 1.2],
  ['GET / with tracing at 1 %', TRACED, BARE_GET, 1.3],
]
let summary = '\nTargets (CPU per request ÷ its bare counterpart, median of per-round ratios):\n'
for (const [label, name, base, limit] of targets) {
  if (!has(name) || !has(base)) continue
  const ratio = cpuRatio(name, base)
  summary += accountRow(`${label} (target ≤ ${limit}: ${verdict(ratio <= limit)})`, ratio)
}
const ALWAYS_ON_MIN_RATIO = 0.5
const OVER_FASTIFY_MIN = 2
if (has(ALWAYS_ON)) {
  const ratio = rpsRatio(ALWAYS_ON)
  summary += accountRow(`tracing always-on, req/s ÷ the bare GET's (target ≥ ${ALWAYS_ON_MIN_RATIO}: ${verdict(ratio >= ALWAYS_ON_MIN_RATIO)})`, ratio)
  if (has(FASTIFY_ALWAYS_ON)) {
    const theirs = rpsRatio(FASTIFY_ALWAYS_ON)
    const times = perRound((r) => get(r, ALWAYS_ON).rps / get(r, FASTIFY_ALWAYS_ON).rps)
    summary +=
      accountRow("  fastify's stack with OTel always-on, req/s ÷ the bare GET's", theirs) +
      accountRow(`  svc's ratio over fastify's (target ≥ ${OVER_FASTIFY_MIN}: ${verdict(times >= OVER_FASTIFY_MIN)})`, times)
  }
}
process.stdout.write(summary)

// The ladders: neighbours' differences, which add up to a CLI path over its bare counterpart.
const ladder = (title: string, rungs: ReadonlyArray<readonly [string, string, string]>, total: readonly [string, string, string]): string => {
  if (![...rungs, total].every(([, name, base]) => has(name) && has(base))) return ''
  let text = `\n${title}, CPU µs per request (median of per-round differences):\n`
  let sum = 0
  for (const [label, name, base] of rungs) {
    const us = over(name, base)
    sum += us
    text += accountRow(label, us)
  }
  return `${text}${accountRow('sum of the rows above', sum)}${accountRow(total[0], over(total[1], total[2]))}`
}
let account = ladder(
  'Account of GET /: bare node:http to the CLI',
  [
    ['the same JSON as GET / instead of {"ok":true}', BARE, BARE_GET],
    ['request id: a random UUID, sent as X-Request-ID', BARE_ID, BARE],
    ['X-Content-Type-Options and Cache-Control headers', BARE_HEADERS, BARE_ID],
    ["svc's server: Ctx, head checks, router, reply writer", ROUTER, BARE_HEADERS],
    ['logging layer entered: AsyncLocalStorage run (lines off)', ALS_ONLY, ROUTER],
    ['request_started + request_completed built', ENCODED, ALS_ONLY],
    ['those lines written (line writer, one write per turn)', LOGGING, ENCODED],
    ['metrics layer: in flight, duration histogram, request counter', BOTH, LOGGING],
    ['the CLI beside the layer variants: its other routes, default metrics, timers', FULL, BOTH],
  ],
  ['the CLI over the bare GET, measured', FULL, BARE_GET],
)
account += ladder(
  'Account of a batch-1 POST /api/v1/predict: the bare POST to the CLI',
  [
    ["svc's server: Ctx, head checks, router, the body read before the pipeline, headers, writer", POST_BODY, BARE_POST],
    ['validation (readPredictRequest)', POST_VALIDATE, POST_BODY],
    ['encodeInputs + the kernel predict', POST_PREDICT, POST_VALIDATE],
    ['the OIP response text instead of a fixed one', POST_RESPONSE, POST_PREDICT],
    ['logging layer: AsyncLocalStorage, request_started + request_completed written', POST_LOGGING, POST_RESPONSE],
    ['metrics layer', POST_BOTH, POST_LOGGING],
    ["the CLI: the model lookup, the five prediction metrics, drift, the CLI's timers", PREDICT_1, POST_BOTH],
  ],
  ['the CLI over the bare POST, measured', PREDICT_1, BARE_POST],
)
if (has(PREDICT_1_NO_DRIFT) && has(PREDICT_1)) account += accountRow('  of which drift monitoring (on minus off)', over(PREDICT_1, PREDICT_1_NO_DRIFT))
if (has(BARE_POST_SPIN) && has(BARE_POST)) {
  account +=
    `\nCalibration: ${SPIN_US} µs of pure CPU added to the bare POST costs, per request at saturation:\n` +
    accountRow(`measured (in-process figures add ${SPIN_US}; the rest is the kernel's, see test/bench/README.md)`, over(BARE_POST_SPIN, BARE_POST))
}
if (has(BODY) && has(ROUTER)) account += accountRow('\nreading a body with ctx.body() (promise), svc server without layers, over its GET /', over(BODY, ROUTER))
if (has(METRICS) && has(ROUTER)) {
  account +=
    accountRow('layers alone over the router: metrics', over(METRICS, ROUTER)) +
    (has(SAMPLED) ? accountRow('  tracing, per sampled request (export included)', over(SAMPLED, ROUTER)) : '') +
    (has(UNSAMPLED) ? accountRow('  tracing, per unsampled request', over(UNSAMPLED, ROUTER)) : '')
}
if (has(PREDICT_1)) {
  account += `\nIn process, each piece of a batch-1 prediction alone (test/bench/post-path.ts), CPU µs:\n`
  for (const piece of postPathPieces(predict(1).body)) account += accountRow(piece.name, piece.ns / 1000, 3)
}

// Drift monitoring per row: over HTTP a batch's difference over its rows; in process each part alone.
if ([PREDICT_1, PREDICT_1_NO_DRIFT, PREDICT_64, PREDICT_64_NO_BIN_SERIES, PREDICT_64_NO_DRIFT].every(has)) {
  const drift1 = inProcessDriftNs(1)
  const drift64 = inProcessDriftNs(64)
  account +=
    `\nDrift monitoring (window + bin counters), CPU µs per row:\n` +
    accountRow('over HTTP, drift on minus off: batch 1', over(PREDICT_1, PREDICT_1_NO_DRIFT), 3) +
    accountRow('  batch 64 (the per-request difference ÷ 64)', over(PREDICT_64, PREDICT_64_NO_DRIFT) / 64, 3) +
    accountRow('  batch 64, the bin series: on minus SVC_DRIFT_BIN_SERIES=false', over(PREDICT_64, PREDICT_64_NO_BIN_SERIES) / 64, 3) +
    accountRow('  batch 64, the window + missing and out-of-range counters: that minus off', over(PREDICT_64_NO_BIN_SERIES, PREDICT_64_NO_DRIFT) / 64, 3)
  for (const [batch, ns] of [
    [1, drift1],
    [64, drift64],
  ] as const) {
    account +=
      accountRow(`in process, batch ${batch}: the window (the monitor's record, no counters)`, ns.window / 1000, 3) +
      accountRow('  the bin counters (createBinCounters(...).record)', ns.counters / 1000, 3) +
      accountRow('  the bin counters without the bin series: missing and out of range', ns.rangeCounters / 1000, 3) +
      accountRow("  both (the monitor's record with the counters)", ns.both / 1000, 3)
  }
}
process.stdout.write(
  `${account}\n` +
    (has(FULL) ? `Throughput against the bare GET: logging + metrics ${rpsRatio(FULL).toFixed(2)}×` : '') +
    (has(TRACED) ? `, + tracing at 1 % ${rpsRatio(TRACED).toFixed(2)}×` : '') +
    (has(ALWAYS_ON) ? `, + tracing always-on ${rpsRatio(ALWAYS_ON).toFixed(2)}×` : '') +
    `; the collector took ${collector.exports()} exports, ${(collector.bytes() / 1e6).toFixed(0)} MB\n` +
    (has(PREDICT_64)
      ? `Predictions: batch 64 ${(perRound((r) => get(r, PREDICT_64).rps) * 64).toFixed(0)} rows/s; in process ${inProcessRowNs().toFixed(0)} ns per row\n`
      : ''),
)
// Feedback tokens. The targets: with SVC_FEEDBACK_SECRET set, a prediction's CPU per request at most
// 10 % (batch 1) and 20 % (batch 64) over feedback off's, as the median of the per-round quotients
// of the two (they ran back to back in every round: the quotient of their ratios to the same bare POST).
const FEEDBACK_PAIRS = [
  [1, PREDICT_1_FEEDBACK, PREDICT_1, BARE_POST, 0.1],
  [64, PREDICT_64_FEEDBACK, PREDICT_64, BARE_POST_64, 0.2],
] as const
if ([PREDICT_1_FEEDBACK, PREDICT_64_FEEDBACK, FEEDBACK_64, FEEDBACK_64_REPLAYED].some(has)) {
  let text = '\nFeedback tokens, CPU µs per request (× the bare POST with the same body; medians of per-round figures):\n'
  for (const [rows, on, off, base, limit] of FEEDBACK_PAIRS) {
    if (!has(on) || !has(off)) continue
    const quotient = perRound((r) => get(r, on).cpuUsPerRequest / get(r, off).cpuUsPerRequest)
    text +=
      accountRow(`predict, batch ${rows}, feedback off (× bare ${cpuRatio(off, base).toFixed(2)})`, cpuOf(off)) +
      accountRow(`  feedback on (× bare ${cpuRatio(on, base).toFixed(2)})`, cpuOf(on)) +
      accountRow(`  on ÷ off (target ≤ ${(1 + limit).toFixed(2)}: ${verdict(quotient <= 1 + limit)})`, quotient, 3) +
      accountRow('  on minus off, per row (median of per-round differences)', over(on, off) / rows, 3)
  }
  for (const name of [FEEDBACK_64, FEEDBACK_64_REPLAYED].filter(has)) {
    const total = (metric: string): number => rounds.reduce((sum, r) => sum + metricTotal(get(r, name).metrics ?? '', metric), 0)
    const accepted = total('svc_model_feedback_rows_total')
    const refused = total('svc_feedback_refused_total')
    text +=
      accountRow(`${name} (× bare ${cpuRatio(name, BARE_POST_FEEDBACK).toFixed(2)})`, cpuOf(name)) +
      accountRow(
        `  per label; ${((accepted * 100) / (accepted + refused)).toFixed(2)} % of the labels accepted, warm-ups included`,
        cpuOf(name) / LABELS_PER_REQUEST,
        3,
      )
  }
  if (has(FEEDBACK_64) && has(FEEDBACK_64_REPLAYED)) {
    text += accountRow('  counting an accepted label (fresh minus replayed, per label)', over(FEEDBACK_64, FEEDBACK_64_REPLAYED) / LABELS_PER_REQUEST, 3)
  }
  const us = await inProcessFeedbackUs()
  text +=
    'In process, CPU µs (median of 5 samples of a quarter-second):\n' +
    accountRow('mintTokens, 1 row', us.mint1, 3) +
    accountRow(`mintTokens, ${LABELS_PER_REQUEST} rows (per row: ${(us.mint64 / LABELS_PER_REQUEST).toFixed(3)})`, us.mint64, 3) +
    accountRow('readToken, per token', us.read, 3) +
    accountRow(`score ${LABELS_PER_REQUEST} labels, all accepted (per label: ${(us.scoreAccepted / LABELS_PER_REQUEST).toFixed(3)})`, us.scoreAccepted, 3) +
    accountRow(`score ${LABELS_PER_REQUEST} labels, all duplicates (per label: ${(us.scoreDuplicate / LABELS_PER_REQUEST).toFixed(3)})`, us.scoreDuplicate, 3) +
    accountRow("the reference: one HMAC-SHA256 of a token's bytes, per row", us.hmac, 3)
  process.stdout.write(text)
}

// The payload log. Its targets: sampled out, the ratio to the bare POST at most 0.1 over logging
// off's (the median of per-round differences; the canary's bound for "the same, within noise");
// every request logged to a file, CPU per request at most 15 % over logging off's (the median of
// per-round quotients). The two ran on either side of logging off in every round.
const PAYLOAD_OUT_MAX_OVER = 0.1
const PAYLOAD_MAX_QUOTIENT = 1.15
if ([PREDICT_1_PAYLOAD_OUT, PREDICT_1_PAYLOAD].some(has) && has(PREDICT_1)) {
  const events = (name: string, outcome: string): number =>
    rounds.reduce((sum, r) => sum + metricTotal(get(r, name).metrics ?? '', 'svc_payload_log_events_total', { outcome }), 0)
  const answered = (name: string): number =>
    rounds.reduce((sum, r) => sum + metricTotal(get(r, name).metrics ?? '', 'svc_model_prediction_requests_total', { model: 'iris', outcome: 'success' }), 0)
  let text =
    '\nPayload log, batch 1, CPU µs per request (× the bare POST with the same body; medians of per-round figures):\n' +
    accountRow(`logging off (× bare ${cpuRatio(PREDICT_1, BARE_POST).toFixed(2)})`, cpuOf(PREDICT_1))
  if (has(PREDICT_1_PAYLOAD_OUT)) {
    const outOver = perRound((r) => (get(r, PREDICT_1_PAYLOAD_OUT).cpuUsPerRequest - get(r, PREDICT_1).cpuUsPerRequest) / get(r, BARE_POST).cpuUsPerRequest)
    text +=
      accountRow(`sampled out, percent 0 (× bare ${cpuRatio(PREDICT_1_PAYLOAD_OUT, BARE_POST).toFixed(2)})`, cpuOf(PREDICT_1_PAYLOAD_OUT)) +
      accountRow(`  × bare POST over logging off's (target ≤ +${PAYLOAD_OUT_MAX_OVER}: ${verdict(outOver <= PAYLOAD_OUT_MAX_OVER)})`, outOver, 3) +
      accountRow('  minus off, µs (median of per-round differences)', over(PREDICT_1_PAYLOAD_OUT, PREDICT_1)) +
      accountRow('  events written, all rounds (0 expected)', events(PREDICT_1_PAYLOAD_OUT, 'written'), 0)
  }
  if (has(PREDICT_1_PAYLOAD)) {
    const quotient = perRound((r) => get(r, PREDICT_1_PAYLOAD).cpuUsPerRequest / get(r, PREDICT_1).cpuUsPerRequest)
    const [written, dropped, failed] = ['written', 'dropped', 'failed'].map((outcome) => events(PREDICT_1_PAYLOAD, outcome)) as [number, number, number]
    text +=
      accountRow(`every request logged, to a file (× bare ${cpuRatio(PREDICT_1_PAYLOAD, BARE_POST).toFixed(2)})`, cpuOf(PREDICT_1_PAYLOAD)) +
      accountRow(`  logged ÷ off (target ≤ ${PAYLOAD_MAX_QUOTIENT}: ${verdict(quotient <= PAYLOAD_MAX_QUOTIENT)})`, quotient, 3) +
      accountRow('  minus off, µs (median of per-round differences)', over(PREDICT_1_PAYLOAD, PREDICT_1)) +
      accountRow(
        '  p99 ms, logged over off (median of per-round differences)',
        perRound((r) => get(r, PREDICT_1_PAYLOAD).p99Ms - get(r, PREDICT_1).p99Ms),
      ) +
      accountRow(`  events written, % of the answers, warm-ups included (dropped ${dropped}, failed ${failed})`, (written * 100) / answered(PREDICT_1_PAYLOAD))
  }
  const us = await inProcessPayloadUs(predict(1).body)
  text +=
    'In process, CPU µs:\n' +
    accountRow(`building one batch-1 prediction event (${us.bytes} bytes)`, us.build, 3) +
    accountRow('enqueue, 50 a turn (the drain not included)', us.enqueue, 3) +
    accountRow(`the writer per event: enqueue, drain, write to a file (${(us.written * 100).toFixed(1)} % written)`, us.writer, 3)
  process.stdout.write(text)
}

const rows64 = (name: string): number => perRound((r) => rowsPerCpuSecond(r, name, 64))
if (store.skipped !== undefined) {
  process.stdout.write(`ONNX: skipped, ${store.skipped}\n`)
} else if ([ONNX_1, KERNEL_1, FOREST_1, PREDICT_1, ONNX_64, KERNEL_64, FOREST_64].every(has)) {
  const extra = over(ONNX_1, KERNEL_1)
  const small = rows64(ONNX_64)
  process.stdout.write(
    `ONNX batch 1, CPU µs per request over the kernel's (median of per-round differences, same store): iris-size classifier ` +
      `${extra.toFixed(1)} (target ≤ ${ONNX_BATCH_1_MAX_US}: ${verdict(extra <= ONNX_BATCH_1_MAX_US)}), forest ${over(FOREST_1, KERNEL_1).toFixed(1)}; ` +
      `the kernel from the store over the shipped one: ${over(KERNEL_1, PREDICT_1).toFixed(1)}\n` +
      `ONNX batch 64, rows per CPU-second of the one-core server: iris-size classifier ${small.toFixed(0)} ` +
      `(target ≥ ${ONNX_BATCH_64_MIN_ROWS}: ${verdict(small >= ONNX_BATCH_64_MIN_ROWS)}), kernel ${rows64(KERNEL_64).toFixed(0)}, ` +
      `forest ${rows64(FOREST_64).toFixed(0)}; over HTTP (req/s × 64): ${(perRound((r) => get(r, ONNX_64).rps) * 64).toFixed(0)}, ` +
      `${(perRound((r) => get(r, KERNEL_64).rps) * 64).toFixed(0)}, ${(perRound((r) => get(r, FOREST_64).rps) * 64).toFixed(0)}\n` +
      `ONNX in process, CPU µs per predict call of the same rows at batch 1 and 64: iris-size classifier ` +
      `${(await inProcessOnnxUs(store.dir, 'iris_onnx', irisRows(1))).toFixed(1)}, ${(await inProcessOnnxUs(store.dir, 'iris_onnx', irisRows(64))).toFixed(1)}; ` +
      `forest ${(await inProcessOnnxUs(store.dir, 'forest', forestRows(1))).toFixed(1)}, ${(await inProcessOnnxUs(store.dir, 'forest', forestRows(64))).toFixed(1)}\n`,
  )
}

// Rollouts. The canary's target: its ratio to the bare POST within +0.1 of no rollout's, as the
// median of the per-round differences (the two ran back to back in every round). The shadow's: its
// CPU per request over no rollout's (median of per-round differences) at most 1.5 in-process
// batch-1 predictions (the middle of the calibration's 1.3 to 1.8 µs per µs of work) plus 1 µs for
// what a copy does besides predicting (its hook, queue and turn, the comparison, its own series and
// bin counters), which the in-process whole copy prices.
const CANARY_MAX_OVER = 0.1
const SHADOW_PREDICTIONS = 1.5
const SHADOW_ALLOWANCE_US = 1
const ROUTING_MAX_NS = 200
if ([ROLLOUT_NONE, ROLLOUT_CANARY, ROLLOUT_SHADOW].some(has)) {
  const successes = (r: Map<string, Result>, name: string, labels: Readonly<Record<string, string>> = {}): number =>
    metricTotal(get(r, name).metrics ?? '', 'svc_model_prediction_requests_total', { model: 'iris', outcome: 'success', ...labels })
  /** Version 2's share of the answers (%), warm-up included. */
  const answeredBy2 = (name: string): number => perRound((r) => (successes(r, name, { version: '2' }) * 100) / successes(r, name))
  let text = `\nRollouts: iris 1 and 2, batch 1, the same body as the CLI's predict (no id: Math.random splits the canary)\n`
  text += `${'  variant'.padEnd(50)}${['CPU µs/req', '× bare POST', 'p99 ms', 'v2 answered', 'v2 copied'].map((c) => c.padStart(12)).join('')}\n`
  for (const name of [PREDICT_1, ROLLOUT_NONE, ROLLOUT_CANARY, ROLLOUT_SHADOW].filter(has)) {
    const isRollout = name !== PREDICT_1
    const copied = (): number =>
      perRound((r) => (metricTotal(get(r, name).metrics ?? '', 'svc_model_shadow_predictions_total', { outcome: 'success' }) * 100) / successes(r, name))
    text += `  ${name.padEnd(48)}${[
      cpuOf(name).toFixed(1),
      has(BARE_POST) ? cpuRatio(name, BARE_POST).toFixed(2) : '',
      perRound((r) => get(r, name).p99Ms).toFixed(2),
      isRollout ? `${answeredBy2(name).toFixed(2)} %` : '',
      isRollout ? `${copied().toFixed(1)} %` : '',
    ]
      .map((c) => c.padStart(12))
      .join('')}\n`
  }
  if (has(ROLLOUT_SHADOW)) {
    const dropped = rounds.reduce((sum, r) => sum + metricTotal(get(r, ROLLOUT_SHADOW).metrics ?? '', 'svc_model_shadow_dropped_total'), 0)
    text += `  shadow copies dropped, all rounds: ${dropped}\n`
  }
  if (has(ROLLOUT_CANARY) && has(ROLLOUT_NONE) && has(BARE_POST)) {
    const canaryOver = perRound((r) => (get(r, ROLLOUT_CANARY).cpuUsPerRequest - get(r, ROLLOUT_NONE).cpuUsPerRequest) / get(r, BARE_POST).cpuUsPerRequest)
    text += accountRow(
      `canary ${CANARY_PERCENT} %, × bare POST over no rollout's (target ≤ +${CANARY_MAX_OVER}: ${verdict(canaryOver <= CANARY_MAX_OVER)})`,
      canaryOver,
    )
    text += accountRow('  in CPU µs per request (median of per-round differences)', over(ROLLOUT_CANARY, ROLLOUT_NONE))
  }
  if (has(ROLLOUT_SHADOW) && has(ROLLOUT_NONE)) {
    const shadow = await inProcessShadowUs(ROOT, predict(1).body)
    const extra = over(ROLLOUT_SHADOW, ROLLOUT_NONE)
    const limit = SHADOW_PREDICTIONS * shadow.prediction + SHADOW_ALLOWANCE_US
    text +=
      accountRow(
        `shadow ${SHADOW_PERCENT} %, CPU µs per request over no rollout's (target ≤ ${SHADOW_PREDICTIONS} × ${shadow.prediction.toFixed(2)} + ` +
          `${SHADOW_ALLOWANCE_US} = ${limit.toFixed(2)}: ${verdict(extra <= limit)})`,
        extra,
      ) +
      accountRow('  in process: one batch-1 prediction of the shadow (encodeInputs + the kernel)', shadow.prediction) +
      accountRow(`  in process: one whole shadow copy, 50 a turn (${(shadow.completed * 100).toFixed(1)} % predicted)`, shadow.copy) +
      accountRow(
        '  p99 ms, no rollout',
        perRound((r) => get(r, ROLLOUT_NONE).p99Ms),
      ) +
      accountRow(
        `  p99 ms, shadow ${SHADOW_PERCENT} %`,
        perRound((r) => get(r, ROLLOUT_SHADOW).p99Ms),
      ) +
      accountRow(
        '  p99 ms, shadow over no rollout (median of per-round differences)',
        perRound((r) => get(r, ROLLOUT_SHADOW).p99Ms - get(r, ROLLOUT_NONE).p99Ms),
      )
  }
  const routing = await inProcessRoutingNs(ROOT)
  text += `In process, a routing decision, CPU ns (median of ${SAMPLES} samples of ${DECISIONS / 1e6} million; target ≤ ${ROUTING_MAX_NS} each):\n`
  for (const [label, decision] of [
    ['keyPoint(id) alone, a 36-character UUID', routing.keyPoint],
    [`routing, canary ${CANARY_PERCENT} %, keyed by a UUID id`, routing.keyed],
    [`routing, canary ${CANARY_PERCENT} %, no key (Math.random)`, routing.unkeyed],
    ['routing, no canary (the baseline)', routing.noCanary],
  ] as const) {
    text += accountRow(`${label}: ${decision.canaryPercent.toFixed(2)} % to the canary (${verdict(decision.ns <= ROUTING_MAX_NS)})`, decision.ns, 1)
  }
  process.stdout.write(text)
}
// Scale: stores of 1 to 500 models (scale.ts), each size chosen by its name ("scale: 500 models").
const scaleSizes = SCALE_SIZES.filter((models) => only === undefined || only.test(scaleName(models)))
if (scaleSizes.length > 0) {
  const results = []
  for (const models of scaleSizes) {
    results.push(await measureScale({ root: ROOT, logDir, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, loadgen, pinned, freePort }, models))
    process.stdout.write(`${scaleName(models)}: measured\n`)
  }
  process.stdout.write(scaleReport(results))
  if (results.some((r) => r.loadErrors > 0)) process.exitCode = 1
}
// An unchanged reload pass over 500 models on the S3 store (s3-store.ts): its requests and wall time.
if (only === undefined || only.test(S3_PASS_NAME)) {
  const cost = await measureS3Pass(ROOT)
  process.stdout.write(s3PassReport(cost))
  if (cost.requests > cost.requestBound) process.exitCode = 1
}
// The payload log draining a backlog of 100-row events (payload.ts), only when BENCH_ONLY names it.
if (only?.test(BACKLOG_NAME) === true) {
  const backlog = await payloadBacklog()
  process.stdout.write(
    `\n${BACKLOG_NAME} (${backlog.written} written in ${backlog.posts} POSTs, drained ${backlog.drainMs.toFixed(0)} ms after the sink came up):\n` +
      accountRow('longest turn, main-thread CPU ms', backlog.longestCpuMs, 1) +
      accountRow('longest event-loop delay, wall ms', backlog.longestDelayMs, 1),
  )
}
// V8's memory reducer on and off at 500 models (memory-reducer.ts), only when BENCH_ONLY names it.
if (only?.test(REDUCER_NAME) === true) {
  const results = await measureReducer({ root: ROOT, logDir, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, loadgen, pinned, freePort })
  process.stdout.write(reducerReport(results))
  if (results.some((r) => r.loadErrors > 0)) process.exitCode = 1
}
// Heavy models (heavy.ts), each only when BENCH_ONLY names it ("heavy: mlp", "heavy: trees").
const heavyModels = HEAVY_MODELS.filter((model) => only?.test(heavyName(model)) === true)
if (heavyModels.length > 0 && loadgen !== 'wrk') process.stdout.write('heavy: skipped, it needs wrk\n')
else if (heavyModels.length > 0) {
  const results = await measureHeavy({ root: ROOT, logDir, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, loadgen, pinned, freePort }, heavyModels)
  process.stdout.write(heavyReport(results))
  if (results.some((r) => r.served.some((s) => s.loads.some((l) => l.errors > 0)))) process.exitCode = 1
}
collector.close()
await store.remove()
await rollouts.remove()
await rm(payloadDir, { recursive: true, force: true })
if (rounds.some((r) => [...r.values()].some((result) => result.errors > 0))) process.exitCode = 1
