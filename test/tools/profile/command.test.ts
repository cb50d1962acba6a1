// The command line of `svc profile`, and the command run in-process from arguments to exit status.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import t from 'tap'
import { DEFAULT_STORE_ROOT } from '../../../lib/config/model-store.js'
import { parseProfileArgs, PROFILE_USAGE, ProfileUsageError, runProfileCommand } from '../../../lib/tools/profile/command.js'
import { parseProfile } from '../../../lib/models/profile.js'

t.test('defaults, and every option read', async (t) => {
  t.same(parseProfileArgs(['--input', 'train.csv']), {
    input: 'train.csv',
    format: 'csv',
    delimiter: ',',
    model: undefined,
    version: undefined,
    store: { kind: 'directory', root: DEFAULT_STORE_ROOT },
    target: undefined,
    schema: undefined,
    exclude: [],
    bins: undefined,
    maxLevels: 1000,
    isDroppingMissing: false,
    output: undefined,
  })
  t.match(
    parseProfileArgs([
      '--input',
      'rows.txt',
      '--format',
      'csv',
      '--delimiter',
      ';',
      '--schema',
      'a, b:numerical,c:categorical,d:e:numerical',
      '--bins',
      '3',
      '--max-levels',
      '20',
      '--drop-missing',
      '--output',
      'profile.json',
    ]),
    {
      format: 'csv',
      delimiter: ';',
      schema: [{ name: 'a' }, { name: 'b', type: 'numerical' }, { name: 'c', type: 'categorical' }, { name: 'd:e', type: 'numerical' }],
      bins: 3,
      maxLevels: 20,
      isDroppingMissing: true,
      output: 'profile.json',
    },
  )
  t.match(parseProfileArgs(['--input', 'a.csv', '--exclude', 'id, label,']), { exclude: ['id', 'label'] })
  t.match(parseProfileArgs(['--input', 'a.csv', '--output', '-']), { output: undefined }, '- is standard output')
  t.match(parseProfileArgs(['--input', 'a.csv', '--delimiter', 'tab']), { delimiter: '\t' })
  for (const [file, format, delimiter] of [
    ['a.CSV', 'csv', ','],
    ['a.tsv', 'csv', '\t'],
    ['a.ndjson', 'ndjson', ','],
    ['dir/a.jsonl', 'ndjson', ','],
  ] as const)
    t.match(parseProfileArgs(['--input', file]), { format, delimiter }, file)
  t.match(parseProfileArgs(['--input', 'a.tsv', '--delimiter', ',']), { delimiter: ',' })
})

t.test('--model and its store: a directory (relative to here), a file: URL, an http(s) base URL', async (t) => {
  t.match(parseProfileArgs(['--input', 'a.csv', '--model', 'iris', '--version', '2']), { model: 'iris', version: '2', store: { root: DEFAULT_STORE_ROOT } })
  t.match(parseProfileArgs(['--input', 'a.csv', '--model', 'iris', '--target', 'species']), { model: 'iris', target: 'species' })
  t.same(parseProfileArgs(['--input', 'a.csv', '--model', 'm', '--store', 'models']).store, { kind: 'directory', root: resolve('models') })
  t.same(parseProfileArgs(['--input', 'a.csv', '--model', 'm', '--store', '/srv/models']).store, { kind: 'directory', root: '/srv/models' })
  t.same(parseProfileArgs(['--input', 'a.csv', '--model', 'm', '--store', 'file:///srv/models']).store, { kind: 'directory', root: '/srv/models' })
  const http = parseProfileArgs(['--input', 'a.csv', '--model', 'm', '--store', 'https://artifacts.internal/svc']).store
  t.equal(http.kind === 'http' && http.url.href, 'https://artifacts.internal/svc')
})

