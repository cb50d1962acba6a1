import t from 'tap'
import { onStreamEnd } from '../../lib/layers/stream-end.js'
import type { StreamReply } from '../../lib/core/pipeline.js'

const reply = (stream: AsyncIterable<string>): StreamReply => ({ kind: 'stream', status: 200, headers: { 'x-a': '1' }, stream })
const wrap = (stream: AsyncIterable<string>) => {
  const ends: unknown[] = []
  const wrapped = onStreamEnd(reply(stream), (error) => void ends.push(error)) as StreamReply
  return { wrapped, ends, iterator: wrapped.stream[Symbol.asyncIterator]() }
}

t.test('the reply keeps its status and headers; the end is reported once, after the last item', async (t) => {
  const { wrapped, ends, iterator } = wrap(
    (async function* () {
      yield 'a'
      yield 'b'
    })(),
  )
  t.same([wrapped.status, wrapped.headers], [200, { 'x-a': '1' }])
  t.same(await iterator.next(), { done: false, value: 'a' })
  t.same(await iterator.next(), { done: false, value: 'b' })
  t.same(ends, [])
  t.same(await iterator.next(), { done: true, value: undefined })
  await iterator.return?.()
  t.same(ends, [undefined], 'return() after the end reports nothing more')
})

t.test('return() before the first item ends a stream that was never started', async (t) => {
  let isStopped = false
  const { ends, iterator } = wrap(
    (async function* () {
      try {
        yield 'never'
      } finally {
        isStopped = true
      }
    })(),
  )
  t.same(await iterator.return?.(), { done: true, value: undefined })
  t.same(ends, [undefined])
  t.notOk(isStopped, 'a generator not started has nothing to clean up')
})

t.test('return() mid-stream stops the inner generator and reports the end', async (t) => {
  let isStopped = false
  const { ends, iterator } = wrap(
    (async function* () {
      try {
        for (;;) yield 'x'
      } finally {
        isStopped = true
      }
    })(),
  )
  await iterator.next()
  await iterator.return?.()
  t.ok(isStopped)
  t.same(ends, [undefined])
})

t.test('an error is reported with the end and rethrown', async (t) => {
  const boom = new Error('broke')
  const { ends, iterator } = wrap(
    (async function* () {
      yield 'a'
      throw boom
    })(),
  )
  await iterator.next()
  await t.rejects(iterator.next(), boom)
  t.same(ends, [boom])
})

t.test('an iterable without return() still reports the end on return()', async (t) => {
  const bare: AsyncIterable<string> = { [Symbol.asyncIterator]: () => ({ next: async () => ({ done: false, value: 'x' }) }) }
  const { ends, iterator } = wrap(bare)
  t.same(await iterator.return?.(), { done: true, value: undefined })
  t.same(ends, [undefined])
})
