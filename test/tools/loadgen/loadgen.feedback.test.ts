// svc loadgen --feedback against real instances sharing a secret: each answer's labels go to the
// next instance, which scores them; its /metrics hold what the rows' labels imply, counted here by
// hand from the seed's order and the model's own answers.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { mulberry32 } from '../../../lib/tools/loadgen/random.js'
import { createReplay } from '../../../lib/tools/loadgen/replay.js'
import { isCleanRun, runLoadgen } from '../../../lib/tools/loadgen/loadgen.js'
import { startApp, type Running } from '../../fixtures/app.js'
import { loadgenOptions } from '../../fixtures/loadgen.js'
import { tempTree } from '../../fixtures/model-store.js'
import { ARTIFACTS } from '../../fixtures/models.js'
import { closedPort } from '../../fixtures/tcp.js'

const SECRET = { SVC_FEEDBACK_SECRET: 'the fleet secret, 32 bytes long!' }
const ROWS = readFileSync(new URL('iris/1/reference-rows.csv', ARTIFACTS), 'utf8').trim().split('\n').slice(1)
const SPECIES = ROWS.map((line) => line.split(',')[4] as string)
const FEATURES = ['sepal_length', 'sepal_width', 'petal_length', 'petal_width']

/** The label values each sample of `name` at `running` has, with its value: `{labels: value}` as text keys. */
const series = async (running: Running, name: string): Promise<Map<string, number>> => {
  const text = await (await fetch(`${running.base}/metrics`)).text()
  const found = new Map<string, number>()
  for (const [, labels, value] of text.matchAll(new RegExp(`^${name}\\{(.*)\\} (\\S+)$`, 'gm'))) found.set(labels as string, Number(value))
  return found
}

/** Confusion counts of iris version 1 at `running`, by "actual>predicted", zeros left out. */
const confusion = async (running: Running): Promise<Record<string, number>> => {
  const counts: Record<string, number> = {}
  for (const [labels, value] of await series(running, 'svc_model_feedback_confusion_total')) {
    const actual = /actual="(\w+)"/.exec(labels)?.[1]
    const predicted = /predicted="(\w+)"/.exec(labels)?.[1]
    if (value > 0) counts[`${actual}>${predicted}`] = value
  }
  return counts
}

const feedbackRows = async (running: Running): Promise<number> =>
  [...(await series(running, 'svc_model_feedback_rows_total')).values()].reduce((a, b) => a + b, 0)

