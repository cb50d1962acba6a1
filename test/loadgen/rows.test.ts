// The rows svc loadgen replays: a --rows file read for a model's inputs, and the rows svc ships.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { LoadgenUsageError } from '../../lib/tools/loadgen/errors.js'
import { readRows, shippedRows } from '../../lib/tools/loadgen/rows.js'
import type { Input } from '../../lib/models/runtime.js'
import { ProfileInputError } from '../../lib/tools/profile/errors.js'
import type { TableSource } from '../../lib/tools/profile/table.js'
import { tempTree } from '../fixtures/model-store.js'
import { ARTIFACTS, rawArtifact } from '../fixtures/models.js'

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
  t.same(await readRows(source(root, 'rows.csv'), INPUTS, 'm'), [
    { x: 1.5, colour: 'red' },
    { x: -20, colour: 'green' },
    { x: null, colour: null },
  ])
  t.same(await readRows(source(root, 'rows.tsv'), INPUTS, 'm'), [{ x: 1.5, colour: 'red' }])
  t.same(await readRows(source(root, 'rows.ndjson'), INPUTS, 'm'), [
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
  t.match(readFileSync(shipped.path, 'utf8'), /^sepal_length,sepal_width,petal_length,petal_width\n5\.1,3\.5,1\.4,0\.2\n/)
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
