// SVC_MODEL_STORE=s3://…, the service running: two instances on one moto bucket see a manifest
// change at their next pass and a version `svc push` adds while they poll (boto3 reading what it wrote), a listing past 1 000 keys is read whole, and against the tests' own
// S3 stand-in every store fault (down, slow, SlowDown, a wrong secret, a clock 20 minutes off) is
// logged by name while the models already served keep serving.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { readS3Config } from '../../lib/config/config.js'
import { parseStoreSpec, type StoreSpec } from '../../lib/config/model-store.js'
import { createStore } from '../../lib/models/store/open.js'
import type { Store } from '../../lib/models/store/store.js'
import { REFRESH_MARGIN_MS } from '../../lib/models/store/s3/credentials.js'
import { runPushCommand } from '../../lib/tools/push/command.js'
import { startApp, type Running } from '../fixtures/app.js'
import { rebuilt } from '../fixtures/model-registry.js'
import { artifactBytes } from '../fixtures/models.js'
import { predictIris, until } from '../fixtures/rollout.js'
import { fakeImds } from '../fixtures/s3/imds.js'
import { boto3Script, startMoto } from '../fixtures/s3/moto.js'
import { STAND_IN_CREDENTIALS, type StandIn, startStandIn } from '../fixtures/s3/stand-in.js'

const SPEC = 's3://models-bk/prod'

type Server = Readonly<{ endpoint: string; accessKeyId: string; secretAccessKey: string }>

const envFor = ({ endpoint, accessKeyId, secretAccessKey }: Server, extra: Readonly<Record<string, string>> = {}): Record<string, string> => ({
  SVC_MODEL_STORE: SPEC,
  SVC_S3_ENDPOINT: endpoint,
  AWS_ACCESS_KEY_ID: accessKeyId,
  AWS_SECRET_ACCESS_KEY: secretAccessKey,
  AWS_EC2_METADATA_DISABLED: 'true',
  ...extra,
})

/** The store as a publisher opens it, on the same bucket and prefix. */
const publisher = (server: Server): Store => {
  const spec = parseStoreSpec(SPEC) as StoreSpec
  return createStore(spec, { s3: readS3Config(envFor(server), spec) })
}

const seedIris = async (store: Store): Promise<void> => {
  await store.write('iris/1/model.json', Buffer.from(artifactBytes('iris')), { ifNoneMatch: '*' })
  await store.write('iris/manifest.json', Buffer.from('{"default_version":"1"}'), { ifNoneMatch: '*' })
}

const servedVersion = async (running: Running): Promise<string | undefined> => (await predictIris(running.base, { id: 'x' })).version

t.test('two instances on one moto bucket: a manifest change reaches both at their next pass', async (t) => {
  const moto = await startMoto(t, { bucket: 'models-bk' })
  if (moto === undefined) return
  const server = { endpoint: moto.endpoint, ...moto.credentials }
  const store = publisher(server)
  await seedIris(store)
  const env = envFor(server, { SVC_MODEL_RELOAD_INTERVAL_S: '1' })
  const fleet = [await startApp(t, env), await startApp(t, env)]
  for (const running of fleet) {
    // Hot reload on its schedule, as start.ts starts it: one pass a second.
    running.app.models.start()
    t.equal(await servedVersion(running), '1')
  }

  await store.write('iris/2/model.json', Buffer.from(rebuilt('iris', '2', 3)), { ifNoneMatch: '*' })
  const { etag } = await store.stat('iris/manifest.json')
  await store.write('iris/manifest.json', Buffer.from('{"default_version":"2","versions":["1","2"]}'), { ifMatch: etag })
  for (const running of fleet) await until(async () => (await servedVersion(running)) === '2', 'version 2 served', 8000)
  t.pass('both instances serve version 2')
  const stale = store.write('iris/manifest.json', Buffer.from('{"default_version":"1"}'), { ifMatch: etag })
  await t.rejects(stale, { code: 'PRECONDITION_FAILED' }, 'moto refuses a write from a stale ETag')
})

t.test('moto: a listing of more than 1 000 keys is read whole, and boto3 reads what the store wrote', async (t) => {
  const moto = await startMoto(t, { bucket: 'models-bk' })
  if (moto === undefined) return
  const store = publisher({ endpoint: moto.endpoint, ...moto.credentials })
  const names = Array.from({ length: 1100 }, (_, i) => `m${String(i).padStart(4, '0')}`)
  for (let i = 0; i < names.length; i += 50) {
    await Promise.all(names.slice(i, i + 50).map((name) => store.write(`${name}/manifest.json`, Buffer.from('{"default_version":"1"}'), { ifNoneMatch: '*' })))
  }
  t.same(await store.list(), names)
  const listed = await boto3Script(
    t,
    moto.endpoint,
    "print(sum(p.get('KeyCount', 0) for p in s3.get_paginator('list_objects_v2').paginate(Bucket='models-bk', Prefix='prod/')))",
    { credentials: moto.credentials },
  )
  if (listed !== undefined) t.equal(listed.trim(), '1100')
})

/** A running instance on the stand-in, iris 1 served, hot reload driven by hand. */
const onStandIn = async (t: Test): Promise<{ standIn: StandIn; running: Running }> => {
  const standIn = await startStandIn(t, { buckets: ['models-bk'] })
  await seedIris(publisher({ endpoint: standIn.url, ...STAND_IN_CREDENTIALS }))
  const running = await startApp(t, envFor({ endpoint: standIn.url, ...STAND_IN_CREDENTIALS }))
  return { standIn, running }
}