/** What the model answers for every shipped row, in file order. */
const answers = async (running: Running): Promise<string[]> => {
  const instances = ROWS.map((line) =>
    Object.fromEntries(
      line
        .split(',')
        .slice(0, 4)
        .map((cell, j) => [FEATURES[j], Number(cell)]),
    ),
  )
  const response = await fetch(`${running.base}/api/v1/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'iris', instances }),
  })
  return ((await response.json()) as { outputs: [{ data: string[] }] }).outputs[0].data
}

/** The rows of request `i` (of `batch` rows), as the seed orders them: indices into the file. */
const picksOf = (seed: number, requests: number, batch: number, rows = ROWS.length): number[][] => {
  const next = createReplay(rows, mulberry32(seed))
  return Array.from({ length: requests }, () => Array.from({ length: batch }, next))
}

t.test('two instances: the labels of what A answered are scored on B and the other way round, as the rows say', async (t) => {
  const [a, b] = [await startApp(t, SECRET), await startApp(t, SECRET)] as [Running, Running]
  const predicted = await answers(a)
  const lines: string[] = []
  // 50 req/s for 0.1 s: 5 requests of 50 rows, A answers 0, 2 and 4 (150 rows), B 1 and 3 (100).
  const options = loadgenOptions(a.base, { urls: [new URL(a.base), new URL(b.base)], rate: 50, durationMs: 100, batch: 50, seed: 5, feedback: true })
  const summary = await runLoadgen(options, (line) => lines.push(line))
  t.same([summary.sent, summary.ok], [5, 5])
  // Per instance 150 and 100 labels: 64 + 64 + 22 and 64 + 36.
  t.same(summary.feedback, { labels: 250, requests: 5, accepted: 250, refused: {}, failed: 0, untokened: 0, byStatus: { 200: 5 } })
  t.ok(isCleanRun(summary))
  t.match(lines[0], /, seed 5; labels from species to the next instance$/)
  t.equal(lines.at(-1), 'loadgen: labels: sent 250 in 5 requests, 250 accepted, 0 refused, 0 failed; 200: 5')
  t.same([await feedbackRows(b), await feedbackRows(a)], [150, 100], "B scored A's 150 rows, A B's 100")

  const picks = picksOf(5, 5, 50)
  const expected = (requests: readonly number[]): Record<string, number> => {
    const counts: Record<string, number> = {}
    for (const i of requests.flatMap((r) => picks[r] as number[])) {
      const key = `${SPECIES[i]}>${predicted[i]}`
      counts[key] = (counts[key] ?? 0) + 1
    }
    return counts
  }
  t.same(await confusion(b), expected([0, 2, 4]), "B's confusion: the labels and answers of the rows A answered")
  t.same(await confusion(a), expected([1, 3]), "A's: those of the rows B answered")
  const wrong = Object.entries(await confusion(b)).filter(([key]) => key.split('>')[0] !== key.split('>')[1])
  t.ok(wrong.length > 0, 'the model is not always right on its training rows, and the counts show where')
})

t.test('--label-noise 1: every label is wrong, so realized accuracy is at most what the model gets wrong', async (t) => {
  const [a, b] = [await startApp(t, SECRET), await startApp(t, SECRET)] as [Running, Running]
  const predicted = await answers(a)
  const options = loadgenOptions(a.base, {
    urls: [new URL(a.base), new URL(b.base)],
    rate: 50,
    durationMs: 100,
    batch: 50,
    seed: 5,
    feedback: true,
    labelNoise: 1,
  })
  const lines: string[] = []
  const summary = await runLoadgen(options, (line) => lines.push(line))
  t.equal(summary.feedback?.accepted, 250)
  t.match(lines[0], /; labels from species to the next instance, 100 % of them wrong$/)
  t.equal(await feedbackRows(b), 150)

  // A wrong label matches the answer only where the answer was wrong too: of A's 150 rows, those.
  const picks = picksOf(5, 5, 50)
  const answeredByA = [0, 2, 4].flatMap((r) => picks[r] as number[])
  const modelWrong = answeredByA.filter((i) => predicted[i] !== SPECIES[i]).length
  const counts = await confusion(b)
  const right = Object.entries(counts)
    .filter(([key]) => key.split('>')[0] === key.split('>')[1])
    .reduce((sum, [, n]) => sum + n, 0)
  t.ok(right <= modelWrong, `${right} of 150 right with every label wrong, the model wrong on ${modelWrong} of them`)
  t.ok(modelWrong < 10, 'so realized accuracy is near 0')
  // Where the answer was right, the wrong label is off it: every such row counts as a mistake.
  t.equal(
    Object.values(counts).reduce((sum, n) => sum + n, 0),
    150,
  )
})

t.test('what goes wrong with the labels is counted and makes the run unclean', async (t) => {
  const a = await startApp(t, SECRET)
  const other = await startApp(t, { SVC_FEEDBACK_SECRET: 'another fleet, another secret!!!' })
  const off = await startApp(t)
  const small = await startApp(t, { ...SECRET, SVC_MAX_BATCH: '40' })
  const down = `http://127.0.0.1:${await closedPort()}`
  const run = async (urls: readonly string[], requests = 2, labelNoise = 0) => {
    const lines: string[] = []
    const options = loadgenOptions(a.base, {
      urls: urls.map((url) => new URL(url)),
      rate: 50,
      durationMs: requests * 20,
      batch: 40,
      seed: 1,
      feedback: true,
      labelNoise,
    })
    const summary = await runLoadgen(options, (line) => lines.push(line))
    t.notOk(isCleanRun(summary), urls.join(' '))
    return { feedback: summary.feedback, first: lines[0], line: lines.at(-1) }
  }

  const refused = await run([a.base, other.base], 2, 0.07)
  t.match(refused.first, /; labels from species to the next instance, 7 % of them wrong$/, 'the share as a user wrote it, not 7.000000000000001')
  t.same(
    refused.feedback,
    { labels: 80, requests: 2, accepted: 0, refused: { invalid_token: 80 }, failed: 0, untokened: 0, byStatus: { 200: 2 } },
    'another secret',
  )
  t.equal(refused.line, 'loadgen: labels: sent 80 in 2 requests, 0 accepted, 80 refused (invalid_token: 80), 0 failed; 200: 2')

  const untokened = await run([off.base])
  t.same(untokened.feedback, { labels: 0, requests: 0, accepted: 0, refused: {}, failed: 0, untokened: 80, byStatus: {} }, 'feedback off')
  t.equal(
    untokened.line,
    'loadgen: labels: sent 0 in 0 requests, 0 accepted, 0 refused, 0 failed, 80 rows answered without a token (is SVC_FEEDBACK_SECRET set?)',
  )

  // 4 requests of 40 rows to one instance: 160 labels, 64 + 64 then 32; 64 is over its SVC_MAX_BATCH of 40.
  const tooMany = await run([small.base], 4)
  t.same(tooMany.feedback, { labels: 160, requests: 3, accepted: 32, refused: {}, failed: 128, untokened: 0, byStatus: { 200: 1, 400: 2 } }, 'a 400')

  const unreachable = await run([a.base, down])
  t.match(
    unreachable.feedback,
    { labels: 40, requests: 1, accepted: 0, failed: 40, byStatus: { connection_error: 1 } },
    "A's labels, to an instance that is down",
  )
})

