// The store svc push writes to: --store, else SVC_MODEL_STORE, a directory or an S3 bucket; never
// none, never the artifacts svc ships, never a read-only HTTP store; each refusal a line that says
// what to do, without credentials.
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { DEFAULT_STORE_ROOT } from '../../../lib/config/model-store.js'
import { openPushStore } from '../../../lib/tools/push/store.js'

const refusal = (raw: string | undefined, env: Record<string, string> = {}): unknown => {
  try {
    openPushStore(raw, env)
    return 'opened'
  } catch (error: unknown) {
    return error
  }
}

t.test('--store names the store, else SVC_MODEL_STORE; a relative --store is from the working directory', async (t) => {
  t.equal(openPushStore('/srv/models', { SVC_MODEL_STORE: '/elsewhere' }).description, '/srv/models')
  t.equal(openPushStore(undefined, { SVC_MODEL_STORE: '/srv/models/' }).description, '/srv/models/')
  t.equal(openPushStore('file:///srv/models', {}).description, '/srv/models')
  t.equal(openPushStore(join('store', 'models'), {}).description, resolve('store', 'models'))
})

t.test('an s3:// store is opened with the S3 settings the service reads; without a region or server, refused naming them', async (t) => {
  t.equal(openPushStore('s3://models-bk/prod', { AWS_REGION: 'eu-west-1' }).description, 's3://models-bk/prod/')
  t.equal(openPushStore(undefined, { SVC_MODEL_STORE: 's3://models-bk', SVC_S3_ENDPOINT: 'http://127.0.0.1:9000' }).description, 's3://models-bk/')
  t.match(refusal('s3://models-bk/prod'), {
    code: 'INVALID_ARGUMENTS',
    message: /^--store s3:\/\/models-bk\/prod: invalid configuration:\n {2}s3:\/\/models-bk\/prod\/: set AWS_REGION to the bucket's region/,
  })
  const halfKeys = refusal('s3://models-bk/prod', { AWS_REGION: 'eu-west-1', AWS_SECRET_ACCESS_KEY: 'no-key-id/s3cret' })
  t.match(halfKeys, { message: /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither/ })
  t.notMatch(halfKeys, { message: /s3cret/ })
})

t.test('no store named: refused, never the shipped artifacts, whichever way they are named', async (t) => {
  const unnamed = {
    code: 'INVALID_ARGUMENTS',
    message: `name the store to push to with --store DIR or SVC_MODEL_STORE: svc does not push into the artifacts it ships (${DEFAULT_STORE_ROOT})`,
  }
  t.match(refusal(undefined), unnamed)
  t.match(refusal(undefined, { SVC_MODEL_STORE: '' }), unnamed)
  t.match(refusal(''), unnamed)
  t.match(refusal(DEFAULT_STORE_ROOT, { SVC_MODEL_STORE: '/srv/models' }), {
    code: 'INVALID_ARGUMENTS',
    message: `--store ${DEFAULT_STORE_ROOT} holds the artifacts shipped with svc: push to a store of your own`,
  })
  t.match(refusal(undefined, { SVC_MODEL_STORE: `${DEFAULT_STORE_ROOT}/` }), { message: /^SVC_MODEL_STORE .* holds the artifacts shipped with svc/ })
  t.match(refusal(pathToFileURL(DEFAULT_STORE_ROOT).href), { message: /holds the artifacts shipped with svc/ })
})

t.test('an HTTP store is read-only: refused before any request, its credentials masked', async (t) => {
  const error = refusal('https://deploy:s3cret@models.example/v1')
  t.match(error, {
    code: 'INVALID_ARGUMENTS',
    message: '--store https://***@models.example/v1: the HTTP store is read-only; push to the directory or bucket it publishes',
  })
  t.notMatch(error, { message: /s3cret/ })
  t.match(refusal(undefined, { SVC_MODEL_STORE: 'http://127.0.0.1:1/models' }), {
    message: /^SVC_MODEL_STORE http:\/\/127\.0\.0\.1:1\/models: the HTTP store is read-only/,
  })
})

t.test('a value of no store form is refused, naming the forms push takes', async (t) => {
  t.match(refusal('ftp://models.example/'), {
    code: 'INVALID_ARGUMENTS',
    message: '--store ftp://models.example/: expected a directory, a file:///path URL or s3://bucket/prefix',
  })
  t.match(refusal(undefined, { SVC_MODEL_STORE: 'models' }), {
    message: 'SVC_MODEL_STORE models: expected a directory, a file:///path URL or s3://bucket/prefix',
  })
})
