// The rows svc loadgen replays: a --rows file read for a model's inputs, and the rows svc ships.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { LoadgenUsageError } from '../../../lib/tools/loadgen/errors.js'
import type { LabelColumn } from '../../../lib/tools/loadgen/labels.js'
import { readRows, shippedRows } from '../../../lib/tools/loadgen/rows.js'
import type { Input } from '../../../lib/models/runtime.js'
import { ProfileInputError } from '../../../lib/tools/profile/errors.js'
import type { TableSource } from '../../../lib/tools/profile/table.js'
import { tempTree } from '../../fixtures/model-store.js'
import { ARTIFACTS, rawArtifact } from '../../fixtures/models.js'

const INPUTS: readonly Input[] = [
  { name: 'x', type: 'numerical' },
  { name: 'colour', type: 'categorical', levels: ['red', 'green'] },
]

const source = (root: string, file: string): TableSource => ({
  path: join(root, file),
  file,
  format: file.endsWith('.csv') || file.endsWith('.tsv') ? 'csv' : 'ndjson',
  delimiter: file.endsWith('.tsv') ? '\t' : ',',
})

t.test("CSV, TSV and NDJSON rows come out as the model's inputs, other columns left behind", async (t) => {
  const root = await tempTree(t, {
    'rows.csv': 'id,colour,x,label\n1,red,1.5,a\n2,green,-2e1,b\n3,,,c\n',
    'rows.tsv': 'colour\tx\nred\t1.5\n',
    'rows.ndjson': '{"x": 1.5, "colour": "red", "id": 1}\n{"x": null, "colour": ""}\n',
  })
  t.same((await readRows(source(root, 'rows.csv'), INPUTS, 'm')).rows, [
    { x: 1.5, colour: 'red' },
    { x: -20, colour: 'green' },
    { x: null, colour: null },
  ])
  t.same(
    await readRows(source(root, 'rows.tsv'), INPUTS, 'm'),
    { rows: [{ x: 1.5, colour: 'red' }], truths: [], skipped: 0, filled: [] },
    'no truths without a label column',
  )
  t.same((await readRows(source(root, 'rows.ndjson'), INPUTS, 'm')).rows, [
    { x: 1.5, colour: 'red' },
    { x: null, colour: null },
  ])
})

t.test('a file that does not fit the model is refused in one line, naming the file, the line and the column', async (t) => {
  const root = await tempTree(t, {
    'no-column.csv': 'colour,y\nred,1\n',
    'twice.csv': 'x,colour,x\n1,red,2\n',
    'no-member.ndjson': '{"x": 1, "colour": "red"}\n{"colour": "red"}\n',
    'word.csv': 'x,colour\n1,red\nabc,red\n',
    'number-level.ndjson': '{"x": 1, "colour": 3}\n',
    'string-number.ndjson': '{"x": "1", "colour": "red"}\n',
    'level.csv': 'x,colour\n1,blue\n',
    'short.csv': 'x,colour\n1\n',
    'empty.csv': '',
  })
  const cases: Array<[string, string]> = [
    ['no-column.csv', 'no-column.csv:1: the header has no column "x", an input of model m'],
    ['twice.csv', 'twice.csv:1: column "x" appears twice in the header'],
    ['no-member.ndjson', 'no-member.ndjson:2: no member "x", an input of model m (write null for a missing value)'],
    ['word.csv', 'word.csv:3: x: "abc" is not a finite number (a numerical input)'],
    ['number-level.ndjson', 'number-level.ndjson:1: colour: 3 is not a string (a categorical input)'],
    ['string-number.ndjson', 'string-number.ndjson:1: x: "1" is not a finite number (a numerical input)'],
    ['level.csv', `level.csv:2: colour: "blue" is not one of the model's levels (red, green)`],
    ['short.csv', 'short.csv:2: expected 2 fields, found 1'],
    ['empty.csv', 'empty.csv:1: the file is empty: expected a header row'],
    ['absent.csv', 'absent.csv: no such file'],
  ]
  for (const [file, message] of cases) {
    const error = await readRows(source(root, file), INPUTS, 'm').then(
      () => undefined,
      (error: unknown) => error,
    )
    t.type(error, ProfileInputError, file)
    t.equal((error as Error).message, message)
  }
})

