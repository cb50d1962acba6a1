// The version a push uploads, read from its directory: one runtime's files, checked as the service
// checks them on load, model.json signed in the copy uploaded, DIR's other files named; and every
// directory that is no version refused with the file and the reason, before any store is touched.
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { readArtifactText } from '../../../lib/tools/sign/sign.js'
import { servedRuntimes } from '../../../lib/models/registry/runtimes.js'
import { PushError } from '../../../lib/tools/push/errors.js'
import { readVersionDir } from '../../../lib/tools/push/local.js'
import { tempTree } from '../../fixtures/model-store.js'
import { artifactFile } from '../../fixtures/model-registry.js'
import { artifactBytes, rawArtifact } from '../../fixtures/models.js'
import { REGRESSOR_METADATA as METADATA, REGRESSOR_PROFILE as PROFILE, regressorOnnx } from '../../fixtures/onnx-regressor.js'

const RUNTIMES = servedRuntimes({ onnxThreads: 1 })
const IRIS_2 = { name: 'iris', version: '2' }
const HOUSE_3 = { name: 'house', version: '3' }

/** What readVersionDir refuses, as its code and message with DIR written as `DIR`. */
const refusal = async (dir: string, place = IRIS_2) => {
  const error = await readVersionDir(dir, place, RUNTIMES).then(
    () => undefined,
    (caught: unknown) => caught,
  )
  if (!(error instanceof PushError)) throw new Error(`expected a PushError, got ${String(error)}`)
  return { code: error.code, message: error.message.replaceAll(dir, 'DIR') }
}

t.test('a kernel version: model.json signed as svc sign signs it, the DIR file left as it is, other files named', async (t) => {
  const compact = artifactFile('iris', '2')
  const dir = await tempTree(t, { 'model.json': compact, 'notes.md': 'trained on Tuesday', 'checksums.json': '{}' })
  await mkdir(join(dir, 'old'))
  const local = await readVersionDir(dir, IRIS_2, RUNTIMES)
  t.equal(local.runtime.platform, 'svc')
  t.same([...local.files.keys()], ['model.json'])
  t.equal(local.files.get('model.json')?.toString(), readArtifactText(Buffer.from(compact)).text, 'laid out as svc writes artifacts')
  t.not(local.files.get('model.json')?.toString(), compact)
  t.equal(await readFile(join(dir, 'model.json'), 'utf8'), compact, "DIR's file is not rewritten")
  t.same(local.ignored, ['checksums.json', 'notes.md', 'old'], 'sorted, checksums.json among them: push writes its own')
  t.same(local.notes, [], 'signed already: nothing to say')
})

