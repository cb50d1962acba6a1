// `svc loadgen --feedback`: answers' tokens paired with their rows' truths, sent to the next
// instance in batches to a real loopback collector, and what came back tallied.
import type { IncomingMessage, ServerResponse } from 'node:http'
import t, { type Test } from 'tap'
import { createFeedbackSender, FEEDBACK_BATCH } from '../../../lib/tools/loadgen/feedback.js'
import type { Truth } from '../../../lib/tools/loadgen/labels.js'
import { closedPort, httpServer } from '../../fixtures/tcp.js'

type Instance = Readonly<{ base: URL; bodies: Array<{ feedback: Array<{ token: string; truth: unknown }> }> }>

/** An instance whose /api/v1/feedback refuses the first label of each request as expired, or answers `status`. */
const instance = async (t: Test, status = 200): Promise<Instance> => {
  const bodies: Instance['bodies'] = []
  const server = await httpServer(t, (req: IncomingMessage, res: ServerResponse) => {
    let text = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (text += chunk))
    req.on('end', () => {
      const body = JSON.parse(text) as Instance['bodies'][number]
      bodies.push(body)
      if (status !== 200 || req.url !== '/api/v1/feedback') return void res.writeHead(status === 200 ? 404 : status).end()
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ accepted: body.feedback.length - 1, refused: [{ index: 0, reason: 'expired' }] }))
    })
  })
  return { base: new URL(`http://127.0.0.1:${server.port}/`), bodies }
}

const answer = (tokens: readonly string[]): string => JSON.stringify({ model_version: '1', predictions: [], feedback_tokens: tokens })
const SEND = { headers: { 'content-type': 'application/json' }, timeoutMs: 5000 }
/** The arguments `answered` takes after the body: the rows' count, and their truths whatever version answered. */
const truths = (values: readonly Truth[]) => [values.length, () => values] as const

t.test("each answer's labels go to the next instance, sent at flush, and are tallied", async (t) => {
  const [a, b] = [await instance(t), await instance(t)]
  const sender = createFeedbackSender([a.base, b.base], SEND)
  sender.answered(0, answer(['t1', 't2']), ...truths(['setosa', 'virginica']))
  sender.answered(1, answer(['t3']), ...truths([3.5]))
  t.same([a.bodies.length, b.bodies.length], [0, 0], 'nothing sent before a batch fills')
  await sender.flush()
  t.same(b.bodies, [
    {
      feedback: [
        { token: 't1', truth: 'setosa' },
        { token: 't2', truth: 'virginica' },
      ],
    },
  ])
  t.same(a.bodies, [{ feedback: [{ token: 't3', truth: 3.5 }] }], 'the last instance sends to the first')
  t.same(sender.tally, { labels: 3, requests: 2, accepted: 1, refused: { expired: 2 }, failed: 0, untokened: 0, byStatus: { '200': 2 } })
})

t.test('a full batch is sent at once', async (t) => {
  const only = await instance(t)
  const sender = createFeedbackSender([only.base], SEND)
  const tokens = Array.from({ length: FEEDBACK_BATCH + 1 }, (_, i) => `t${i}`)
  sender.answered(0, answer(tokens), ...truths(tokens.map(() => 'setosa')))
  await sender.flush()
  t.same(
    only.bodies.map((body) => body.feedback.length),
    [FEEDBACK_BATCH, 1],
  )
})

t.test('an answer without a token per row sends nothing and is counted untokened', async (t) => {
  const only = await instance(t)
  const sender = createFeedbackSender([only.base], SEND)
  sender.answered(0, JSON.stringify({ predictions: [] }), ...truths(['a', 'b']))
  sender.answered(0, answer(['only one']), ...truths(['a', 'b']))
  sender.answered(0, 'null', ...truths(['a']))
  sender.answered(0, JSON.stringify({ feedback_tokens: ['t'] }), ...truths(['a']))
  await sender.flush()
  t.same(only.bodies, [])
  t.match(sender.tally, { labels: 0, requests: 0, untokened: 6 }, 'nor does a body that is no object, or names no version')
})

t.test('a request answered otherwise than 200, or not at all, fails its labels', async (t) => {
  const refusing = await instance(t, 503)
  const sender = createFeedbackSender([refusing.base, new URL(`http://127.0.0.1:${await closedPort()}/`)], SEND)
  sender.answered(1, answer(['x', 'y']), ...truths([1, 2]))
  sender.answered(0, answer(['z']), ...truths([3]))
  await sender.flush()
  t.match(sender.tally, { labels: 3, requests: 2, accepted: 0, failed: 3, byStatus: { '503': 1, connection_error: 1 } })
})
