import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { createLineWriter, type WriteSync } from '../../lib/telemetry/line-writer.js'

type Call = { fd: number; offset: number; bytes: string }

/** A fake `writeSync`: records what each call was asked to write and accepts all of it. */
const fakeWrite = (): { write: WriteSync; calls: Call[] } => {
  const calls: Call[] = []
  const write: WriteSync = (fd, buffer, offset) => {
    calls.push({ fd, offset, bytes: buffer.subarray(offset).toString() })
    return buffer.length - offset
  }
  return { write, calls }
}

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: write failed`), { code })

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

t.test('lines written in one tick go out in one write on the next turn', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(2, write)
  writer.write('a\n')
  writer.write('b\n')
  writer.write('c\n')
  t.equal(calls.length, 0, 'nothing written synchronously')
  await nextTurn()
  t.same(calls, [{ fd: 2, offset: 0, bytes: 'a\nb\nc\n' }])
})

t.test('lines written in a later tick go out in a later write', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(1, write)
  writer.write('a\n')
  await nextTurn()
  writer.write('b\n')
  await nextTurn()
  t.same(
    calls.map((c) => c.bytes),
    ['a\n', 'b\n'],
  )
})

t.test('reaching the high-water mark writes at once', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(1, write, 10)
  writer.write('12345')
  t.equal(calls.length, 0, 'below the mark')
  writer.write('67890')
  t.same(calls, [{ fd: 1, offset: 0, bytes: '1234567890' }], 'at the mark')
  await nextTurn()
  t.equal(calls.length, 1, 'the scheduled write finds nothing left')
})

t.test('one chunk larger than the high-water mark is written at once', async (t) => {
  const { write, calls } = fakeWrite()
  createLineWriter(1, write, 4).write('0123456789\n')
  t.same(
    calls.map((c) => c.bytes),
    ['0123456789\n'],
  )
})

t.test('flush writes everything pending synchronously', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(1, write)
  writer.write('a\n')
  writer.write('b\n')
  writer.flush()
  t.same(
    calls.map((c) => c.bytes),
    ['a\nb\n'],
  )
  await nextTurn()
  t.equal(calls.length, 1, 'nothing is written twice')
})

t.test('flush with nothing pending does not write', async (t) => {
  const { write, calls } = fakeWrite()
  const writer = createLineWriter(1, write)
  writer.flush()
  writer.write('a\n')
  writer.flush()
  writer.flush()
  t.equal(calls.length, 1)
})

t.test('a partial write continues from the byte offset it reached', async (t) => {
  const offsets: number[] = []
  const pieces: Buffer[] = []
  const write: WriteSync = (_fd, buffer, offset) => {
    offsets.push(offset)
    const piece = buffer.subarray(offset, offset + 3)
    pieces.push(Buffer.from(piece))
    return piece.length
  }
  const writer = createLineWriter(1, write)
  const text = 'héllo wörld\n' // 14 bytes; a 3-byte write splits "é", so offsets must count bytes
  writer.write(text)
  writer.flush()
  t.same(offsets, [0, 3, 6, 9, 12])
  t.equal(Buffer.concat(pieces).toString(), text)
})

t.test('EAGAIN is retried and nothing is lost', async (t) => {
  const written: string[] = []
  let failures = 0
  const write: WriteSync = (_fd, buffer, offset) => {
    if (failures++ === 0) throw errno('EAGAIN')
    written.push(buffer.subarray(offset).toString())
    return buffer.length - offset
  }
  const writer = createLineWriter(1, write)
  writer.write('a\n')
  writer.write('b\n')
  writer.flush()
  t.equal(failures, 2, 'one failure, one retry')
  t.same(written, ['a\nb\n'])
})

t.test('EAGAIN after a partial write resumes from the offset reached', async (t) => {
  const offsets: number[] = []
  const write: WriteSync = (_fd, buffer, offset) => {
    offsets.push(offset)
    if (offsets.length === 2) throw errno('EAGAIN')
    return Math.min(3, buffer.length - offset)
  }
  const writer = createLineWriter(1, write)
  writer.write('abcdefgh')
  writer.flush()
  t.same(offsets, [0, 3, 3, 6])
})

for (const code of ['EPIPE', 'EBADF']) {
  t.test(`${code} stops the writer for good and later lines are dropped without throwing`, async (t) => {
    let calls = 0
    const write: WriteSync = () => {
      calls++
      throw errno(code)
    }
    const writer = createLineWriter(1, write, 8)
    writer.write('a\n')
    t.doesNotThrow(() => writer.flush())
    t.equal(calls, 1)
    t.doesNotThrow(() => {
      writer.write('b\n')
      writer.write('0123456789\n') // past the high-water mark
      writer.flush()
    })
    await nextTurn()
    t.equal(calls, 1, 'no write after the reader went away')
  })
}

t.test('EPIPE in the middle of a buffer drops the rest', async (t) => {
  const offsets: number[] = []
  const write: WriteSync = (_fd, _buffer, offset) => {
    offsets.push(offset)
    if (offset > 0) throw errno('EPIPE')
    return 2
  }
  const writer = createLineWriter(1, write)
  writer.write('abcdef')
  writer.flush()
  writer.write('more')
  writer.flush()
  t.same(offsets, [0, 2])
})

t.test('a failure from the scheduled write does not throw into the event loop', async (t) => {
  let calls = 0
  const writer = createLineWriter(1, () => {
    calls++
    throw errno('EPIPE')
  })
  writer.write('a\n')
  await nextTurn()
  t.equal(calls, 1)
})

t.test('by default lines are written to the file descriptor', async (t) => {
  const file = join(t.testdir(), 'out.log')
  const fd = openSync(file, 'w')
  t.teardown(() => closeSync(fd))
  const writer = createLineWriter(fd)
  writer.write('one\n')
  writer.write('two\n')
  writer.flush()
  t.equal(readFileSync(file, 'utf8'), 'one\ntwo\n')
})
