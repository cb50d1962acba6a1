// A push from a directory into a store (the memory store, which writes as every store must: whole
// files, on a condition), as the service then reads it: the files, checksums.json, the manifest, in
// that order; a push run again writing nothing; a version pushed before with other bytes refused
// before anything is written; and the store's own failures as its errors.
import t, { type Test } from 'tap'
import { CHECKSUMS_FILE, formatChecksums, parseChecksums, sha256Hex, verifyChecksums } from '../../../lib/models/store/checksums.js'
import { createHttpStore } from '../../../lib/models/store/http.js'
import { createMemoryStore, type MemoryStore } from '../../../lib/models/store/memory.js'
import type { Store } from '../../../lib/models/store/store.js'
import { PushError } from '../../../lib/tools/push/errors.js'
import { pushVersion, type PushOptions } from '../../../lib/tools/push/push.js'
import { readArtifactText } from '../../../lib/tools/sign/sign.js'
import { artifactServer, tempTree } from '../../fixtures/model-store.js'
import { artifactFile, harness, manifest, rebuilt } from '../../fixtures/model-registry.js'
import { artifactBytes, rawArtifact } from '../../fixtures/models.js'
import { REGRESSOR_METADATA, REGRESSOR_PROFILE, regressorOnnx } from '../../fixtures/onnx-regressor.js'
import { closedPort } from '../../fixtures/tcp.js'

/** The memory store, recording the path of each write that lands, and running `before` ahead of each. */
const recorded = (inner: MemoryStore, before: (path: string) => void = () => {}) => {
  const writes: string[] = []
  const store: Store = {
    ...inner,
    write: async (path, bytes, condition) => {
      before(path)
      const stat = await inner.write(path, bytes, condition)
      writes.push(path)
      return stat
    },
  }
  return { store, writes }
}

/** Runs a push; resolves with what it printed and what it rejected with, if anything. */
const push = async (store: Store, options: PushOptions) => {
  let stdout = ''
  let stderr = ''
  const error = await pushVersion(store, options, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) }).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  return { error, stdout, stderr }
}

/** The bytes a push uploads for a model.json: signed, laid out as svc writes artifacts. */
const signed = (text: string | Buffer): Buffer => Buffer.from(readArtifactText(Buffer.from(text)).text)

t.test('a new model: its files, then checksums.json, then a manifest naming the version its default; the service serves it', async (t) => {
  const h = harness({})
  const { store, writes } = recorded(h.files)
  const dir = await tempTree(t, { 'model.json': artifactBytes('iris') })
  const checksums = formatChecksums(new Map([['model.json', artifactBytes('iris')]]))
  t.same(await push(store, { dir, model: 'iris', version: '1' }), {
    error: undefined,
    stdout: [
      `uploaded iris/1/model.json (${artifactBytes('iris').length} bytes)`,
      `uploaded iris/1/checksums.json (${checksums.length} bytes)`,
      'added version 1 to iris/manifest.json in memory (versions: 1; default 1)',
      '',
    ].join('\n'),
    stderr: '',
  })
  t.same(writes, ['iris/1/model.json', 'iris/1/checksums.json', 'iris/manifest.json'], 'the manifest last: what makes the service load the version')
  t.same(await h.files.read('iris/1/model.json'), artifactBytes('iris'), 'a shipped artifact is signed and laid out already: the same bytes')
  t.same(await h.files.read('iris/1/checksums.json'), checksums)
  t.equal((await h.files.read('iris/manifest.json')).toString(), '{\n  "default_version": "1",\n  "versions": [\n    "1"\n  ]\n}\n')
  await h.registry.load()
  t.equal(h.registry.resolve('iris')?.version, '1')
})

