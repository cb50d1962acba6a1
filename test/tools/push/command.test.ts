// `svc push` from its arguments to its exit status, in process, on directory stores and an S3
// bucket (the tests' stand-in, which checks signatures and conditions as S3 does): the command line
// and its refusals, the store from --store or SVC_MODEL_STORE, and each outcome's status and lines.
import { readFile, symlink } from 'node:fs/promises'
import { join, relative } from 'node:path'
import t, { type Test } from 'tap'
import { createDirectoryStore } from '../../../lib/models/store/directory.js'
import { formatChecksums } from '../../../lib/models/store/checksums.js'
import { parseManifest } from '../../../lib/models/store/manifest.js'
import { PUSH_USAGE, runPushCommand } from '../../../lib/tools/push/command.js'
import { readArtifactText } from '../../../lib/tools/sign/sign.js'
import { tempTree } from '../../fixtures/model-store.js'
import { artifactFile, rebuilt } from '../../fixtures/model-registry.js'
import { artifactBytes } from '../../fixtures/models.js'
import { STAND_IN_CREDENTIALS, type StandIn, startStandIn } from '../../fixtures/s3/stand-in.js'

const HELP = 'svc push --help lists the options.\n'
const BUCKET = 'models-bk'

const run = async (argv: readonly string[], env: Record<string, string> = {}) => {
  let stdout = ''
  let stderr = ''
  const code = await runPushCommand(argv, { env, stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) })
  return { code, stdout, stderr }
}

/** Iris version 2 as its directory holds it before a push, compact and signed. */
const IRIS_2 = artifactFile('iris', '2')
const IRIS_2_UPLOADED = Buffer.from(readArtifactText(Buffer.from(IRIS_2)).text)

/** A store into which iris 2 was pushed: its files, their checksums and a manifest listing it. */
const pushedStore = (t: Test, manifest = '{"default_version": "1", "versions": ["1", "2"]}') =>
  tempTree(t, {
    'iris/manifest.json': manifest,
    'iris/1/model.json': artifactBytes('iris'),
    'iris/2/model.json': IRIS_2_UPLOADED,
    'iris/2/checksums.json': formatChecksums(new Map([['model.json', IRIS_2_UPLOADED]])),
  })

t.test('svc push --help and -h print the usage', async (t) => {
  t.same(await run(['--help']), { code: 0, stdout: PUSH_USAGE, stderr: '' })
  t.same(await run(['dir', '-h', '--model', 'iris']), { code: 0, stdout: PUSH_USAGE, stderr: '' })
  t.match(PUSH_USAGE, /^Usage: svc push DIR --model NAME --version V \[--store DIR\|s3:\/\/BUCKET\/PREFIX\]\n/)
})

t.test('a bad command line: one line saying what is wrong, the pointer to --help, exit 2', async (t) => {
  for (const [argv, why] of [
    [['dir', '--model', 'iris', '--version', '2', '--bogus'], "Unknown option '--bogus'"],
    [['--model', 'iris', '--version', '2'], "name the version's directory: svc push DIR --model NAME --version V"],
    [['a', 'b', '--model', 'iris', '--version', '2'], 'one DIR at a time, not a, b'],
    [['dir', '--version', '2'], '--model is required'],
    [['dir', '--model', 'iris'], '--version is required'],
    [
      ['dir', '--model', 'iris', '--version', '2/3', '--store', '/srv/models'],
      'version "2/3": must be a version string matching /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/',
    ],
    [
      ['dir', '--model', 'iris', '--version', '2'],
      'name the store to push to with --store DIR or SVC_MODEL_STORE: svc does not push into the artifacts it ships',
    ],
    [
      ['dir', '--model', 'iris', '--version', '2', '--store', 'http://127.0.0.1:1/models'],
      'the HTTP store is read-only; push to the directory or bucket it publishes',
    ],
  ] as const) {
    const { code, stdout, stderr } = await run(argv)
    t.equal(code, 2, argv.join(' '))
    t.equal(stdout, '')
    t.ok(stderr.startsWith('svc push: ') && stderr.includes(why) && stderr.endsWith(`\n${HELP}`), stderr)
  }
})

t.test('a DIR that is no version: exit 2, naming the file, no pointer to --help', async (t) => {
  const store = await tempTree(t, {})
  const dir = await tempTree(t, { 'model.json': artifactFile('iris', '3') })
  t.same(await run([dir, '--model', 'iris', '--version', '2', '--store', store]), {
    code: 2,
    stdout: '',
    stderr: `svc push: ${dir}/model.json is model "iris" version "3", pushed as model "iris" version "2": the service refuses a version stored under another's name\n`,
  })
})