t.test('a model.json whose sha256 is wrong or missing goes up signed, and a note says so', async (t) => {
  const raw = rawArtifact('iris')
  raw.version = '2'
  raw.parameters.intercepts[0] += 1
  const stated = raw.sha256
  const dir = await tempTree(t, { 'model.json': JSON.stringify(raw) })
  const local = await readVersionDir(dir, IRIS_2, RUNTIMES)
  const signed = readArtifactText(Buffer.from(JSON.stringify(raw)))
  t.equal(local.files.get('model.json')?.toString(), signed.text)
  t.same(local.notes, [
    `${join(dir, 'model.json')}: sha256 ${stated} is not its content's; uploaded signed, sha256 ${signed.sha256} (svc sign ${join(dir, 'model.json')} signs the file itself)`,
  ])
  delete raw.sha256
  const unsigned = await tempTree(t, { 'model.json': JSON.stringify(raw) })
  t.match((await readVersionDir(unsigned, IRIS_2, RUNTIMES)).notes, [/: sha256 \(none\) is not its content's; uploaded signed, sha256 [0-9a-f]{64} /])
})

t.test('an ONNX version: model.onnx, then the optional files DIR holds, as they are', async (t) => {
  const onnx = regressorOnnx()
  const full = await tempTree(t, { 'model.onnx': onnx, 'profile.json': PROFILE, 'metadata.json': METADATA, 'train.csv': 'a,b,c,d\n' })
  const local = await readVersionDir(full, HOUSE_3, RUNTIMES)
  t.equal(local.runtime.platform, 'onnxruntime')
  t.same([...local.files.keys()], ['model.onnx', 'metadata.json', 'profile.json'], "the runtime's order")
  t.same(local.files.get('model.onnx'), onnx)
  t.equal(local.files.get('metadata.json')?.toString(), METADATA)
  t.equal(local.files.get('profile.json')?.toString(), PROFILE)
  t.same(local.ignored, ['train.csv'])
  const bare = await tempTree(t, { 'model.onnx': onnx })
  t.same([...(await readVersionDir(bare, HOUSE_3, RUNTIMES)).files.keys()], ['model.onnx'], 'metadata and profile are optional')
})

t.test('a directory that is no version is refused, naming the file and what is wrong', async (t) => {
  const missing = join(await tempTree(t, {}), 'nowhere')
  t.match(await refusal(missing), { code: 'INVALID_VERSION_DIR', message: /^DIR: cannot read: ENOENT: no such file or directory/ })
  t.same(await refusal(await tempTree(t, { 'README.md': '' })), {
    code: 'INVALID_VERSION_DIR',
    message: 'DIR holds no model: expected model.json (svc) or model.onnx (onnxruntime)',
  })
  t.same(await refusal(await tempTree(t, { 'model.json': artifactFile('iris', '2'), 'model.onnx': regressorOnnx() })), {
    code: 'INVALID_VERSION_DIR',
    message: 'DIR holds model.json (svc) or model.onnx (onnxruntime): a version is one model; keep the files of one',
  })
  const folder = await tempTree(t, {})
  await mkdir(join(folder, 'model.json'))
  t.match(await refusal(folder), { code: 'INVALID_VERSION_DIR', message: /^DIR\/model\.json: cannot read: EISDIR/ })
})

t.test('files the service would refuse are refused here, with its reasons', async (t) => {
  t.match(await refusal(await tempTree(t, { 'model.json': '{"name": ' })), {
    code: 'INVALID_VERSION_DIR',
    message: /^DIR\/model\.json: \(document\): is not UTF-8 JSON: /,
  })
  const raw = rawArtifact('iris')
  raw.inputs[0].name = '1 bad'
  t.match(await refusal(await tempTree(t, { 'model.json': JSON.stringify(raw) })), { message: /^DIR\/model\.json: inputs\[0\]\.name: / })
  t.match(await refusal(await tempTree(t, { 'model.onnx': Buffer.from('not a graph') }), HOUSE_3), { message: /^DIR\/model\.onnx: model/ })
  t.same(await refusal(await tempTree(t, { 'model.onnx': regressorOnnx(), 'metadata.json': '{"clases": ["a"]}' }), HOUSE_3), {
    code: 'INVALID_VERSION_DIR',
    message: 'DIR/model.onnx: metadata.json clases: is not a member of metadata.json (features, classes, levels, task, type, batch)',
  })
  const wrongProfile = PROFILE.replace('"name": "d"', '"name": "e"')
  t.match(await refusal(await tempTree(t, { 'model.onnx': regressorOnnx(), 'metadata.json': METADATA, 'profile.json': wrongProfile }), HOUSE_3), {
    message: /^DIR\/model\.onnx: profile\.json /,
  })
})

t.test('a description of another model or version is refused: the service would not serve it under this one', async (t) => {
  const dir = await tempTree(t, { 'model.json': artifactBytes('iris') })
  t.same(await refusal(dir), {
    code: 'INVALID_VERSION_DIR',
    message: 'DIR/model.json is model "iris" version "1", pushed as model "iris" version "2": the service refuses a version stored under another\'s name',
  })
  t.match(await refusal(dir, { name: 'flowers', version: '1' }), { message: /is model "iris" version "1", pushed as model "flowers" version "1"/ })
  t.equal((await readVersionDir(dir, { name: 'iris', version: '1' }, RUNTIMES)).files.size, 1, 'its own name and version pass')
})
