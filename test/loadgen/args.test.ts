import t from 'tap'
import { LoadgenUsageError, parseLoadgenArgs } from '../../lib/loadgen/loadgen.js'

t.test('defaults, and every option read', async (t) => {
  const defaults = parseLoadgenArgs(['--model', 'iris'])
  t.match(defaults, { model: 'iris', shift: 0, features: [], rate: 50, durationMs: 60_000, batch: 1, concurrency: 32, timeoutMs: 10_000 })
  t.equal(defaults.url.href, 'http://127.0.0.1:8000/')
  t.ok(Number.isSafeInteger(defaults.seed) && defaults.seed >= 0, 'a random seed when none is given')
  const all = parseLoadgenArgs([
    '--model',
    'cars',
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
    shift: -0.5,
    features: ['year', 'weight_in_lbs'],
    rate: 2.5,
    durationMs: 120_000,
    batch: 10,
    concurrency: 4,
    seed: 0,
    timeoutMs: 250,
  })
  t.equal(all.url.href, 'https://svc.internal/base/')
  for (const [text, ms] of [
    ['90', 90_000],
    ['1.5s', 1500],
    ['500ms', 500],
    ['1h', 3_600_000],
  ] as const)
    t.equal(parseLoadgenArgs(['--model', 'm', '--duration', text]).durationMs, ms, text)
})

t.test('mistakes are usage errors that say what was expected', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [[], /^--model is required$/],
    [['--model', ''], /^--model is required$/],
    [['--model', 'iris', '--bogus'], /^Unknown option '--bogus'$/],
    [['--model', 'iris', 'extra'], /Unexpected argument 'extra'/],
    [['--model', 'iris', '--url', 'ftp://x'], /^--url ftp:\/\/x: expected an http:\/\/ or https:\/\/ URL$/],
    [['--model', 'iris', '--url', 'not a url'], /^--url not a url: expected/],
    [['--model', 'iris', '--rate', '0'], /^--rate 0: expected a rate above 0 and at most 100000$/],
    [['--model', 'iris', '--rate', ''], /^--rate : expected a rate/],
    [['--model', 'iris', '--shift', '-1'], /^Option '--shift' argument is ambiguous[\s\S]*'--shift=-XYZ'/],
    [['--model', 'iris', '--shift', 'big'], /^--shift big: expected a number of standard deviations$/],
    [['--model', 'iris', '--batch', '1.5'], /^--batch 1.5: expected a positive integer$/],
    [['--model', 'iris', '--concurrency', '0'], /^--concurrency 0: expected a positive integer$/],
    [['--model', 'iris', '--seed=-1'], /^--seed -1: expected a non-negative integer$/],
    [['--model', 'iris', '--duration', 'forever'], /^--duration forever: expected a duration of at least 1 ms, such as 90s, 2m or 500ms$/],
    [['--model', 'iris', '--timeout', '0s'], /^--timeout 0s: expected a duration of at least 1 ms/],
  ]
  for (const [args, message] of cases) {
    const error = t.throws(() => parseLoadgenArgs(args), args.join(' ')) as Error
    t.type(error, LoadgenUsageError)
    t.match(error.message, message)
  }
})