t.test("a regressor's truths from the column --label names: the errors scored are those of the rows sent", async (t) => {
  const running = await startApp(t, SECRET)
  const [header, ...lines] = readFileSync(new URL('cars/1/reference-rows.csv', ARTIFACTS), 'utf8').trim().split('\n') as [string, ...string[]]
  const root = await tempTree(t, { 'cars.csv': `${header.replace('miles_per_gallon', 'mpg')}\n${lines.join('\n')}\n` })
  const cells = lines.map((line) => line.split(','))
  const inputs = header.split(',').slice(0, 7)
  const response = await fetch(`${running.base}/api/v1/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'cars',
      instances: cells.map((row) => Object.fromEntries(inputs.map((name, j) => [name, j < 6 ? Number(row[j]) : row[j]]))),
    }),
  })
  const predicted = ((await response.json()) as { outputs: [{ data: number[] }] }).outputs[0].data
  const file = join(root, 'cars.csv')
  const options = loadgenOptions(running.base, {
    model: 'cars',
    rows: { path: file, file, format: 'csv', delimiter: ',' },
    rate: 50,
    durationMs: 40,
    batch: 30,
    seed: 9,
    feedback: true,
    label: 'mpg',
  })
  const printed: string[] = []
  const summary = await runLoadgen(options, (line) => printed.push(line))
  t.same(
    summary.feedback,
    { labels: 60, requests: 1, accepted: 60, refused: {}, failed: 0, untokened: 0, byStatus: { 200: 1 } },
    'one instance: its own labels',
  )
  t.match(printed[0], /; labels from mpg to the same instance$/)
  const sent = picksOf(9, 2, 30, lines.length).flat()
  const absolute = sent.reduce((sum, i) => sum + Math.abs((predicted[i] as number) - Number(cells[i]?.[7])), 0)
  const scored = await series(running, 'svc_model_feedback_absolute_error_sum')
  t.equal(scored.size, 1)
  t.ok(Math.abs([...scored.values()][0]! - absolute) < 1e-9, `Σ|prediction − truth| ${[...scored.values()][0]} = ${absolute}, counted by hand`)
  t.equal(await feedbackRows(running), 60)
})
