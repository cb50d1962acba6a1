// `svc sign` over real files: an untouched artifact left byte for byte, an edited copy signed and
// then served as svc loads it, --check naming each wrong file, and every bad input one line and
// an exit status, never a stack trace.
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { parseArtifact } from '../../../lib/models/artifact.js'
import { runSignCommand, SIGN_USAGE } from '../../../lib/tools/sign/command.js'
import { artifactBytes, rawArtifact } from '../../fixtures/models.js'
import { tempTree } from '../../fixtures/model-store.js'

const run = async (argv: readonly string[]) => {
  let stdout = ''
  let stderr = ''
  const code = await runSignCommand(argv, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) })
  return { code, stdout, stderr }
}

/** Iris 1 copied as version 2 with an intercept moved, written compactly, as a hand edit or a script leaves it. */
const editedIris = (): string => {
  const raw = rawArtifact('iris')
  raw.version = '2'
  raw.parameters.intercepts[1] += 0.5
  return JSON.stringify(raw)
}

t.test('an artifact svc ships, signed again, is left byte for byte', async (t) => {
  const root = await tempTree(t, { 'iris.json': artifactBytes('iris'), 'cars.json': artifactBytes('cars') })
  const files = ['iris.json', 'cars.json'].map((name) => join(root, name))
  const { code, stdout, stderr } = await run(files)
  t.equal(code, 0, stderr)
  t.match(stdout, new RegExp(`^${files[0]}: sha256 ${rawArtifact('iris').sha256}, unchanged\n${files[1]}: sha256 [0-9a-f]{64}, unchanged\n$`))
  t.same(await readFile(files[0] as string), artifactBytes('iris'))
  t.same(await readFile(files[1] as string), artifactBytes('cars'))
  t.same(await run(['--check', ...files]), {
    code: 0,
    stdout: `${files[0]}: sha256 ${rawArtifact('iris').sha256} is right\n${files[1]}: sha256 ${rawArtifact('cars').sha256} is right\n`,
    stderr: '',
  })
})

t.test('an edited copy: --check names it and exits 1; sign writes its sha256, laid out as svc writes artifacts, and svc loads it', async (t) => {
  const root = await tempTree(t, { 'iris/2/model.json': editedIris(), 'iris/1/model.json': artifactBytes('iris') })
  const edited = join(root, 'iris/2/model.json')
  const shipped = join(root, 'iris/1/model.json')
  const checked = await run(['--check', shipped, edited])
  t.equal(checked.code, 1)
  t.equal(checked.stdout, `${shipped}: sha256 ${rawArtifact('iris').sha256} is right\n`)
  t.match(
    checked.stderr,
    new RegExp(
      `^svc sign: ${edited}: sha256 is wrong: the file states ${rawArtifact('iris').sha256}, its content hashes to [0-9a-f]{64} \\(svc sign ${edited} writes it\\)\n$`,
    ),
  )
  t.throws(() => parseArtifact(editedIris()), { code: 'SHA256_MISMATCH' }, 'as svc would refuse it')

  const signed = await run([edited])
  t.equal(signed.code, 0, signed.stderr)
  t.match(signed.stdout, new RegExp(`^${edited}: sha256 [0-9a-f]{64}, written \\(was ${rawArtifact('iris').sha256}\\)\n$`))
  const text = await readFile(edited, 'utf8')
  const artifact = parseArtifact(text)
  t.equal(artifact.version, '2')
  t.equal(text, `${JSON.stringify(artifact, null, 2)}\n`, 'two-space JSON and a final newline, members in their order')
  t.same(Object.keys(artifact), Object.keys(rawArtifact('iris')), 'sha256 stays where it was')
  t.equal((await run(['--check', edited])).code, 0)
})