t.test('mistakes are usage errors that say what was expected', async (t) => {
  const cases: Array<[string[], string | RegExp]> = [
    [[], '--input is required'],
    [['--input', ''], '--input is required'],
    [['--input', 'a.csv', '--bogus'], "Unknown option '--bogus'"],
    [['--input', 'a.csv', 'extra'], /^Unexpected argument 'extra'/],
    [['--input', 'a.txt'], '--input a.txt: the extension does not say the format (.csv, .tsv, .ndjson, .jsonl); add --format csv or --format ndjson'],
    [['--input', 'a.csv', '--format', 'xlsx'], '--format xlsx: expected csv or ndjson'],
    [['--input', 'a.ndjson', '--delimiter', ';'], '--delimiter applies to CSV only'],
    [['--input', 'a.csv', '--delimiter', ';;'], '--delimiter ";;": expected one character other than a quote or a line break, or tab'],
    [['--input', 'a.csv', '--delimiter', '"'], '--delimiter "\\"": expected one character other than a quote or a line break, or tab'],
    [['--input', 'a.csv', '--model', ''], '--model needs a name'],
    [['--input', 'a.csv', '--model', 'iris', '--version', ''], '--version needs a version'],
    [['--input', 'a.csv', '--version', '1'], '--version applies with --model only'],
    [['--input', 'a.csv', '--store', '/srv'], '--store applies with --model only'],
    [['--input', 'a.csv', '--target', 'y'], '--target applies with --model only'],
    [['--input', 'a.csv', '--model', 'iris', '--target', ''], '--target needs a column'],
    [['--input', 'a.csv', '--model', 'iris', '--schema', 'a'], "--schema does not go with --model: the model's inputs are the columns"],
    [['--input', 'a.csv', '--model', 'iris', '--exclude', 'a'], "--exclude does not go with --model: the model's inputs are the columns"],
    [['--input', 'a.csv', '--schema', 'a', '--exclude', 'b'], '--exclude does not go with --schema: --schema lists the columns'],
    [['--input', 'a.csv', '--schema', ' , '], '--schema names no column'],
    [['--input', 'a.csv', '--schema', 'a,b:text'], '--schema b:text: a type is numerical or categorical'],
    [['--input', 'a.csv', '--schema', 'a,b,a:numerical'], '--schema names a twice'],
    [['--input', 'a.csv', '--bins', '1'], '--bins 1: expected an integer from 2 to 1000'],
    [['--input', 'a.csv', '--bins', '2.5'], '--bins 2.5: expected an integer from 2 to 1000'],
    [['--input', 'a.csv', '--max-levels', '0'], '--max-levels 0: expected an integer from 1 to 1000000'],
    [
      ['--input', 'a.csv', '--model', 'm', '--store', ''],
      '--store : expected a directory, a file:///path URL, an http(s):// base URL without query or fragment, or s3://bucket/prefix',
    ],
    [
      ['--input', 'a.csv', '--model', 'm', '--store', 'ftp://x/'],
      '--store ftp://x/: expected a directory, a file:///path URL, an http(s):// base URL without query or fragment, or s3://bucket/prefix',
    ],
    [['--input', 'data/a.csv', '--output', './data/../data/a.csv'], '--output ./data/../data/a.csv is the input file'],
  ]
  for (const [args, message] of cases) {
    const error = t.throws(() => parseProfileArgs(args), args.join(' ')) as Error
    t.type(error, ProfileUsageError)
    if (typeof message === 'string') t.equal(error.message, message)
    else t.match(error.message, message)
  }
})

/** Runs the command in-process: its exit status and what it wrote. */
const run = async (args: readonly string[]) => {
  let stdout = ''
  let stderr = ''
  const code = await runProfileCommand(args, { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) })
  return { code, stdout, stderr }
}

t.test('--help prints the usage and exits 0', async (t) => {
  t.same(await run(['--input', 'x.csv', '--help']), { code: 0, stdout: PROFILE_USAGE, stderr: '' })
  t.equal((await run(['-h'])).stdout, PROFILE_USAGE)
  t.match(PROFILE_USAGE, /^Usage: svc profile --input FILE \[options\]\n/)
})

t.test('a profile to standard output, or written whole to a file, with a summary line on stderr', async (t) => {
  const dir = t.testdir({ 'train.csv': 'x,colour\n1,red\n2,\n3,blue\n4,red\n' })
  const input = join(dir, 'train.csv')
  const out = await run(['--input', input, '--bins', '2', '--drop-missing'])
  t.equal(out.code, 0)
  t.same(parseProfile(out.stdout), {
    format_version: 1,
    rows: 3,
    features: [
      { name: 'x', type: 'numerical', edges: [3], proportions: [1 / 3, 2 / 3], min: 1, max: 4 },
      { name: 'colour', type: 'categorical', levels: ['blue', 'red'], proportions: [1 / 3, 2 / 3] },
    ],
  })
  const [summary, ...warning] = out.stderr.split('\n')
  t.equal(
    summary,
    `svc profile: wrote the profile to standard output: 3 rows of ${input} (1 more left out for a missing value), 1 numerical and 1 categorical columns`,
  )
  t.match(warning, [
    /^svc profile: warning: too many bins for 3 rows: /,
    '  58.5 % for x (2 bins)',
    'svc profile: even --bins 2 leaves 58.5 %: profile 77 rows or more.',
    '',
  ])

  const output = join(dir, 'profile.json')
  writeFileSync(output, 'an older profile')
  const file = await run(['--input', input, '--bins', '2', '--drop-missing', '--output', output])
  t.same(file, { code: 0, stdout: '', stderr: out.stderr.replace('the profile to standard output', output) })
  t.equal(readFileSync(output, 'utf8'), out.stdout, 'replaced')
  t.same(readdirSync(dir).sort(), ['profile.json', 'train.csv'], 'no temporary file left')

  const listed = await run(['--input', input, '--schema', 'colour,x:categorical', '--drop-missing'])
  t.same(
    parseProfile(listed.stdout).features.map(({ name, type }) => `${name}:${type}`),
    ['colour:categorical', 'x:categorical'],
  )
})

