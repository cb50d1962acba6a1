// Where a bucket's requests go: path-style to a named server, virtual-hosted on AWS unless the
// bucket's name has a dot.
import t from 'tap'
import { s3Endpoint } from '../../../../lib/models/store/s3/endpoint.js'

t.test('a named endpoint is addressed path-style, under any base path it has', async (t) => {
  t.same(s3Endpoint('models-bk', { endpoint: new URL('http://127.0.0.1:9000'), region: 'us-east-1' }), {
    origin: new URL('http://127.0.0.1:9000'),
    host: '127.0.0.1:9000',
    base: '/models-bk/',
    region: 'us-east-1',
  })
  t.same(s3Endpoint('models-bk', { endpoint: new URL('https://gw.example/s3'), region: 'auto' }).base, '/s3/models-bk/')
  t.same(s3Endpoint('models-bk', { endpoint: new URL('https://gw.example/s3/'), region: 'auto' }).base, '/s3/models-bk/')
})

t.test('AWS: virtual-hosted in the region, path-style for a bucket with a dot', async (t) => {
  t.same(s3Endpoint('models-bk', { endpoint: undefined, region: 'eu-west-1' }), {
    origin: new URL('https://models-bk.s3.eu-west-1.amazonaws.com'),
    host: 'models-bk.s3.eu-west-1.amazonaws.com',
    base: '/',
    region: 'eu-west-1',
  })
  t.same(s3Endpoint('my.models', { endpoint: undefined, region: 'eu-west-1' }), {
    origin: new URL('https://s3.eu-west-1.amazonaws.com'),
    host: 's3.eu-west-1.amazonaws.com',
    base: '/my.models/',
    region: 'eu-west-1',
  })
})
