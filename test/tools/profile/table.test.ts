// scanTable and what a cell means in each format.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ProfileInputError } from '../../../lib/tools/profile/errors.js'
import { CELLS, type Cells, fieldOf, memberOf, scanTable, type TableSource } from '../../../lib/tools/profile/table.js'
import { rejectionOf } from '../../fixtures/rejection.js'

const DIR = t.testdir()
let files = 0
/** A new file holding `content`, named `name` in messages. */
const source = (name: string, content: string, format: TableSource['format'] = 'csv'): TableSource => {
  const path = join(DIR, `${files++}-${name}`)
  writeFileSync(path, content)
  return { path, file: name, format, delimiter: ',' }
}

const scan = async (table: TableSource) => {
  const seen: Array<[string, Cells, number]> = []
  const rows = await scanTable(table, {
    header: (names, line) => void seen.push(['header', names, line]),
    row: (cells, line) => void seen.push(['row', cells, line]),
  })
  return { rows, seen }
}

const failure = (promise: Promise<unknown>): Promise<ProfileInputError> => rejectionOf<ProfileInputError>(promise)

t.test('CSV: the header, then rows of as many fields', async (t) => {
  t.same(await scan(source('a.csv', 'x,y\n1,2\n\n3,4\n')), {
    rows: { rows: 2, skipped: 0 },
    seen: [
      ['header', ['x', 'y'], 1],
      ['row', ['1', '2'], 2],
      ['row', ['3', '4'], 4],
    ],
  })
  const error = await failure(scan(source('train.csv', 'a,b,c,d,e\n1,2,3,4,5\n1,2,3,4\n')))
  t.type(error, ProfileInputError)
  t.equal(error.message, 'train.csv:3: expected 5 fields, found 4')
  t.equal((await failure(scan(source('e.csv', '')))).message, 'e.csv:1: the file is empty: expected a header row')
  t.equal((await failure(scan(source('h.csv', '\n\na,b\r\n\r\n')))).message, 'h.csv:3: a header but no rows')
  t.same(await scanTable(source('n.csv', 'a\n1\n'), { row: () => {} }), { rows: 1, skipped: 0 }, 'a visitor without a header callback')
})

t.test('NDJSON: every object is a row', async (t) => {
  t.same(await scan(source('a.ndjson', '{"x":1}\n\n{"y":"b"}', 'ndjson')), {
    rows: { rows: 2, skipped: 0 },
    seen: [
      ['row', { x: 1 }, 1],
      ['row', { y: 'b' }, 3],
    ],
  })
  t.equal((await failure(scan(source('e.ndjson', '\n \n', 'ndjson')))).message, 'e.ndjson:1: the file is empty: expected one JSON object per line')
})

/** A payload log line (lib/serving/payload/events.ts): a CloudEvent of `type`, data `data`. */
const event = (type: string, data: Record<string, unknown>): string =>
  JSON.stringify({ specversion: '1.0', id: 'a', source: 'svc://h:1', type, subject: 'm/1', data })

t.test("NDJSON: a payload log's prediction events give their rows; other events are skipped and counted", async (t) => {
  const log = [
    event('svc.prediction', { model: 'iris', rows: [{ x: 1 }, { x: 2 }] }),
    event('svc.label', { token: 't', model: 'iris' }),
    event('svc.prediction', { model: 'cars', rows: [{ y: 1 }] }),
    event('other.type', {}),
    JSON.stringify({ specversion: '1.0', type: 'svc.prediction', data: 'text' }),
    event('svc.prediction', { model: 'iris', rows: [{ x: 3 }] }),
  ].join('\n')
  const iris = { ...source('payload.jsonl', log, 'ndjson'), model: 'iris' }
  t.same(await scan(iris), {
    rows: { rows: 3, skipped: 4 },
    seen: [
      ['row', { x: 1 }, 1],
      ['row', { x: 2 }, 1],
      ['row', { x: 3 }, 6],
    ],
  })
  t.same((await scan(source('all.jsonl', log, 'ndjson'))).rows, { rows: 4, skipped: 3 }, 'no model named: every prediction event')
  const none = { ...source('payload.jsonl', log, 'ndjson'), model: 'wine' }
  t.equal((await failure(scan(none))).message, 'payload.jsonl: no rows: 6 payload log events skipped, none a svc.prediction event of the model')
  const bad = source('bad.jsonl', event('svc.prediction', { model: 'iris', rows: [1] }), 'ndjson')
  t.equal((await failure(scan(bad))).message, "bad.jsonl:1: data.rows: expected the event's rows, an array of objects")
  const noRows = source('none.jsonl', event('svc.prediction', { model: 'iris' }), 'ndjson')
  t.equal((await failure(scan(noRows))).message, "none.jsonl:1: data.rows: expected the event's rows, an array of objects")
})

t.test('what a cell means: missing, a number, a level', async (t) => {
  const csv = CELLS.csv
  t.same(['', ' ', 'a'].map(csv.isMissing), [true, false, false])
  t.same(['12', '-0.5', '+3.', '.25', '1e-3', ' 7\t', '2E+2'].map(csv.number), [12, -0.5, 3, 0.25, 0.001, 7, 200])
  t.same(['1e400', 'NaN', 'Infinity', '0x10', '1,5', '1 2', '.', '-', 'e5', ''].map(csv.number), new Array(10).fill(undefined))
  t.equal(csv.level(' a '), ' a ')

  const ndjson = CELLS.ndjson
  t.same([undefined, null, '', 0, ' ', false].map(ndjson.isMissing), [true, true, true, false, false, false])
  t.same([1.5, Number.POSITIVE_INFINITY, '1', true].map(ndjson.number), [1.5, undefined, undefined, undefined])
  t.same(['a', 1, null].map(ndjson.level), ['a', undefined, undefined])

  t.equal(fieldOf(1)(['a', 'b']), 'b')
  t.equal(memberOf('x')({ x: 2 }), 2)
  t.equal(memberOf('toString')({}), undefined, 'only own members')
})

t.test('a record of the other format has no such cell: a CSV field is not a member, an NDJSON member is not a field', async (t) => {
  t.equal(memberOf('0')(['a']), undefined)
  t.equal(fieldOf(0)({ 0: 'a' }), undefined)
  t.equal(CELLS.csv.number(12), undefined, 'a CSV cell is text')
  t.equal(CELLS.csv.level(12), undefined)
})
