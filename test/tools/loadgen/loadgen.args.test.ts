import t from 'tap'
import { LoadgenUsageError } from '../../../lib/tools/loadgen/errors.js'
import { LOADGEN_USAGE, parseLoadgenArgs } from '../../../lib/tools/loadgen/loadgen.js'

t.test('defaults, and every option read', async (t) => {
  const defaults = parseLoadgenArgs(['--model', 'iris'])
  t.match(defaults, { model: 'iris', rows: undefined, shift: 0, features: [], rate: 50, durationMs: 60_000, batch: 1, concurrency: 32, timeoutMs: 10_000 })
  t.same(
    defaults.urls.map((url) => url.href),
    ['http://127.0.0.1:8000/'],
  )
  t.ok(Number.isSafeInteger(defaults.seed) && defaults.seed >= 0, 'a random seed when none is given')
  const all = parseLoadgenArgs([
    '--model',
    'cars',
    '--rows',
    'data/cars.csv',
    '--url',
    'https://svc.internal/base/',
    '--shift=-0.5',
    '--features',
    'year, weight_in_lbs,',
    '--rate',
    '2.5',
    '--duration',
    '2m',
    '--batch',
    '10',
    '--concurrency',
    '4',
    '--seed',
    '0',
    '--timeout',
    '250ms',
  ])
  t.match(all, {
    model: 'cars',
    rows: { path: 'data/cars.csv', file: 'data/cars.csv', format: 'csv', delimiter: ',' },
    shift: -0.5,
    features: ['year', 'weight_in_lbs'],
    rate: 2.5,
    durationMs: 120_000,
    batch: 10,
    concurrency: 4,
    seed: 0,
    timeoutMs: 250,
  })
  t.same(
    all.urls.map((url) => url.href),
    ['https://svc.internal/base/'],
  )
  for (const [text, ms] of [
    ['90', 90_000],
    ['1.5s', 1500],
    ['500ms', 500],
    ['1h', 3_600_000],
  ] as const)
    t.equal(parseLoadgenArgs(['--model', 'm', '--duration', text]).durationMs, ms, text)
})

t.test('--feedback, and the label column and noise that go with it', async (t) => {
  t.match(parseLoadgenArgs(['--model', 'iris']), { feedback: false, label: undefined, labelNoise: 0 }, 'off by default')
  t.match(parseLoadgenArgs(['--model', 'iris', '--feedback']), { feedback: true, label: undefined, labelNoise: 0 }, "the model's output, no noise")
  t.match(parseLoadgenArgs(['--model', 'cars', '--feedback', '--label', ' mpg ', '--label-noise', '0.3']), { feedback: true, label: 'mpg', labelNoise: 0.3 })
  for (const share of ['0', '1', '0.05'])
    t.equal(parseLoadgenArgs(['--model', 'm', '--feedback', '--label-noise', share]).labelNoise, Number(share), `--label-noise ${share}`)
})

t.test('--rows: the format from the extension, as svc profile reads it', async (t) => {
  const rows = (file: string) => parseLoadgenArgs(['--model', 'm', '--rows', file]).rows
  t.same(rows('a.csv'), { path: 'a.csv', file: 'a.csv', format: 'csv', delimiter: ',' })
  t.same(rows('b.TSV'), { path: 'b.TSV', file: 'b.TSV', format: 'csv', delimiter: '\t' }, 'a tab-separated file, whatever the case')
  t.same(rows('c.ndjson'), { path: 'c.ndjson', file: 'c.ndjson', format: 'ndjson', delimiter: ',' })
  t.same(rows('d.jsonl'), { path: 'd.jsonl', file: 'd.jsonl', format: 'ndjson', delimiter: ',' })
})

t.test('--url: several instances, comma-separated, in order', async (t) => {
  const { urls } = parseLoadgenArgs(['--model', 'm', '--url', 'http://10.0.0.1:8000, http://10.0.0.2:8000/,https://b.example/svc'])
  t.same(
    urls.map((url) => url.href),
    ['http://10.0.0.1:8000/', 'http://10.0.0.2:8000/', 'https://b.example/svc'],
  )
})

