// loadModel: one model from a store, as the service loads it, or why not.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { DEFAULT_STORE_ROOT } from '../../../lib/config/model-store.js'
import { loadModel, ModelLoadError } from '../../../lib/tools/profile/model.js'
import { rawArtifact, sign } from '../../fixtures/models.js'
import { rejectionOf } from '../../fixtures/rejection.js'

const SHIPPED = { kind: 'directory', root: DEFAULT_STORE_ROOT } as const

const failure = (promise: Promise<unknown>): Promise<Error> => rejectionOf(promise)

const BROKEN = '{ not json'

/** A directory store holding model `m`: version 1 the iris artifact renamed, version 2 broken. */
const store = (t: Test, manifest: object): string => {
  const root = t.testdir()
  const m = rawArtifact('iris')
  m.name = 'm'
  for (const [version, content] of [
    ['1', sign(m)],
    ['2', BROKEN],
  ]) {
    mkdirSync(join(root, 'm', version as string), { recursive: true })
    writeFileSync(join(root, 'm', version as string, 'model.json'), content as string)
  }
  writeFileSync(join(root, 'm', 'manifest.json'), JSON.stringify(manifest))
  return root
}

t.test('a shipped model, its default version or the one asked for, ready to predict', async (t) => {
  const served = await loadModel({ store: SHIPPED, name: 'iris', version: undefined })
  t.match(served, { name: 'iris', version: '1', model: { task: 'classification' } })
  const prediction = (await served.predictor.predict(Float64Array.of(5.1, 3.5, 1.4, 0.2), 1)) as { labels: Uint32Array }
  t.same(Array.from(prediction.labels), [0], 'setosa')
  t.equal((await loadModel({ store: SHIPPED, name: 'cars', version: '1' })).version, '1')
})

t.test("a model that cannot be served: the registry's reason, and the store's detail when it has one", async (t) => {
  const unknown = await failure(loadModel({ store: SHIPPED, name: 'tulips', version: undefined }))
  t.type(unknown, ModelLoadError)
  t.equal(
    unknown.message,
    `model tulips: tulips/manifest.json: not found in the model store (${join(DEFAULT_STORE_ROOT, 'tulips', 'manifest.json')} not found)`,
  )
  const broken = await failure(loadModel({ store: { kind: 'directory', root: store(t, { default_version: '2' }) }, name: 'm', version: undefined }))
  // The parser's own words differ between Node versions; nothing follows them (a file error has no store detail).
  const parserSays = ((): string => {
    try {
      JSON.parse(BROKEN)
    } catch (error: unknown) {
      return (error as Error).message
    }
    throw new Error(`${BROKEN} parsed`)
  })()
  t.equal(broken.message, `model m: default version 2: m/2/model.json: (document): is not UTF-8 JSON: ${parserSays}`)
})

t.test('a version that failed, or that the manifest does not list', async (t) => {
  const spec = { kind: 'directory', root: store(t, { default_version: '1', versions: ['1', '2'] }) } as const
  t.equal((await loadModel({ store: spec, name: 'm', version: '1' })).name, 'm')
  const failed = await failure(loadModel({ store: spec, name: 'm', version: '2' }))
  t.type(failed, ModelLoadError)
  t.match(failed.message, /^model m version 2: m\/2\/model\.json: \(document\): is not UTF-8 JSON/)
  const absent = await failure(loadModel({ store: spec, name: 'm', version: '3' }))
  t.equal(absent.message, 'model m has no version 3: the versions are 1')
})
