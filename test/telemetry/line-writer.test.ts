import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { createLineWriter, type WriteSync } from '../../lib/telemetry/line-writer.js'

type Call = { fd: number; text: string; offset: number }
type Step = number | NodeJS.ErrnoException

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: write failed`), { code })
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * A fake `writeSync` recording each call as text from the offset it was asked to start at. `steps`
 * script the outcomes in order: a number of bytes accepted, or an error to throw; once they run
 * out, every call accepts all it was given.
 */
const fakeWrite = (steps: Step[] = []): { write: WriteSync; calls: Call[] } => {
  const calls: Call[] = []
  const write = ((fd: number, data: string | Buffer, offset: number = 0, length?: number): number => {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data.subarray(offset, offset + (length ?? data.length - offset))
    calls.push({ fd, text: bytes.toString(), offset: typeof data === 'string' ? 0 : offset })
    const step = steps.shift()
    if (step instanceof Error) throw step
    return step ?? bytes.length
  }) as WriteSync
  return { write, calls }
}

t.test('lines written in one tick go out in one write on the next turn', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(2, write)
  writer.write('a\n')
  writer.write('b\n')
  writer.write('c\n')
  t.equal(calls.length, 0, 'nothing written synchronously')
  await nextTurn()
  t.same(calls, [{ fd: 2, text: 'a\nb\nc\n', offset: 0 }])
  writer.write('d\n')
  await nextTurn()
  t.same(
    calls.map((c) => c.text),
    ['a\nb\nc\n', 'd\n'],
    'a later tick writes again',
  )
})

t.test('reaching the high-water mark writes at once', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(1, write, 8)
  writer.write('1234\n')
  t.equal(calls.length, 0)
  writer.write('5678\n')
  t.same(
    calls.map((c) => c.text),
    ['1234\n5678\n'],
  )
  await nextTurn()
  t.equal(calls.length, 1, 'the scheduled flush finds nothing left')
})

t.test('flush writes everything pending synchronously; with nothing pending it does not write', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(1, write)
  writer.flush()
  t.equal(calls.length, 0)
  writer.write('x\n')
  writer.flush()
  t.same(
    calls.map((c) => c.text),
    ['x\n'],
  )
})

t.test('a partial write continues from the byte where it stopped, multi-byte text included', async (t) => {
  // 'é' is two bytes: 3 characters, 4 bytes. Accepting 3 bytes looks complete by length alone.
  const { write, calls } = fakeWrite([3])
  const writer = createLineWriter(1, write)
  writer.write('éa\n')
  writer.flush()
  t.same(calls, [
    { fd: 1, text: 'éa\n', offset: 0 },
    { fd: 1, text: '\n', offset: 3 },
  ])
})

t.test('EAGAIN is retried and nothing is lost', async (t) => {
  const { write, calls } = fakeWrite([errno('EAGAIN'), 2, errno('EAGAIN')])
  const writer = createLineWriter(1, write)
  writer.write('abcd\n')
  writer.flush()
  t.same(
    calls.map((c) => [c.text, c.offset]),
    [
      ['abcd\n', 0],
      ['abcd\n', 0],
      ['cd\n', 2],
      ['cd\n', 2],
    ],
  )
})

for (const code of ['EPIPE', 'EBADF']) {
  t.test(`${code} stops the writer for good; later lines are dropped without throwing`, async (t) => {
    const { write, calls } = fakeWrite([errno(code)])
    const writer = createLineWriter(1, write, 8)
    writer.write('a\n')
    t.doesNotThrow(() => writer.flush())
    t.doesNotThrow(() => {
      writer.write('b\n')
      writer.write('0123456789\n')
      writer.flush()
    })
    await nextTurn()
    t.equal(calls.length, 1, 'no write after the reader went away')
    t.equal(writer.dropped(), 3, 'the line of the failed write and both later ones are counted')
  })
}

t.test('EPIPE after a partial write drops the rest', async (t) => {
  const { write, calls } = fakeWrite([2, errno('EPIPE')])
  const writer = createLineWriter(1, write)
  writer.write('abcdef')
  writer.flush()
  writer.write('more')
  writer.flush()
  t.same(
    calls.map((c) => c.offset),
    [0, 2],
  )
  t.equal(writer.dropped(), 2, 'the line cut short and the later one')
})

t.test('nothing is counted as dropped while the reader keeps reading, EAGAIN and partial writes included', async (t) => {
  const { write } = fakeWrite([errno('EAGAIN'), 3, 1])
  const writer = createLineWriter(1, write)
  for (const line of ['a\n', 'bb\n', 'é\n']) writer.write(line)
  writer.flush()
  writer.write('c\n')
  await nextTurn()
  t.equal(writer.dropped(), 0)
})

// Lines of 3 bytes each ('é' is two): the reader goes away after `accepted` bytes of the batch.
for (const { accepted, dropped, name } of [
  { accepted: 0, dropped: 3, name: 'before any byte' },
  { accepted: 2, dropped: 3, name: 'inside the first line' },
  { accepted: 3, dropped: 2, name: 'right after the first line' },
  { accepted: 7, dropped: 1, name: 'inside the last line' },
]) {
  t.test(`a reader gone ${name} of a batch: the lines not written whole are counted`, async (t) => {
    const steps: Step[] = accepted === 0 ? [errno('EPIPE')] : [accepted, errno('EPIPE')]
    const { write } = fakeWrite(steps)
    const writer = createLineWriter(1, write)
    for (const line of ['ab\n', 'é\n', 'cd\n']) writer.write(line)
    writer.flush()
    t.equal(writer.dropped(), dropped)
    writer.write('later\n')
    await nextTurn()
    t.equal(writer.dropped(), dropped + 1, 'and every line after')
  })
}

t.test('by default lines are written to the file descriptor', async (t) => {
  const file = join(t.testdir(), 'out.log')
  const fd = openSync(file, 'w')
  const writer = createLineWriter(fd)
  writer.write('{"a":1}\n')
  writer.write('{"b":"é"}\n')
  writer.flush()
  closeSync(fd)
  t.equal(readFileSync(file, 'utf8'), '{"a":1}\n{"b":"é"}\n')
})