t.test('with --model: the inputs and the predictions, checked as a runtime will check them', async (t) => {
  const dir = t.testdir({ 'iris.csv': 'sepal_length,sepal_width,petal_length,petal_width\n5.1,3.5,1.4,0.2\n6.5,2.8,4.6,1.5\n' })
  const result = await run(['--input', join(dir, 'iris.csv'), '--model', 'iris', '--bins', '3'])
  t.equal(result.code, 0, result.stderr)
  const profile = parseProfile(result.stdout)
  t.same(profile.predictions, { name: 'species', type: 'categorical', levels: ['setosa', 'versicolor', 'virginica'], proportions: [0.5, 0.5, 0] })
  t.match(result.stderr, /, 4 numerical and 0 categorical columns, predictions of iris version 1\nsvc profile: warning: too many bins for 2 rows: /)
})

t.test('with --target: the quality in the profile and, to four digits, on the summary line; an input is no target', async (t) => {
  // The shipped iris model answers setosa, versicolor and virginica on these rows.
  const header = 'sepal_length,sepal_width,petal_length,petal_width,truth'
  const dir = t.testdir({ 'iris.csv': `${header}\n5.1,3.5,1.4,0.2,setosa\n6.5,2.8,4.6,1.5,versicolor\n7.7,3.0,6.1,2.3,versicolor\n` })
  const result = await run(['--input', join(dir, 'iris.csv'), '--model', 'iris', '--bins', '2', '--target', 'truth'])
  t.equal(result.code, 0, result.stderr)
  const { quality } = parseProfile(result.stdout)
  t.equal(quality?.['accuracy'], 2 / 3)
  const logLoss = quality?.['log_loss'] as number
  t.ok(logLoss > Math.log(3) / 3, `log_loss ${logLoss}: the wrong answer costs more than a guess would`)
  t.match(result.stderr, `predictions of iris version 1 scored against truth: accuracy 0.6667, log_loss ${Number(logLoss.toPrecision(4))}\n`)
  t.same(await run(['--input', join(dir, 'iris.csv'), '--model', 'iris', '--target', 'sepal_width']), {
    code: 2,
    stdout: '',
    stderr: 'svc profile: --target sepal_width is an input of model iris: name the column of true answers\nsvc profile --help lists the options.\n',
  })
})

t.test('exit 2 for a bad command line or bad input, 1 for a model or a file that fails', async (t) => {
  const dir = t.testdir({ 'train.csv': 'a,b,c,d,e\n1,2,3,4,5\n1,2,3,4\n', 'ok.csv': 'a\n1\n' })
  t.same(await run(['--input', join(dir, 'x.csv'), '--bins', '0']), {
    code: 2,
    stdout: '',
    stderr: 'svc profile: --bins 0: expected an integer from 2 to 1000\nsvc profile --help lists the options.\n',
  })
  t.same(await run(['--input', join(dir, 'train.csv')]), {
    code: 2,
    stdout: '',
    stderr: `svc profile: ${join(dir, 'train.csv')}:3: expected 5 fields, found 4\n`,
  })
  t.same(await run(['--input', join(dir, 'nope.csv')]), { code: 2, stdout: '', stderr: `svc profile: ${join(dir, 'nope.csv')}: no such file\n` })
  const model = await run(['--input', join(dir, 'ok.csv'), '--model', 'tulips'])
  t.equal(model.code, 1)
  t.match(model.stderr, /^svc profile: model tulips: tulips\/manifest\.json: not found in the model store/)
  const output = join(dir, 'missing-dir', 'profile.json')
  t.same(await run(['--input', join(dir, 'ok.csv'), '--output', output]), { code: 1, stdout: '', stderr: `svc profile: cannot write ${output}: ENOENT\n` })
  t.notOk(existsSync(join(dir, 'missing-dir')))
  const badModelInput = await run(['--input', join(dir, 'ok.csv'), '--model', 'iris'])
  t.same(badModelInput, {
    code: 2,
    stdout: '',
    stderr: `svc profile: ${join(dir, 'ok.csv')}:1: the header has no column "sepal_length" (an input of model iris)\n`,
  })
})