t.test('mistakes are usage errors that say what was expected', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [[], /^--model is required$/],
    [['--model', ''], /^--model is required$/],
    [['--model', 'iris', '--bogus'], /^Unknown option '--bogus'$/],
    [['--model', 'iris', 'extra'], /Unexpected argument 'extra'/],
    [['--model', 'iris', '--url', 'ftp://x'], /^--url ftp:\/\/x: "ftp:\/\/x" is not an http:\/\/ or https:\/\/ URL \(several are comma-separated\)$/],
    [['--model', 'iris', '--url', 'not a url'], /^--url not a url: "not a url" is not an http/],
    [['--model', 'iris', '--url', 'http://a:1,'], /^--url http:\/\/a:1,: "" is not an http:\/\/ or https:\/\/ URL/],
    [['--model', 'iris', '--url', 'http://a:1, http://b:2,http://a:1/'], /^--url http:\/\/a:1, http:\/\/b:2,http:\/\/a:1\/: names http:\/\/a:1\/ twice$/],
    [['--model', 'iris', '--rows', ''], /^--rows needs a file$/],
    [['--model', 'iris', '--rows', 'rows.txt'], /^--rows rows\.txt: the extension does not say the format: \.csv, \.tsv, \.ndjson or \.jsonl$/],
    [['--model', 'iris', '--rows', 'rows'], /^--rows rows: the extension does not say the format/],
    [['--model', 'iris', '--rate', '0'], /^--rate 0: expected a rate above 0 and at most 100000$/],
    [['--model', 'iris', '--rate', ''], /^--rate : expected a rate/],
    [['--model', 'iris', '--shift', '-1'], /^Option '--shift' argument is ambiguous[\s\S]*'--shift=-XYZ'/],
    [['--model', 'iris', '--shift', 'big'], /^--shift big: expected a number of standard deviations$/],
    [['--model', 'iris', '--batch', '1.5'], /^--batch 1.5: expected a positive integer$/],
    [['--model', 'iris', '--concurrency', '0'], /^--concurrency 0: expected a positive integer$/],
    [['--model', 'iris', '--seed=-1'], /^--seed -1: expected a non-negative integer$/],
    [['--model', 'iris', '--duration', 'forever'], /^--duration forever: expected a duration of at least 1 ms, such as 90s, 2m or 500ms$/],
    [['--model', 'iris', '--timeout', '0s'], /^--timeout 0s: expected a duration of at least 1 ms/],
    [['--model', 'iris', '--label', 'species'], /^--label and --label-noise go with --feedback$/],
    [['--model', 'iris', '--label-noise', '0.3'], /^--label and --label-noise go with --feedback$/],
    [['--model', 'iris', '--feedback', '--label', ' '], /^--label needs the name of a column$/],
    [['--model', 'iris', '--feedback', '--label-noise', '1.5'], /^--label-noise 1.5: expected a share from 0 to 1, or VERSION=share$/],
    [['--model', 'iris', '--feedback', '--label-noise=-0.1'], /^--label-noise -0.1: expected a share from 0 to 1, or VERSION=share$/],
    [['--model', 'iris', '--feedback', '--label-noise', 'lots'], /^--label-noise lots: expected a share from 0 to 1, or VERSION=share$/],
    [['--model', 'iris', '--feedback', '--label-noise', '0.1,'], /^--label-noise : expected a share from 0 to 1, or VERSION=share$/],
    [['--model', 'iris', '--feedback', '--label-noise', '=0.3'], /^--label-noise =0.3: expected a share from 0 to 1, or VERSION=share$/],
    [['--model', 'iris', '--feedback', '--label-noise', '2='], /^--label-noise 2=: expected a share from 0 to 1, or VERSION=share$/],
    [['--model', 'iris', '--feedback', '--label-noise', '2=2'], /^--label-noise 2=2: expected a share from 0 to 1, or VERSION=share$/],
    [['--model', 'iris', '--feedback', '--label-noise', '0.1', '--label-noise', '0.2'], /^--label-noise 0.1 0.2: gives the share for every version twice$/],
    [['--model', 'iris', '--feedback', '--label-noise', '2=0.1,2=0.2'], /^--label-noise 2=0.1,2=0.2: gives version 2's share twice$/],
    [['--model', 'iris', '--version', ' '], /^--version needs a version$/],
    [['--model', 'iris', '--version'], /^Option '--version <value>' argument missing$/],
    [['--model', 'iris', '--header', 'X-Team'], /^--header X-Team: expected a value after the colon, on one line$/],
    [['--model', 'iris', '--header', 'X-Team:  '], /^--header X-Team: expected a value after the colon, on one line$/],
    [['--model', 'iris', '--header', 'X-Team: a\r\nX-Evil: b'], /^--header X-Team: expected a value after the colon, on one line$/],
    [['--model', 'iris', '--header', ': value'], /^--header "": expected NAME:VALUE, NAME a header name/],
    [['--model', 'iris', '--header', 'X Team: value'], /^--header "X Team": expected NAME:VALUE/],
    [['--model', 'iris', '--header', 'Content-Type: text/plain'], /^--header Content-Type: loadgen sets it \(or the connection does\); it cannot be given$/],
    [['--model', 'iris', '--header', 'host: svc'], /^--header host: loadgen sets it/],
    [['--model', 'iris', '--header', 'X-A: 1', '--header', 'x-a: 2'], /^--header x-a: given twice$/],
    [['--model', 'iris', '--token', ''], /^--token needs a token$/],
    [['--model', 'iris', '--token', 'short'], /^--token: the token is shorter than 16 characters \(one of the instances' SVC_API_TOKENS\)$/],
    [['--model', 'iris', '--token', 'a token with spaces in it'], /^--token: the token has characters outside/],
    [
      ['--model', 'iris', '--token', 'abcdefghijklmnopqrstuvwxyz', '--header', 'Authorization: Bearer x'],
      /^--token and --header Authorization: give one of them$/,
    ],
    [['--model', 'iris', '--feedback=yes'], /^Option '--feedback' does not take an argument$/],
  ]
  for (const [args, message] of cases) {
    const error = t.throws(() => parseLoadgenArgs(args), args.join(' ')) as Error
    t.type(error, LoadgenUsageError)
    t.match(error.message, message)
  }
})

t.test('--version, --header, --token and --label-noise by version are read', async (t) => {
  const parsed = parseLoadgenArgs([
    '--model',
    'iris',
    '--version',
    ' 2 ',
    '--header',
    'X-Team: ml-platform',
    '--header',
    'X-Trace:a:b',
    '--token',
    'abcdefghijklmnopqrstuvwxyz',
    '--feedback',
    '--label-noise',
    '0.05, 2=0.3',
    '--label-noise',
    'v1.1-rc=1',
  ])
  t.equal(parsed.version, '2')
  t.same(parsed.headers, { 'x-team': 'ml-platform', 'x-trace': 'a:b', authorization: 'Bearer abcdefghijklmnopqrstuvwxyz' })
  t.equal(parsed.labelNoise, 0.05)
  t.same(
    [...parsed.versionNoise],
    [
      ['2', 0.3],
      ['v1.1-rc', 1],
    ],
  )
  const plain = parseLoadgenArgs(['--model', 'iris', '--feedback', '--label-noise', '2=0.3'])
  t.equal(plain.labelNoise, 0, 'a version named alone leaves every other version without noise')
  t.match(parseLoadgenArgs(['--model', 'iris']), { version: undefined, headers: {} })
})

t.test('--help lists every option, the rows file and several URLs among them', async (t) => {
  for (const flag of [
    '--model NAME',
    '--rows FILE',
    '--url URL[,URL…]',
    '--shift K',
    '--features A,B',
    '--rate N',
    '--duration D',
    '--batch N',
    '--concurrency N',
    '--seed N',
    '--timeout D',
    '--feedback',
    '--label COLUMN',
    '--label-noise P',
    '--version V',
    '--header NAME:VALUE',
    '--token T',
  ])
    t.ok(LOADGEN_USAGE.includes(`\n  ${flag} `), flag)
  t.match(LOADGEN_USAGE, /CSV, TSV or NDJSON/)
  t.match(LOADGEN_USAGE, /request i to instance i mod n/)
  t.ok(
    LOADGEN_USAGE.split('\n').every((line) => line.length <= 100),
    'lines of at most 100 columns',
  )
})