t.test('a push run again into a directory store writes nothing and exits 0: --store, relative or absolute, or SVC_MODEL_STORE', async (t) => {
  const store = await pushedStore(t)
  const dir = await tempTree(t, { 'model.json': IRIS_2 })
  const expected = {
    code: 0,
    stdout: [
      `unchanged iris/2/model.json (${IRIS_2_UPLOADED.length} bytes)`,
      /unchanged iris\/2\/checksums\.json \(\d+ bytes\)/.source,
      `version 2 already listed in iris/manifest.json in ${store} (versions: 1, 2; default 1)`,
    ],
    stderr: '',
  }
  for (const [argv, env] of [
    [['--store', store], {}],
    [['--store', relative(process.cwd(), store)], {}],
    [[], { SVC_MODEL_STORE: store }],
  ] as const) {
    const { code, stdout, stderr } = await run([dir, '--model', 'iris', '--version', '2', ...argv], env)
    t.same({ code, stderr }, { code: expected.code, stderr: expected.stderr })
    const lines = stdout.split('\n')
    t.equal(lines[0], expected.stdout[0])
    t.match(lines[1], new RegExp(`^${expected.stdout[1]}$`))
    t.equal(lines[2], expected.stdout[2])
  }
})

t.test('a version in the directory with other bytes, or a manifest svc would refuse: exit 1, the store left as it was', async (t) => {
  const store = await pushedStore(t)
  const dir = await tempTree(t, { 'model.json': rebuilt('iris', '2') })
  t.same(await run([dir, '--model', 'iris', '--version', '2', '--store', store]), {
    code: 1,
    stdout: '',
    stderr: `svc push: iris version 2 already exists in ${store} with a different model.json; a version is immutable: push it as a new version\n`,
  })
  t.same(await readFile(join(store, 'iris/2/model.json')), IRIS_2_UPLOADED)

  const broken = await pushedStore(t, '{"default_version": "1", "versoins": ["2"]}')
  const same = await tempTree(t, { 'model.json': IRIS_2 })
  const { code, stderr } = await run([same, '--model', 'iris', '--version', '2', '--store', broken])
  t.equal(code, 1)
  t.equal(
    stderr,
    `svc push: iris/manifest.json in ${broken} is not a manifest svc serves, so push leaves it alone: versoins: is not a member of a manifest (default_version, versions, canary, shadow, log)\n`,
  )
  t.equal(await readFile(join(broken, 'iris/manifest.json'), 'utf8'), '{"default_version": "1", "versoins": ["2"]}')
})

t.test("a store's failure: its message, exit 1", async (t) => {
  const store = await tempTree(t, {})
  await symlink('iris', join(store, 'iris'))
  const dir = await tempTree(t, { 'model.json': IRIS_2 })
  const { code, stdout, stderr } = await run([dir, '--model', 'iris', '--version', '2', '--store', store])
  t.same({ code, stdout }, { code: 1, stdout: '' })
  t.match(stderr, new RegExp(`^svc push: ${store}/iris/2/[a-z.]+ cannot be read: ELOOP\\n$`), 'a link loop where the model should be')
})

/** The environment that points svc push at the stand-in's bucket, as an operator's would at S3. */
const s3Env = (standIn: StandIn): Record<string, string> => ({
  SVC_MODEL_STORE: `s3://${BUCKET}/prod`,
  SVC_S3_ENDPOINT: standIn.url,
  AWS_ACCESS_KEY_ID: STAND_IN_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: STAND_IN_CREDENTIALS.secretAccessKey,
  AWS_EC2_METADATA_DISABLED: 'true',
})