t.test('an ONNX version: model.onnx, metadata.json and profile.json as DIR holds them, each in checksums.json; other files named and left', async (t) => {
  const store = createMemoryStore()
  const files = { 'model.onnx': regressorOnnx(), 'metadata.json': REGRESSOR_METADATA, 'profile.json': REGRESSOR_PROFILE }
  const dir = await tempTree(t, { ...files, 'train.csv': 'a,b,c,d\n', 'notes.md': '' })
  const { error, stdout, stderr } = await push(store, { dir, model: 'house', version: '3' })
  t.equal(error, undefined)
  t.match(stdout.split('\n'), [
    `uploaded house/3/model.onnx (${files['model.onnx'].length} bytes)`,
    `uploaded house/3/metadata.json (${REGRESSOR_METADATA.length} bytes)`,
    `uploaded house/3/profile.json (${REGRESSOR_PROFILE.length} bytes)`,
    /^uploaded house\/3\/checksums\.json \(\d+ bytes\)$/,
    'added version 3 to house/manifest.json in memory (versions: 3; default 3)',
    '',
  ])
  t.equal(stderr, `svc push: not uploaded, since a version holds only model.onnx, metadata.json, profile.json: ${dir}/notes.md, ${dir}/train.csv\n`)
  const stored = new Map(await Promise.all(Object.keys(files).map(async (name) => [name, await store.read(`house/3/${name}`)] as const)))
  for (const [name, bytes] of Object.entries(files)) t.same(stored.get(name), Buffer.from(bytes), `${name} as DIR holds it`)
  const checksums = parseChecksums(await store.read(`house/3/${CHECKSUMS_FILE}`), `house/3/${CHECKSUMS_FILE}`)
  t.same([...checksums], [...stored].map(([name, bytes]) => [name, sha256Hex(bytes)]).sort(), 'every file, by name')
  t.doesNotThrow(() => verifyChecksums(checksums, stored, 'house/3/'), 'as a load verifies them')
  await t.rejects(store.stat('house/3/train.csv'), { code: 'NOT_FOUND' })
})

t.test("model.json goes up signed, DIR's file edited by hand or not; checksums.json covers the bytes uploaded", async (t) => {
  const store = createMemoryStore()
  const compact = artifactFile('iris', '2')
  const dir = await tempTree(t, { 'model.json': compact })
  t.match(await push(store, { dir, model: 'iris', version: '2' }), { error: undefined, stdout: /^uploaded iris\/2\/model\.json/, stderr: '' })
  t.same(await store.read('iris/2/model.json'), signed(compact))
  t.same([...parseChecksums(await store.read('iris/2/checksums.json'), 'checksums.json')], [['model.json', sha256Hex(signed(compact))]])

  const edited = rawArtifact('iris')
  edited.version = '3'
  const editedDir = await tempTree(t, { 'model.json': JSON.stringify(edited) })
  const { error, stderr } = await push(store, { dir: editedDir, model: 'iris', version: '3' })
  t.equal(error, undefined)
  t.match(stderr, new RegExp(`^svc push: ${editedDir}/model\\.json: sha256 ${edited.sha256} is not its content's; uploaded signed, sha256 [0-9a-f]{64} `))
  t.same(await store.read('iris/3/model.json'), signed(JSON.stringify(edited)))
})

t.test("a second version is listed beside the first; the manifest's other members stay, in their order", async (t) => {
  const before = '{"default_version": "1", "versions": ["1", "2"], "canary": {"version": "2", "percent": 5}}'
  const store = createMemoryStore({ 'iris/manifest.json': before, 'iris/1/model.json': artifactBytes('iris'), 'iris/2/model.json': artifactFile('iris', '2') })
  const dir = await tempTree(t, { 'model.json': artifactFile('iris', '3') })
  const { error, stdout } = await push(store, { dir, model: 'iris', version: '3' })
  t.equal(error, undefined)
  t.match(stdout, /\nadded version 3 to iris\/manifest\.json in memory \(versions: 1, 2, 3; default 1\)\n$/)
  t.equal(
    (await store.read('iris/manifest.json')).toString(),
    `${JSON.stringify({ default_version: '1', versions: ['1', '2', '3'], canary: { version: '2', percent: 5 } }, null, 2)}\n`,
  )
})

