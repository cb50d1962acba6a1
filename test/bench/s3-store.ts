// What an unchanged reload pass costs on the S3 store (lib/models/store/s3/), for the benchmark:
// 500 iris copies in the tests' S3 stand-in on loopback (test/fixtures/s3/stand-in.ts), each answer
// held back 1 ms for a round trip, and a registry as the service builds it loading them, then
// passing again over the unchanged bucket. The stand-in counts the requests of each pass, against
// the bound ⌈keys / 1000⌉ (one recursive listing, no HEAD per file); the wall time of the pass is
// the median of PASSES, against 100 ms.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Registry } from 'prom-client'
import { artifactSha256 } from '../../lib/models/artifact.js'
import { createModelRegistry } from '../../lib/models/registry/registry.js'
import { createS3Client } from '../../lib/models/store/s3/client.js'
import { createCredentialSource } from '../../lib/models/store/s3/credentials.js'
import { s3Endpoint } from '../../lib/models/store/s3/endpoint.js'
import { createS3Store } from '../../lib/models/store/s3/store.js'
import { createLogger } from '../../lib/telemetry/logger.js'
import { createStandIn, S3_OPERATIONS, STAND_IN_CREDENTIALS, type StandIn } from '../fixtures/s3/stand-in.js'
import { name } from './scale.js'

export const S3_PASS_NAME = 's3 store: reload pass, 500 models'
export const S3_MODELS = 500
export const ROUND_TRIP_MS = 1
export const PASS_MAX_MS = 100
const PASSES = 5
const BUCKET = 'models-bk'

export type S3PassCost = Readonly<{ keys: number; requests: number; requestBound: number; passMs: readonly number[]; firstLoadMs: number }>

const seed = (standIn: StandIn, root: string): number => {
  const base = JSON.parse(readFileSync(join(root, 'lib/models/artifacts/iris/1/model.json'), 'utf8')) as Record<string, unknown>
  for (let i = 0; i < S3_MODELS; i++) {
    const artifact: Record<string, unknown> = { ...base, name: name(i) }
    artifact['sha256'] = artifactSha256(artifact)
    standIn.put(BUCKET, `prod/${name(i)}/manifest.json`, Buffer.from('{"default_version":"1"}\n'))
    standIn.put(BUCKET, `prod/${name(i)}/1/model.json`, Buffer.from(JSON.stringify(artifact)))
  }
  return standIn.keys(BUCKET).length
}

const requestsSoFar = (standIn: StandIn): number => S3_OPERATIONS.reduce((sum, operation) => sum + standIn.requests[operation], 0)

export const measureS3Pass = async (root: string): Promise<S3PassCost> => {
  const standIn = await createStandIn({ buckets: [BUCKET] })
  try {
    const keys = seed(standIn, root)
    standIn.delayMs = ROUND_TRIP_MS
    const client = createS3Client({
      endpoint: s3Endpoint(BUCKET, { endpoint: new URL(standIn.url), region: 'us-east-1' }),
      credentials: createCredentialSource({ ...STAND_IN_CREDENTIALS, imds: { disabled: true, endpoint: new URL('http://127.0.0.1:9') } }),
      timeoutMs: 5000,
    })
    const registry = createModelRegistry({
      store: createS3Store({ bucket: BUCKET, prefix: 'prod/', client, maxBytes: 1 << 20 }),
      logger: createLogger({ name: 'svc', level: 'error', format: 'json', write: () => {} }),
      metrics: new Registry(),
      reloadIntervalS: 0,
    })
    const started = performance.now()
    await registry.load()
    const firstLoadMs = performance.now() - started
    if (registry.resolve(name(S3_MODELS - 1)) === undefined) throw new Error('the S3 store did not load its models')
    const passMs: number[] = []
    let requests = 0
    for (let i = 0; i < PASSES; i++) {
      const before = requestsSoFar(standIn)
      const passStarted = performance.now()
      await registry.reload()
      passMs.push(performance.now() - passStarted)
      requests = Math.max(requests, requestsSoFar(standIn) - before)
    }
    registry.stop()
    return { keys, requests, requestBound: Math.ceil(keys / 1000), passMs, firstLoadMs }
  } finally {
    await standIn.close()
  }
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number

export const s3PassReport = (cost: S3PassCost): string => {
  const ms = median(cost.passMs)
  const verdict = (isMet: boolean): string => (isMet ? 'met' : 'NOT met')
  return (
    `\n${S3_PASS_NAME} (${cost.keys} keys, ${ROUND_TRIP_MS} ms added to each request; first load ${cost.firstLoadMs.toFixed(0)} ms):\n` +
    `  requests per unchanged pass: ${cost.requests} (at most ⌈keys / 1000⌉ = ${cost.requestBound}: ${verdict(cost.requests <= cost.requestBound)})\n` +
    `  wall time per pass, median of ${cost.passMs.length}: ${ms.toFixed(1)} ms (at most ${PASS_MAX_MS}: ${verdict(ms <= PASS_MAX_MS)})\n`
  )
}