t.test('into an S3 bucket: a new model, a version pushed again, two versions at once, each file written only where there was none', async (t) => {
  const standIn = await startStandIn(t, { buckets: [BUCKET] })
  const env = s3Env(standIn)
  const first = await tempTree(t, { 'model.json': artifactBytes('iris') })
  const one = await run([first, '--model', 'iris', '--version', '1'], env)
  t.equal(one.code, 0, one.stderr)
  t.match(
    one.stdout,
    /^uploaded iris\/1\/model\.json \(\d+ bytes\)\nuploaded iris\/1\/checksums\.json \(\d+ bytes\)\nadded version 1 to iris\/manifest\.json in s3:\/\/models-bk\/prod\/ \(versions: 1; default 1\)\n$/,
  )
  t.same(standIn.keys(BUCKET), ['prod/iris/1/checksums.json', 'prod/iris/1/model.json', 'prod/iris/manifest.json'])
  t.same(standIn.get(BUCKET, 'prod/iris/1/model.json')?.bytes, artifactBytes('iris'))
  t.ok(
    standIn.log.filter(({ method }) => method === 'PUT').every(({ headers }) => headers['if-none-match'] === '*' || headers['if-match'] !== undefined),
    'every PUT conditional',
  )
  standIn.clearLog()
  const again = await run([first, '--model', 'iris', '--version', '1'], env)
  t.equal(again.code, 0, again.stderr)
  t.match(
    again.stdout,
    /^unchanged iris\/1\/model\.json .*\nunchanged iris\/1\/checksums\.json .*\nversion 1 already listed in iris\/manifest\.json in s3:\/\/models-bk\/prod\/ /,
  )
  t.equal(standIn.requests.PutObject, 0, 'nothing written')

  const dirs = await Promise.all(['2', '3', '4'].map((version) => tempTree(t, { 'model.json': artifactFile('iris', version) })))
  const runs = await Promise.all(['2', '3', '4'].map((version, i) => run([dirs[i] as string, '--model', 'iris', '--version', version], env)))
  t.same(
    runs.map(({ code }) => code),
    [0, 0, 0],
    runs.map(({ stderr }) => stderr).join(''),
  )
  t.same(parseManifest(standIn.get(BUCKET, 'prod/iris/manifest.json')?.bytes as Buffer).versions, ['1', '2', '3', '4'])
})

t.test('into an S3 bucket: a version there with other bytes is refused, nothing written; no credential in what is said', async (t) => {
  const standIn = await startStandIn(t, { buckets: [BUCKET] })
  standIn.put(BUCKET, 'prod/iris/2/model.json', IRIS_2_UPLOADED)
  const dir = await tempTree(t, { 'model.json': rebuilt('iris', '2') })
  const { code, stdout, stderr } = await run([dir, '--model', 'iris', '--version', '2'], s3Env(standIn))
  t.same({ code, stdout }, { code: 1, stdout: '' })
  t.equal(
    stderr,
    'svc push: iris version 2 already exists in s3://models-bk/prod/ with a different model.json; a version is immutable: push it as a new version\n',
  )
  t.equal(standIn.requests.PutObject, 0)
  const denied = await run([dir, '--model', 'iris', '--version', '2'], { ...s3Env(standIn), AWS_SECRET_ACCESS_KEY: 'wrong/secret+KEY' })
  t.equal(denied.code, 1)
  t.match(denied.stderr, /^svc push: HEAD s3:\/\/models-bk\/prod\/iris\/2\/[a-z.]+ failed \(HTTP 403\): access denied, a wrong secret /)
  t.notMatch(denied.stderr, /wrong\/secret|stand-in\/secret|AKIDSTANDINEXAMPLE/)
})

t.test('into a directory: a new model, then a second version, each as the service then reads it', async (t) => {
  const store = await tempTree(t, {})
  const first = await tempTree(t, { 'model.json': artifactBytes('iris') })
  const one = await run([first, '--model', 'iris', '--version', '1', '--store', store])
  t.same(one, {
    code: 0,
    stdout: [
      `uploaded iris/1/model.json (${artifactBytes('iris').length} bytes)`,
      `uploaded iris/1/checksums.json (${formatChecksums(new Map([['model.json', artifactBytes('iris')]])).length} bytes)`,
      `added version 1 to iris/manifest.json in ${store} (versions: 1; default 1)`,
      '',
    ].join('\n'),
    stderr: '',
  })
  const second = await tempTree(t, { 'model.json': IRIS_2 })
  const two = await run([second, '--model', 'iris', '--version', '2', '--store', store])
  t.equal(two.code, 0, two.stderr)
  t.match(two.stdout, new RegExp(`\\nadded version 2 to iris/manifest\\.json in ${store} \\(versions: 1, 2; default 1\\)\\n$`))
  const directory = createDirectoryStore(store, { maxBytes: 1 << 24 })
  t.same(await directory.list(), ['iris'])
  t.same(await directory.read('iris/2/model.json'), IRIS_2_UPLOADED)
  t.same(parseManifest(await directory.read('iris/manifest.json')).versions, ['1', '2'])
})

t.test('into a directory: two pushes of different versions at once both land in versions', async (t) => {
  const store = await pushedStore(t, '{"default_version": "1", "versions": ["1"]}')
  const dirs = await Promise.all(['3', '4', '5'].map((version) => tempTree(t, { 'model.json': artifactFile('iris', version) })))
  const runs = await Promise.all(['3', '4', '5'].map((version, i) => run([dirs[i] as string, '--model', 'iris', '--version', version, '--store', store])))
  t.same(
    runs.map(({ code }) => code),
    [0, 0, 0],
    runs.map(({ stderr }) => stderr).join(''),
  )
  t.same(parseManifest(await readFile(join(store, 'iris/manifest.json'))).versions, ['1', '3', '4', '5'])
})