t.test('a push run again writes nothing and succeeds; one cut short before its manifest is completed', async (t) => {
  const { store, writes } = recorded(createMemoryStore())
  const dir = await tempTree(t, { 'model.json': artifactFile('iris', '2') })
  t.equal((await push(store, { dir, model: 'iris', version: '2' })).error, undefined)
  writes.length = 0
  const again = await push(store, { dir, model: 'iris', version: '2' })
  t.equal(again.error, undefined)
  t.match(again.stdout.split('\n'), [
    /^unchanged iris\/2\/model\.json \(\d+ bytes\)$/,
    /^unchanged iris\/2\/checksums\.json \(\d+ bytes\)$/,
    'version 2 already listed in iris/manifest.json in memory (versions: 2; default 2)',
    '',
  ])
  t.same(writes, [], 'nothing written')

  const cut = createMemoryStore({ 'iris/manifest.json': manifest('1'), 'iris/1/model.json': artifactBytes('iris') })
  t.equal((await push(cut, { dir, model: 'iris', version: '2' })).error, undefined)
  cut.put('iris/manifest.json', manifest('1'))
  const completed = await push(cut, { dir, model: 'iris', version: '2' })
  t.match(
    completed.stdout,
    /^unchanged iris\/2\/model\.json .*\nunchanged iris\/2\/checksums\.json .*\nadded version 2 to iris\/manifest\.json in memory \(versions: 1, 2; default 1\)\n$/,
  )
})

/** The VERSION_EXISTS refusal of pushing DIR over `stored`, and the writes it made (none, it is checked). */
const refusedOver = async (stored: Record<string, string | Buffer>, dirFiles: Record<string, string | Buffer>, t: Test) => {
  const inner = createMemoryStore(stored)
  const { store, writes } = recorded(inner)
  const dir = await tempTree(t, dirFiles)
  const { error, stdout } = await push(store, { dir, model: 'iris', version: '2' })
  if (!(error instanceof PushError)) throw new Error(`expected a PushError, got ${String(error)}`)
  return { code: error.code, message: error.message.replaceAll(dir, 'DIR'), writes, stdout }
}

t.test('a version pushed before with other bytes is refused before anything is written', async (t) => {
  const exists = (what: string) => ({
    code: 'VERSION_EXISTS',
    message: `iris version 2 already exists in memory with ${what}; a version is immutable: push it as a new version`,
    writes: [],
    stdout: '',
  })
  const ours = artifactFile('iris', '2')
  t.same(await refusedOver({ 'iris/2/model.json': rebuilt('iris', '2') }, { 'model.json': ours }, t), exists('a different model.json'), 'another build')
  const sameSize = Buffer.from(signed(ours))
  sameSize[sameSize.length - 1] = 0x20
  t.same(await refusedOver({ 'iris/2/model.json': sameSize }, { 'model.json': ours }, t), exists('a different model.json'), 'the same size, other bytes')
  t.same(
    await refusedOver({ 'iris/2/model.json': signed(ours), 'iris/2/checksums.json': '{"sha256": {}}\n' }, { 'model.json': ours }, t),
    exists('a different checksums.json'),
  )
})

t.test('a stored file this push does not carry is refused too: the version would be another', async (t) => {
  const exists = (name: string) =>
    `iris version 2 already exists in memory with a ${name}, which DIR does not hold; a version is immutable: push it as a new version`
  const ours = artifactFile('iris', '2')
  t.match(await refusedOver({ 'iris/2/model.json': signed(ours), 'iris/2/profile.json': REGRESSOR_PROFILE }, { 'model.json': ours }, t), {
    message: exists('profile.json'),
    writes: [],
  })
  t.match(await refusedOver({ 'iris/2/model.json': ours }, { 'model.onnx': regressorOnnx() }, t), { message: exists('model.json'), writes: [] })
  t.match(await refusedOver({ 'iris/2/model.onnx': regressorOnnx(), 'iris/2/metadata.json': REGRESSOR_METADATA }, { 'model.onnx': regressorOnnx() }, t), {
    message: exists('metadata.json'),
    writes: [],
  })
})

