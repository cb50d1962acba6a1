import t from 'tap'
import { LineError } from '../../../lib/tools/profile/errors.js'
import { createNdjsonParser, type NdjsonRecord } from '../../../lib/tools/profile/ndjson.js'

const parse = (text: string, size = text.length || 1): NdjsonRecord[] => {
  const parser = createNdjsonParser()
  const records: NdjsonRecord[] = []
  for (let i = 0; i < text.length; i += size) records.push(...parser.push(text.slice(i, i + size)))
  records.push(...parser.end())
  return records
}

t.test('one object per line, with its line; CRLF; blank lines skipped; the last break optional', async (t) => {
  const text = '{"a":1,"b":"x"}\r\n\n  \t\r\n{"a":null}\n{ "a" : 2.5 }'
  const records = [
    { value: { a: 1, b: 'x' }, line: 1 },
    { value: { a: null }, line: 4 },
    { value: { a: 2.5 }, line: 5 },
  ]
  t.same(parse(text), records)
  for (let size = 1; size <= text.length; size++) t.same(parse(text, size), records, `chunks of ${size}`)
  t.same(parse('{}\n'), [{ value: {}, line: 1 }])
  t.same(parse(''), [])
})

t.test('a line that is not a JSON object is refused at its line', async (t) => {
  const cases: Array<[string, number, RegExp]> = [
    ['{"a":1}\n[1,2]\n', 2, /^expected a JSON object, found an array$/],
    ['{"a":1}\n\nnull', 3, /^expected a JSON object, found null$/],
    ['3\n', 1, /^expected a JSON object, found a number$/],
    ['"text"\n', 1, /^expected a JSON object, found a string$/],
    ['{"a":1}\n{"a":}\n', 2, /^not JSON \(.+\)$/],
    [`{"a":${'z'.repeat(500)}}\n`, 1, /^not JSON \(.{1,100}\)$/],
  ]
  for (const [text, line, reason] of cases) {
    const error = t.throws(() => parse(text)) as LineError
    t.type(error, LineError)
    t.equal(error.line, line, JSON.stringify(text.slice(0, 20)))
    t.match(error.reason, reason)
  }
})
