// SVC_MODEL_STORE=s3://…: the store built from the S3 settings, as the service and the commands build it.
import t from 'tap'
import { readS3Config } from '../../../../lib/config/config.js'
import { parseStoreSpec, type StoreSpec } from '../../../../lib/config/model-store.js'
import { createStore } from '../../../../lib/models/store/open.js'
import { openS3Store } from '../../../../lib/models/store/s3/open.js'
import { STAND_IN_CREDENTIALS, startStandIn } from '../../../fixtures/s3/stand-in.js'

t.test('createStore opens an s3:// store through its endpoint, with the keys of the settings', async (t) => {
  const standIn = await startStandIn(t, { buckets: ['models-bk'] })
  standIn.put('models-bk', 'prod/iris/manifest.json', Buffer.from('{"default_version":"1"}'))
  const spec = parseStoreSpec('s3://models-bk/prod') as StoreSpec
  const s3 = readS3Config(
    { SVC_S3_ENDPOINT: standIn.url, AWS_ACCESS_KEY_ID: STAND_IN_CREDENTIALS.accessKeyId, AWS_SECRET_ACCESS_KEY: STAND_IN_CREDENTIALS.secretAccessKey },
    spec,
  )
  const store = createStore(spec, { s3 })
  t.equal(store.description, 's3://models-bk/prod/')
  t.same(await store.list(), ['iris'])
  t.same(await openS3Store({ bucket: 'models-bk', prefix: '' }, s3, { timeoutMs: 1000, maxBytes: 10 }).list(), [], 'another prefix')
})

t.test('without keys or an instance role, the store says what to set', async (t) => {
  const spec = parseStoreSpec('s3://models-bk/prod') as StoreSpec
  const store = createStore(spec, { s3: readS3Config({ AWS_REGION: 'eu-west-1', AWS_EC2_METADATA_DISABLED: 'true' }, spec) })
  await t.rejects(store.list(), { code: 'UNREADABLE', message: /AWS_ACCESS_KEY_ID/ })
})

t.test('an s3:// spec without settings is refused', async (t) => {
  t.throws(() => createStore({ kind: 's3', bucket: 'models-bk', prefix: '' }), { code: 'UNREADABLE', message: /an s3:\/\/ store needs its S3 settings/ })
})
