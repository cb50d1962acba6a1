import t from 'tap'
import { createCsvParser, type CsvRecord } from '../../../lib/tools/profile/csv.js'
import { LineError } from '../../../lib/tools/profile/errors.js'

/** Every record of `text`, pushed in chunks of `size` characters (the whole text by default). */
const parse = (text: string, delimiter?: string, size = text.length || 1): CsvRecord[] => {
  const parser = createCsvParser(delimiter)
  const records: CsvRecord[] = []
  for (let i = 0; i < text.length; i += size) records.push(...parser.push(text.slice(i, i + size)))
  records.push(...parser.end())
  return records
}

const failure = (text: string, size?: number): LineError => {
  try {
    parse(text, undefined, size)
  } catch (error: unknown) {
    return error as LineError
  }
  throw new Error(`no error for ${JSON.stringify(text)}`)
}

t.test('records and fields, with the line each record began on', async (t) => {
  t.same(parse('a,b,c\n1,2,3\n'), [
    { fields: ['a', 'b', 'c'], line: 1 },
    { fields: ['1', '2', '3'], line: 2 },
  ])
  t.same(
    parse('a,b\r\n1,2'),
    [
      { fields: ['a', 'b'], line: 1 },
      { fields: ['1', '2'], line: 2 },
    ],
    'CRLF, and no line break after the last record',
  )
  t.same(
    parse('a\r1\r2\r'),
    [
      { fields: ['a'], line: 1 },
      { fields: ['1'], line: 2 },
      { fields: ['2'], line: 3 },
    ],
    'a lone CR is a line break too',
  )
  t.same(
    parse(',a,\n,,\n'),
    [
      { fields: ['', 'a', ''], line: 1 },
      { fields: ['', '', ''], line: 2 },
    ],
    'empty fields, first and last',
  )
  t.same(parse(' a , b \n'), [{ fields: [' a ', ' b '], line: 1 }], 'fields are not trimmed')
  t.same(parse(''), [])
})

t.test('empty lines are skipped but counted', async (t) => {
  t.same(parse('\na,b\n\r\n\n1,2\n\n'), [
    { fields: ['a', 'b'], line: 2 },
    { fields: ['1', '2'], line: 5 },
  ])
})

t.test('quoted fields hold delimiters, line breaks and doubled quotes', async (t) => {
  const text = 'name,note\n"Smith, J.","said ""hi""\r\nand left"\nx,""\n"",y\n'
  t.same(parse(text), [
    { fields: ['name', 'note'], line: 1 },
    { fields: ['Smith, J.', 'said "hi"\r\nand left'], line: 2 },
    { fields: ['x', ''], line: 4 },
    { fields: ['', 'y'], line: 5 },
  ])
  t.same(
    parse('"a\rb","c\n\nd"\ne\n'),
    [
      { fields: ['a\rb', 'c\n\nd'], line: 1 },
      { fields: ['e'], line: 5 },
    ],
    'line breaks inside quotes are counted, a lone CR included',
  )
  t.same(parse('"a"'), [{ fields: ['a'], line: 1 }], 'a quoted field closing the text')
})

t.test('chunks split anywhere give the same records', async (t) => {
  const text = 'id,"na""me",v\r\n1,"x,\r\ny",2\r\n\r\n3,"""",4\n5,,\r6,"",7'
  const whole = parse(text)
  t.equal(whole.length, 5)
  t.same(whole.at(-1), { fields: ['6', '', '7'], line: 7 })
  for (let size = 1; size <= text.length; size++) t.same(parse(text, undefined, size), whole, `chunks of ${size}`)
})

t.test('another delimiter: tab, semicolon', async (t) => {
  t.same(parse('a\tb\n"1\t2"\t3\n', '\t'), [
    { fields: ['a', 'b'], line: 1 },
    { fields: ['1\t2', '3'], line: 2 },
  ])
  t.same(parse('a;b,c\n', ';'), [{ fields: ['a', 'b,c'], line: 1 }])
})

t.test('malformed CSV is refused at its line', async (t) => {
  const cases: Array<[string, number, string]> = [
    ['a,b\n1,x"y\n', 2, 'a quote inside an unquoted field (field 2); quote the whole field and double the quote'],
    ['a,b\n"1"x,2\n', 2, 'expected "," or a line break after the closing quote of field 1'],
    ['a\n\n"ok\nstill open,\nnever closed\n', 3, 'a quoted field (field 1) is never closed'],
    ['a,b\n1,"unterminated', 2, 'a quoted field (field 2) is never closed'],
  ]
  for (const [text, line, reason] of cases) {
    for (const size of [undefined, 1]) {
      const error = failure(text, size)
      t.type(error, LineError)
      t.same({ line: error.line, reason: error.reason }, { line, reason }, `${JSON.stringify(text)} in chunks of ${size ?? 'all'}`)
    }
  }
  t.equal(failure('x\n"a"b').message, 'line 2: expected "," or a line break after the closing quote of field 1')
  const tab = t.throws(() => parse('"a"b', '\t')) as LineError
  t.equal(tab.reason, 'expected a tab or a line break after the closing quote of field 1')
})
