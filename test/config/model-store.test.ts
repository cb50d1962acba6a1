// SVC_MODEL_STORE as the configuration reads it: the accepted forms, the redaction a problem
// shows, and the default root, from source or from a build.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import t from 'tap'
import { DEFAULT_STORE_ROOT, defaultStoreRoot, parseStoreSpec, redactStoreSpec, STORE_SPEC_FORMS, type StoreSpec } from '../../lib/config/model-store.js'

const SPECS: ReadonlyArray<readonly [string | undefined, StoreSpec | undefined]> = [
  [undefined, { kind: 'directory', root: DEFAULT_STORE_ROOT }],
  ['', { kind: 'directory', root: DEFAULT_STORE_ROOT }],
  ['/srv/models', { kind: 'directory', root: '/srv/models' }],
  ['/srv//models/./v1/', { kind: 'directory', root: '/srv/models/v1/' }],
  ['file:///srv/models', { kind: 'directory', root: '/srv/models' }],
  ['file://localhost/srv/my%20models/', { kind: 'directory', root: '/srv/my models/' }],
  ['https://models.example/svc', { kind: 'http', url: new URL('https://models.example/svc') }],
  ['http://user:secret@10.0.0.5:8080/', { kind: 'http', url: new URL('http://user:secret@10.0.0.5:8080/') }],
  ['https://user:p%zz@models.example/', undefined],
  ['https://us%zzer@models.example/', undefined],
  ['models', undefined],
  ['./models', undefined],
  ['/srv/\0models', undefined],
  ['file://fileserver/share/models', undefined],
  ['file:///srv/a%2Fb', undefined],
  ['file:///srv/models?x=1', undefined],
  ['https://models.example/svc?token=x', undefined],
  ['https://models.example/svc#top', undefined],
  ['ftp://models.example/', undefined],
  ['memory:', undefined],
  ['s3://models-bk', { kind: 's3', bucket: 'models-bk', prefix: '' }],
  ['s3://models-bk/', { kind: 's3', bucket: 'models-bk', prefix: '' }],
  ['s3://models-bk/prod', { kind: 's3', bucket: 'models-bk', prefix: 'prod/' }],
  ['s3://my.models.bk/prod/eu-1/', { kind: 's3', bucket: 'my.models.bk', prefix: 'prod/eu-1/' }],
  ['s3://Models/x', undefined],
  ['s3://ab', undefined],
  ['s3://-models/x', undefined],
  ['s3://my..models/x', undefined],
  ['s3://models-bk/a//b', undefined],
  ['s3://models-bk/a/../b', undefined],
  ['s3://models-bk/./b', undefined],
  ['s3://models-bk/a\\b', undefined],
  ['s3://models-bk/a\u0001b', undefined],
  ['s3://AKIA:secret@models-bk/x', undefined],
  ['s3://models-bk/x?versionId=1', undefined],
  ['s3://models-bk/x#y', undefined],
]

t.test('parseStoreSpec takes a directory, a file URL, an http(s) base URL or an s3:// bucket and prefix, and nothing else', async (t) => {
  for (const [raw, expected] of SPECS) t.same(parseStoreSpec(raw), expected, JSON.stringify(raw))
  t.match(STORE_SPEC_FORMS, /absolute directory path.*file:\/\/\/path.*http\(s\):\/\//)
})

t.test('redactStoreSpec masks credentials, parsable or not', async (t) => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    ['https://reader:s3cret@models.example/svc', 'https://***@models.example/svc'],
    ['https://reader:s3@cr/t@models.example/', 'https://***@models.example/'],
    ['https://token@models.example:99999/', 'https://***@models.example:99999/'],
    ['https://models.example/svc', 'https://models.example/svc'],
    ['https://reader:pass/word@models.example/', 'https://***@models.example/'],
    ['reader:s3cret@models.example/svc', '***@models.example/svc'],
    ['/srv/models', '/srv/models'],
    ['/srv/models@2', '/srv/models@2'],
  ]
  for (const [raw, shown] of cases) t.equal(redactStoreSpec(raw), shown, raw)
})

t.test('the default root is lib/models/artifacts under the package root, from source or from dist', async (t) => {
  t.equal(DEFAULT_STORE_ROOT, fileURLToPath(new URL('../../lib/models/artifacts', import.meta.url)))
  const root = await mkdtemp(join(tmpdir(), 'svc-store-root-'))
  t.teardown(() => rm(root, { recursive: true, force: true }))
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'svc', version: '1.0.0' }))
  await mkdir(join(root, 'dist', 'lib', 'config'), { recursive: true })
  await writeFile(join(root, 'dist', 'package.json'), JSON.stringify({ name: 'other' }))
  t.equal(defaultStoreRoot(pathToFileURL(join(root, 'dist', 'lib', 'config', 'model-store.js'))), join(root, 'lib', 'models', 'artifacts'))
  t.equal(defaultStoreRoot(pathToFileURL(join(root, 'lib', 'config', 'model-store.ts'))), join(root, 'lib', 'models', 'artifacts'))
  t.throws(() => defaultStoreRoot(pathToFileURL(join(tmpdir(), 'nowhere', 'model-store.js'))), /package.json of svc not found above/)
})