t.test('each store fault is logged by name, and iris keeps serving version 1', async (t) => {
  const { standIn, running } = await onStandIn(t)
  const failures = (): Array<Record<string, unknown>> => running.lines().filter((line) => line.event === 'model_store_failed')
  const faults: ReadonlyArray<readonly [string, () => void, RegExp]> = [
    ['SlowDown', () => standIn.fail({ operation: 'ListObjectsV2', status: 503, code: 'SlowDown', times: 3 }), /\(SlowDown\): the server is throttling/],
    ['a wrong secret', () => standIn.credentials.set(STAND_IN_CREDENTIALS.accessKeyId, { secretAccessKey: 'rotated' }), /\(SignatureDoesNotMatch\)/],
    ['a clock 20 minutes off', () => (standIn.clockOffsetMs = 20 * 60_000), /\(RequestTimeTooSkewed\): this host's clock/],
    ['a slow server', () => standIn.hang({ operation: 'ListObjectsV2' }), /timed out after 5000 ms/],
  ]
  for (const [name, stage, message] of faults) {
    standIn.credentials.set(STAND_IN_CREDENTIALS.accessKeyId, { secretAccessKey: STAND_IN_CREDENTIALS.secretAccessKey })
    standIn.clockOffsetMs = 0
    stage()
    await running.app.models.reload()
    t.match(failures().at(-1), { level: 'error', store: 's3://models-bk/prod/', detail: message }, name)
    t.equal(await servedVersion(running), '1', `${name}: iris still served`)
  }
  const logged = running
    .lines()
    .map((line) => JSON.stringify(line))
    .join('\n')
  t.notOk(logged.includes(STAND_IN_CREDENTIALS.secretAccessKey), 'no secret logged')
  t.notMatch(logged, /Signature=|AKIDSTANDINEXAMPLE/)
  await standIn.close()
  await running.app.models.reload()
  t.match(failures().at(-1), { detail: /failed: connection refused/ }, 'the server down')
  t.equal(await servedVersion(running), '1')
})

t.test('svc push to moto while two instances poll: both load the new version, and boto3 reads what it wrote', async (t) => {
  const moto = await startMoto(t, { bucket: 'models-bk' })
  if (moto === undefined) return
  const server = { endpoint: moto.endpoint, ...moto.credentials }
  await seedIris(publisher(server))
  const env = envFor(server, { SVC_MODEL_RELOAD_INTERVAL_S: '1' })
  const fleet = [await startApp(t, env), await startApp(t, env)]
  for (const running of fleet) running.app.models.start()

  const dir = await mkdtemp(join(tmpdir(), 'svc-push-s3-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // Version 2 as edited by hand: unsigned, as `svc push` signs it.
  const edited = JSON.parse(rebuilt('iris', '2', 3)) as Record<string, unknown>
  delete edited['sha256']
  await writeFile(join(dir, 'model.json'), JSON.stringify(edited))
  let output = ''
  const code = await runPushCommand([dir, '--model', 'iris', '--version', '2'], {
    env,
    stdout: (text) => void (output += text),
    stderr: (text) => void (output += text),
  })
  t.equal(code, 0, output)
  for (const running of fleet) {
    await until(async () => (await predictIris(running.base, { id: 'x', version: '2' })).status === 200, 'version 2 loaded', 8000)
  }
  t.pass('both instances serve version 2 by name; the default stays 1')
  for (const running of fleet) t.equal(await servedVersion(running), '1')

  const checked = await boto3Script(
    t,
    moto.endpoint,
    [
      'import hashlib',
      "get = lambda key: s3.get_object(Bucket='models-bk', Key='prod/iris/' + key)['Body'].read()",
      "sums = json.loads(get('2/checksums.json'))['sha256']",
      "model = get('2/model.json')",
      "print(json.dumps({'files': sorted(sums), 'matches': hashlib.sha256(model).hexdigest() == sums['model.json'],",
      "  'versions': json.loads(get('manifest.json'))['versions'], 'signed': 'sha256' in json.loads(model)}))",
    ].join('\n'),
    { credentials: moto.credentials },
  )
  if (checked !== undefined) t.same(JSON.parse(checked), { files: ['model.json'], matches: true, versions: ['1', '2'], signed: true })
})

t.test('an instance role: a failed renewal while the keys held are valid is a warning, and the store goes on', async (t) => {
  const imds = await fakeImds(t, { expiresAt: Date.now() + REFRESH_MARGIN_MS + 1500 })
  const standIn = await startStandIn(t, { buckets: ['models-bk'] })
  const role = imds.credentials()
  standIn.credentials.set(role.AccessKeyId, { secretAccessKey: role.SecretAccessKey, sessionToken: role.Token })
  await seedIris(publisher({ endpoint: standIn.url, ...STAND_IN_CREDENTIALS }))
  const running = await startApp(t, {
    SVC_MODEL_STORE: SPEC,
    SVC_S3_ENDPOINT: standIn.url,
    AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.endpoint.origin,
  })
  t.equal(await servedVersion(running), '1', 'loaded with the role')
  // Past the renewal margin, and the metadata service refuses the role.
  await new Promise((resolve) => setTimeout(resolve, 1600))
  imds.set('failed')
  await running.app.models.reload()
  t.match(
    running.lines().filter((line) => line.event === 'model_store_credentials_stale'),
    [{ level: 'warning', store: 's3://models-bk/prod/', detail: /svc-models-reader|instance|role/ }],
  )
  t.same(
    running.lines().filter((line) => line.event === 'model_store_failed'),
    [],
    'the pass signed with the keys still held',
  )
  const logged = JSON.stringify(running.lines())
  t.notOk(logged.includes(role.SecretAccessKey) || logged.includes(role.Token), 'no secret or token logged')
})
