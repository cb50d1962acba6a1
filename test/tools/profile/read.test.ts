// readRecords over real files: chunking, UTF-8, and every failure named by file and line.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { createCsvParser, type CsvRecord } from '../../../lib/tools/profile/csv.js'
import { LineError, ProfileInputError } from '../../../lib/tools/profile/errors.js'
import { type Parser, readRecords } from '../../../lib/tools/profile/read.js'
import { rejectionOf } from '../../fixtures/rejection.js'

/** A parser that hands back each chunk of text as a record, to see exactly what was decoded. */
const chunks = (): Parser<string> => ({ push: (text) => [text], end: () => [] })

const DIR = t.testdir()
let files = 0
/** A new file holding `content`. */
const file = (content: string | Buffer): string => {
  const path = join(DIR, `${files++}.data`)
  writeFileSync(path, content)
  return path
}

const texts = async (path: string, chunkBytes?: number): Promise<string> => {
  const seen: string[] = []
  await readRecords(path, 'data.csv', chunks(), (text) => void seen.push(text), chunkBytes)
  return seen.join('')
}

const failure = (promise: Promise<unknown>): Promise<ProfileInputError> => rejectionOf<ProfileInputError>(promise)

t.test('UTF-8 split anywhere between chunks decodes whole, and a leading byte-order mark is dropped', async (t) => {
  const text = 'é,€,😀\nx,\uFEFFy,z\n'
  const path = file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]))
  for (const size of [1, 2, 3, 4, 5, 1 << 20]) t.equal(await texts(path, size), text, `chunks of ${size} bytes`)
})

t.test('records reach the visitor in order, and a promise from it is waited for', async (t) => {
  const path = file('a,b\n1,2\n3,4')
  const seen: string[] = []
  await readRecords(path, 'data.csv', createCsvParser(), async (record: CsvRecord) => {
    await new Promise((resolve) => setTimeout(resolve, 5 - record.line))
    seen.push(`${record.line}:${record.fields.join('|')}`)
  })
  t.same(seen, ['1:a|b', '2:1|2', '3:3|4'])
})

t.test('a LineError from the parser or the visitor names the file and line; anything else passes through', async (t) => {
  const path = file('a\n"open\n')
  const parsed = await failure(readRecords(path, 'train.csv', createCsvParser(), () => {}))
  t.type(parsed, ProfileInputError)
  t.equal(parsed.message, 'train.csv:2: a quoted field (field 1) is never closed')
  t.same({ file: parsed.file, line: parsed.line, reason: parsed.reason }, { file: 'train.csv', line: 2, reason: 'a quoted field (field 1) is never closed' })

  const visited = await failure(
    readRecords(file('a\nb\n'), 'train.csv', createCsvParser(), (record) => {
      if (record.line === 2) throw new LineError(2, 'no b here')
    }),
  )
  t.equal(visited.message, 'train.csv:2: no b here')

  const bug = new TypeError('a bug')
  t.equal(
    await failure(
      readRecords(file('a\n'), 'train.csv', createCsvParser(), () => {
        throw bug
      }),
    ),
    bug,
  )
  const rejected = await failure(readRecords(file('a\n'), 'train.csv', createCsvParser(), () => Promise.reject(bug)))
  t.equal(rejected, bug)
})

t.test('invalid UTF-8 is refused at the line of its first bad byte', async (t) => {
  const bytes = Buffer.concat([Buffer.from('a,b\n1,2\nx,'), Buffer.from([0xc3, 0x28]), Buffer.from('\n3,4\n')])
  const path = file(bytes)
  for (const size of [1, 2, 7, 1 << 20]) {
    const error = await failure(texts(path, size))
    t.equal(error.message, 'data.csv:3: not UTF-8 text', `chunks of ${size} bytes`)
  }
  const stray = file(Buffer.concat([Buffer.from('ok\n\n'), Buffer.from([0x80, 0x80, 0x80, 0x80])]))
  t.equal((await failure(texts(stray, 4))).message, 'data.csv:3: not UTF-8 text', 'continuation bytes without a lead')
  const truncated = file(Buffer.concat([Buffer.from('a\nb\n'), Buffer.from([0xe2, 0x82])]))
  t.equal((await failure(texts(truncated, 2))).message, 'data.csv:3: not UTF-8 text', 'a sequence the file ends inside')
})

t.test('a file that cannot be read is named, without a line', async (t) => {
  const dir = t.testdir({ 'plain.csv': 'a\n' })
  const cases: Array<[string, string]> = [
    [join(dir, 'missing.csv'), 'no such file'],
    [dir, 'is a directory, not a file'],
    [join(dir, 'plain.csv', 'below.csv'), 'cannot be read (ENOTDIR)'],
  ]
  for (const [path, reason] of cases) {
    const error = await failure(texts(path))
    t.type(error, ProfileInputError)
    t.equal(error.message, `data.csv: ${reason}`)
    t.equal(error.line, undefined)
  }
})