t.test('a document without a sha256 gets one, last', async (t) => {
  const { sha256: _, ...unsigned } = rawArtifact('cars')
  const root = await tempTree(t, { 'model.json': JSON.stringify(unsigned) })
  const file = join(root, 'model.json')
  const checked = await run(['--check', file])
  t.equal(checked.code, 1)
  t.match(checked.stderr, /the file states \(none\)/)
  t.equal((await run([file])).code, 0)
  t.same(Object.keys(JSON.parse(await readFile(file, 'utf8'))), Object.keys(rawArtifact('cars')))
  t.same(await readFile(file), artifactBytes('cars'), 'the bytes svc ships')
})

t.test('bad input: one line naming the file and what is wrong, exit 2, every file still handled', async (t) => {
  const raw = rawArtifact('iris')
  raw.inputs[1].type = 'number'
  const root = await tempTree(t, {
    'text.json': 'not json',
    'array.json': '[1, 2]',
    'manifest.json': '{"default_version": "1"}',
    'broken.json': JSON.stringify(raw),
    'model.onnx': Buffer.from([8, 8]),
    'good.json': editedIris(),
  })
  const at = (name: string) => join(root, name)
  const names = ['missing.json', 'text.json', 'array.json', 'manifest.json', 'broken.json', 'model.onnx', 'good.json']
  const { code, stdout, stderr } = await run(names.map(at))
  t.equal(code, 2)
  t.same(stderr.split('\n'), [
    `svc sign: ${at('missing.json')}: cannot read: ENOENT: no such file or directory, open '${at('missing.json')}'`,
    `svc sign: ${at('text.json')}: (document): is not UTF-8 JSON: Unexpected token 'o', "not json" is not valid JSON`,
    `svc sign: ${at('array.json')}: not a model artifact svc serves: (document): must be a JSON object`,
    `svc sign: ${at('manifest.json')}: not a model artifact svc serves: format_version: undefined is not one of 1`,
    `svc sign: ${at('broken.json')}: not a model artifact svc serves: inputs[1].type: must be 'numerical' or 'categorical'`,
    `svc sign: ${at('model.onnx')}: an ONNX graph carries no sha256: svc hashes its files as it loads them`,
    '',
  ])
  t.match(stdout, new RegExp(`^${at('good.json')}: sha256 [0-9a-f]{64}, written`), 'the good file is signed all the same')
  t.equal(await readFile(at('broken.json'), 'utf8'), JSON.stringify(raw), 'a refused file is not written')
})

t.test('a file that cannot be written: exit 1, the file as it was', async (t) => {
  const root = await tempTree(t, { 'model.json': editedIris() })
  const file = join(root, 'model.json')
  // What the new text is written to first is taken by a directory.
  await mkdir(`${file}.${process.pid}.tmp/inside`, { recursive: true })
  const { code, stderr } = await run([file])
  t.equal(code, 1)
  t.match(stderr, new RegExp(`^svc sign: ${file}: cannot write: EISDIR`))
  t.equal(await readFile(file, 'utf8'), editedIris())
})

t.test('the command line: --help, no file, an unknown option', async (t) => {
  t.same(await run(['--help']), { code: 0, stdout: SIGN_USAGE, stderr: '' })
  t.same(await run(['-h']), { code: 0, stdout: SIGN_USAGE, stderr: '' })
  t.same(await run([]), { code: 2, stdout: '', stderr: 'svc sign: name at least one model.json to sign\nsvc sign --help lists the options.\n' })
  t.same(await run(['--force', 'model.json']), { code: 2, stdout: '', stderr: "svc sign: Unknown option '--force'\nsvc sign --help lists the options.\n" })
})

t.test('a right sha256 in another layout: rewritten as svc writes artifacts, the hash unchanged', async (t) => {
  const root = await tempTree(t, { 'model.json': JSON.stringify(rawArtifact('iris')) })
  const file = join(root, 'model.json')
  t.equal((await run(['--check', file])).code, 0, 'whitespace does not count in the hash')
  t.same(await run([file]), { code: 0, stdout: `${file}: sha256 ${rawArtifact('iris').sha256}, written\n`, stderr: '' })
  t.same(await readFile(file), artifactBytes('iris'))
})