t.test('svc ships the rows of its own builds, and only of those', async (t) => {
  const iris = rawArtifact('iris')
  const shipped = await shippedRows('iris', '1', iris.sha256)
  const path = fileURLToPath(new URL('iris/1/reference-rows.csv', ARTIFACTS))
  t.same(shipped, { path, file: path, format: 'csv', delimiter: ',' })
  t.match(readFileSync(shipped.path, 'utf8'), /^sepal_length,sepal_width,petal_length,petal_width,species\n5\.1,3\.5,1\.4,0\.2,setosa\n/)
  await t.rejects(shippedRows('iris', '1', 'f'.repeat(64)), {
    constructor: LoadgenUsageError,
    message: "the service's iris version 1 is not the build svc ships (its sha256 differs), so svc's rows may not be its own: pass --rows FILE",
  })
  await t.rejects(shippedRows('iris', '2', iris.sha256), {
    constructor: LoadgenUsageError,
    message: 'svc ships no rows of model iris version 2 to replay: pass --rows FILE',
  })
  await t.rejects(shippedRows('lin', '1', iris.sha256), { message: 'svc ships no rows of model lin version 1 to replay: pass --rows FILE' })
})

t.test('a model.json that is JSON but no object ships no rows', async (t) => {
  const root = await tempTree(t, { 'm/1/model.json': '["not", "an", "artifact"]', 'm/2/model.json': `"${'f'.repeat(64)}"` })
  for (const version of ['1', '2'])
    await t.rejects(shippedRows('m', version, 'f'.repeat(64), root), {
      constructor: LoadgenUsageError,
      message: `svc ships no rows of model m version ${version} to replay: pass --rows FILE`,
    })
})

const CLASSES: LabelColumn = { name: 'label', classes: ['a', 'b', 'c'], namedBy: "the model's output" }
const VALUES: LabelColumn = { name: 'y', classes: undefined, namedBy: '--label' }

t.test('with a label column, each row comes with its truth, in file order', async (t) => {
  const root = await tempTree(t, {
    'rows.csv': 'id,colour,x,label,y\n1,red,1.5,a,2\n2,green,-2e1,c,-0.5\n3,,,b,1e3\n',
    'rows.ndjson': '{"x": 1.5, "colour": "red", "label": "b", "y": 4.25}\n{"x": null, "colour": "", "label": "a", "y": 0}\n',
  })
  const csv = await readRows(source(root, 'rows.csv'), INPUTS, 'm', CLASSES)
  t.same(csv.truths, ['a', 'c', 'b'])
  t.same(csv.rows[2], { x: null, colour: null }, 'the label column is not an input: the rows are as without it')
  t.same((await readRows(source(root, 'rows.csv'), INPUTS, 'm', VALUES)).truths, [2, -0.5, 1000])
  t.same((await readRows(source(root, 'rows.ndjson'), INPUTS, 'm', CLASSES)).truths, ['b', 'a'])
  t.same((await readRows(source(root, 'rows.ndjson'), INPUTS, 'm', VALUES)).truths, [4.25, 0])
  const shipped = fileURLToPath(new URL('cars/1/reference-rows.csv', ARTIFACTS))
  const cars = rawArtifact('cars')
  const { rows, truths } = await readRows({ path: shipped, file: shipped, format: 'csv', delimiter: ',' }, cars.inputs, 'cars', {
    name: 'miles_per_gallon',
    classes: undefined,
    namedBy: "the model's output",
  })
  t.same([rows.length, truths.slice(0, 3)], [392, [18, 15, 18]], "svc's cars rows end with each car's miles per gallon")
})