t.test('a file another writer lands between the check and the write: the same bytes are this push’s, others stop it there', async (t) => {
  const ours = artifactFile('iris', '2')
  const dir = await tempTree(t, { 'model.json': ours })
  const same = createMemoryStore()
  const sameRace = recorded(same, (path) => {
    if (path === 'iris/2/model.json') same.put(path, signed(ours))
  })
  const landed = await push(sameRace.store, { dir, model: 'iris', version: '2' })
  t.equal(landed.error, undefined)
  t.match(landed.stdout, /^unchanged iris\/2\/model\.json .*\nuploaded iris\/2\/checksums\.json /)

  const other = createMemoryStore()
  const otherRace = recorded(other, (path) => {
    if (path === 'iris/2/model.json') other.put(path, rebuilt('iris', '2'))
  })
  const stopped = await push(otherRace.store, { dir, model: 'iris', version: '2' })
  t.match(stopped.error, {
    code: 'VERSION_EXISTS',
    message:
      'iris version 2 already exists in memory with a different model.json, written while this push ran; a version is immutable: push it as a new version',
  })
  t.same(otherRace.writes, [], 'neither checksums.json nor the manifest')
  await t.rejects(other.stat('iris/manifest.json'), { code: 'NOT_FOUND' })
})

t.test('a model name or version a store or manifest cannot hold is refused before DIR is read', async (t) => {
  const store = createMemoryStore()
  const dir = '/nonexistent'
  for (const model of ['', '..', 'a/b', 'a\\b', 'a\nb'])
    t.match(await push(store, { dir, model, version: '1' }), {
      error: {
        code: 'INVALID_ARGUMENTS',
        message: `model ${JSON.stringify(model)}: a model's name is one path segment, without "/", "\\" or control characters, not "." or ".."`,
      },
    })
  for (const version of ['', '-1', '1/2', 'v'.repeat(65), 'é'])
    t.match(await push(store, { dir, model: 'iris', version }), {
      error: {
        code: 'INVALID_ARGUMENTS',
        message: `version ${JSON.stringify(version)}: must be a version string matching /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/`,
      },
    })
})

t.test('a directory that is no version touches no store', async (t) => {
  const { store, writes } = recorded(createMemoryStore())
  const dir = await tempTree(t, { 'model.json': artifactFile('iris', '3') })
  t.match(await push(store, { dir, model: 'iris', version: '2' }), {
    error: { code: 'INVALID_VERSION_DIR', message: /is model "iris" version "3"/ },
    stdout: '',
  })
  t.same(writes, [])
})

t.test("a store's failure is its StoreError: read-only HTTP, one that cannot be reached", async (t) => {
  const dir = await tempTree(t, { 'model.json': artifactFile('iris', '2') })
  const server = await artifactServer(t, await tempTree(t, {}))
  const http = createHttpStore(new URL(server.url), { timeoutMs: 2000, maxBytes: 1 << 20 })
  t.match(await push(http, { dir, model: 'iris', version: '2' }), {
    error: {
      name: 'StoreError',
      code: 'READ_ONLY',
      message: /iris\/2\/model\.json cannot be written: the HTTP store is read-only; push to the directory or bucket/,
    },
    stdout: '',
  })
  t.ok(
    server.received.every(({ method }) => method === 'HEAD'),
    'only looked',
  )
  const gone = createHttpStore(new URL(`http://127.0.0.1:${await closedPort()}/models/`), { timeoutMs: 2000, maxBytes: 1 << 20 })
  t.match(await push(gone, { dir, model: 'iris', version: '2' }), { error: { name: 'StoreError', code: 'UPSTREAM_ERROR' } })
})
