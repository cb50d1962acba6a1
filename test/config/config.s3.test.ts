// The S3 settings: endpoint and region as the AWS tools name them, both keys or neither, and the
// instance metadata service's switch and address.
import t from 'tap'
import { ConfigError, readConfig } from '../../lib/config/config.js'
import { DEFAULT_ENDPOINT_REGION, readS3Config } from '../../lib/config/config.js'

const s3Store = { kind: 's3', bucket: 'models-bk', prefix: 'prod/' } as const
const directory = { kind: 'directory', root: '/srv/models' } as const

t.test('defaults: AWS, the instance role, IMDS at its link-local address', async (t) => {
  t.same(readS3Config({ AWS_REGION: 'eu-west-1' }, s3Store), {
    endpoint: undefined,
    region: 'eu-west-1',
    keys: undefined,
    imds: { isDisabled: false, endpoint: new URL('http://169.254.169.254') },
  })
})

t.test('SVC_S3_ENDPOINT wins over AWS_ENDPOINT_URL_S3; AWS_REGION over AWS_DEFAULT_REGION; an endpoint alone signs for us-east-1', async (t) => {
  t.same(readS3Config({ SVC_S3_ENDPOINT: 'http://127.0.0.1:9000', AWS_ENDPOINT_URL_S3: 'http://other:1' }, s3Store).endpoint, new URL('http://127.0.0.1:9000'))
  t.same(readS3Config({ AWS_ENDPOINT_URL_S3: 'https://minio.example' }, s3Store).endpoint, new URL('https://minio.example'))
  t.equal(readS3Config({ AWS_ENDPOINT_URL_S3: 'https://minio.example' }, s3Store).region, DEFAULT_ENDPOINT_REGION)
  t.equal(readS3Config({ AWS_REGION: 'eu-west-1', AWS_DEFAULT_REGION: 'us-west-2' }, s3Store).region, 'eu-west-1')
  t.equal(readS3Config({ AWS_DEFAULT_REGION: 'us-west-2' }, s3Store).region, 'us-west-2')
})

t.test('keys come together, a session token with them', async (t) => {
  t.same(readS3Config({ AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 's3cr3t', AWS_SESSION_TOKEN: 'tok' }, s3Store).keys, {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 's3cr3t',
    sessionToken: 'tok',
  })
  t.throws(() => readS3Config({ AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE' }, s3Store), {
    message: /AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither/,
  })
  const error = t.throws(() =>
    readS3Config({ AWS_REGION: 'eu-west-1', AWS_SECRET_ACCESS_KEY: 'hunter2-secret', AWS_SESSION_TOKEN: 'token-xyz' }, s3Store),
  ) as unknown
  t.ok(error instanceof ConfigError)
  t.match(String(error), /AWS_SESSION_TOKEN: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY too/)
  t.notMatch(String(error), /hunter2-secret|token-xyz/, 'no secret in the problem')
})

t.test('an s3:// store needs a region or an endpoint; another store does not', async (t) => {
  t.throws(() => readS3Config({}, s3Store), {
    message: /s3:\/\/models-bk\/prod\/: set AWS_REGION to the bucket's region \(AWS\), or SVC_S3_ENDPOINT/,
  })
  t.equal(readS3Config({}, directory).region, DEFAULT_ENDPOINT_REGION)
  t.throws(() => readS3Config({ AWS_REGION: 'EU West' }, s3Store), { message: /AWS_REGION=EU West: expected a region such as eu-west-1/ })
})

t.test('the metadata service can be turned off or pointed elsewhere', async (t) => {
  t.same(readS3Config({ AWS_REGION: 'x', AWS_EC2_METADATA_DISABLED: 'true', AWS_EC2_METADATA_SERVICE_ENDPOINT: 'http://127.0.0.1:1338' }, s3Store).imds, {
    isDisabled: true,
    endpoint: new URL('http://127.0.0.1:1338'),
  })
})

t.test('readConfig reads them into models.s3', async (t) => {
  const config = readConfig({ SVC_MODEL_STORE: 's3://models-bk/prod', SVC_S3_ENDPOINT: 'http://127.0.0.1:9000' })
  t.same(config.models.store, s3Store)
  t.equal(config.models.s3.endpoint?.href, 'http://127.0.0.1:9000/')
  t.throws(() => readConfig({ SVC_MODEL_STORE: 's3://models-bk/prod' }), { message: /set AWS_REGION/ })
})

t.test('the metadata endpoint is plain http at a root', async (t) => {
  t.throws(() => readS3Config({ AWS_REGION: 'x', AWS_EC2_METADATA_SERVICE_ENDPOINT: 'https://169.254.169.254' }, s3Store), {
    message: /AWS_EC2_METADATA_SERVICE_ENDPOINT=https:\/\/169\.254\.169\.254: expected http:\/\/host or http:\/\/host:port/,
  })
  t.throws(() => readS3Config({ AWS_REGION: 'x', AWS_EC2_METADATA_SERVICE_ENDPOINT: 'http://127.0.0.1:1338/latest' }, s3Store), {
    message: /expected http:\/\/host/,
  })
})