t.test('a label column that is absent is a usage error naming the file and the column; a bad label a line error', async (t) => {
  const root = await tempTree(t, {
    'no-label.csv': 'x,colour\n1,red\n',
    'twice.csv': 'x,colour,label,label\n1,red,a,a\n',
    'empty.csv': 'x,colour,label\n1,red,a\n2,red,\n',
    'unknown.csv': 'x,colour,label\n1,red,d\n',
    'no-member.ndjson': '{"x": 1, "colour": "red"}\n',
    'number.ndjson': '{"x": 1, "colour": "red", "label": 1}\n',
    'word.csv': 'x,colour,y\n1,red,many\n',
    'string.ndjson': '{"x": 1, "colour": "red", "y": "2"}\n',
    'null.ndjson': '{"x": 1, "colour": "red", "y": null}\n',
  })
  const refused = (file: string, label: LabelColumn): Promise<unknown> =>
    readRows(source(root, file), INPUTS, 'm', label).then(
      () => undefined,
      (error: unknown) => error,
    )
  const usage = await refused('no-label.csv', CLASSES)
  t.type(usage, LoadgenUsageError)
  t.equal((usage as Error).message, `--feedback: no-label.csv has no column "label" (the model's output) to read the labels from`)
  t.equal(
    ((await refused('no-label.csv', { ...VALUES, name: 'mpg' })) as Error).message,
    '--feedback: no-label.csv has no column "mpg" (--label) to read the labels from',
  )
  const cases: Array<[string, LabelColumn, string]> = [
    ['twice.csv', CLASSES, 'twice.csv:1: column "label" appears twice in the header'],
    ['empty.csv', CLASSES, "empty.csv:3: label: no label (--feedback sends every row's; leave out the rows without one)"],
    ['unknown.csv', CLASSES, `unknown.csv:2: label: "d" is not one of the model's classes (a, b, c)`],
    ['no-member.ndjson', CLASSES, "no-member.ndjson:1: label: no label (--feedback sends every row's; leave out the rows without one)"],
    ['number.ndjson', CLASSES, `number.ndjson:1: label: 1 is not one of the model's classes (a, b, c)`],
    ['word.csv', VALUES, 'word.csv:2: y: "many" is not a finite number (the label of a regressor)'],
    ['string.ndjson', VALUES, 'string.ndjson:1: y: "2" is not a finite number (the label of a regressor)'],
    ['null.ndjson', VALUES, "null.ndjson:1: y: no label (--feedback sends every row's; leave out the rows without one)"],
  ]
  for (const [file, label, message] of cases) {
    const error = await refused(file, label)
    t.type(error, ProfileInputError, file)
    t.equal((error as Error).message, message)
  }
})

t.test('a payload log row without an input (SVC_PAYLOAD_LOG_EXCLUDE) gets a drawn value; none to draw is a usage error saying why', async (t) => {
  const event = JSON.stringify({ specversion: '1.0', type: 'svc.prediction', data: { model: 'm', rows: [{ x: 1 }, { x: 2 }] } })
  const root = await tempTree(t, { 'payload.jsonl': `${event}\n`, 'plain.ndjson': '{"x":1}\n' })
  const drawn = await readRows(source(root, 'payload.jsonl'), INPUTS, 'm', undefined, (name) => (name === 'colour' ? () => 'green' : undefined))
  t.same(drawn.rows, [
    { x: 1, colour: 'green' },
    { x: 2, colour: 'green' },
  ])
  t.same(drawn.filled, ['colour'])
  const none = await readRows(source(root, 'payload.jsonl'), INPUTS, 'm').catch((error: unknown) => error)
  t.ok(none instanceof LoadgenUsageError)
  t.match(
    (none as Error).message,
    "--rows payload.jsonl: colour is not in the payload log's rows (SVC_PAYLOAD_LOG_EXCLUDE left it out) and model m has no reference",
  )
  await t.rejects(
    readRows(source(root, 'plain.ndjson'), INPUTS, 'm'),
    { message: /plain\.ndjson:1: no member "colour", an input of model m \(write null for a missing value\)/ },
    'a file not logged by svc: as before',
  )
})
