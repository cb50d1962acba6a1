// Rotating SVC_FEEDBACK_SECRET across a fleet of two running instances, restarted one at a time:
// the three-step roll (the new secret as SVC_FEEDBACK_SECRET_PREVIOUS everywhere, then the two
// swapped, then the previous dropped) refuses no label as invalid_token at any step, where the
// one-step rotation refuses every label that crosses from a restarted instance to one not yet.
import t, { type Test } from 'tap'
import { startApp, type Running } from '../fixtures/app.js'

const OLD = 'the-fleet-secret-before-rotation'
const NEW = 'the-fleet-secret-after-rotation!'
const ROW = { sepal_length: 5.1, sepal_width: 3.5, petal_length: 1.4, petal_width: 0.2 }

/** An instance (re)started with a current secret and, during a rotation, a previous one. */
const start = (t: Test, current: string, previous?: string): Promise<Running> =>
  startApp(t, { SVC_FEEDBACK_SECRET: current, ...(previous === undefined ? {} : { SVC_FEEDBACK_SECRET_PREVIOUS: previous }) })

const post = async (running: Running, path: string, body: unknown): Promise<any> =>
  (await fetch(running.base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()

/** A token an instance's answer carries. */
const mint = async (running: Running): Promise<string> =>
  ((await post(running, '/api/v1/predict', { model: 'iris', instances: [ROW] })).feedback_tokens as string[])[0] as string

/** The labels refused as invalid_token when `tokens` are sent to `running`. */
const invalidTokens = async (running: Running, tokens: readonly string[]): Promise<number> => {
  const result = await post(running, '/api/v1/feedback', { feedback: tokens.map((token) => ({ token, truth: 'setosa' })) })
  return (result.refused as Array<{ reason: string }>).filter(({ reason }) => reason === 'invalid_token').length
}

/** Each instance's fresh token sent to every other instance, and `earlier` tokens to every instance: the invalid_token refusals. */
const crossing = async (fleet: readonly Running[], earlier: readonly string[] = []): Promise<number> => {
  let refused = 0
  for (const from of fleet) {
    const token = await mint(from)
    for (const to of fleet) if (to !== from) refused += await invalidTokens(to, [token])
  }
  for (const to of fleet) if (earlier.length > 0) refused += await invalidTokens(to, earlier)
  return refused
}

t.test('the three-step roll refuses no label as invalid_token at any step', async (t) => {
  const fleet = [await start(t, OLD), await start(t, OLD)]
  const before = [await mint(fleet[0] as Running), await mint(fleet[1] as Running)]
  const steps: Array<[string, number]> = [['before', await crossing(fleet)]]
  // 1. The new secret as the previous one, everywhere: each instance accepts it before any signs with it.
  for (const i of [0, 1]) {
    fleet[i] = await start(t, OLD, NEW)
    steps.push([`instance ${i} accepts the new secret`, await crossing(fleet, before)])
  }
  // 2. The two swapped: the new secret signs, the old one still checks the tokens it signed.
  for (const i of [0, 1]) {
    fleet[i] = await start(t, NEW, OLD)
    steps.push([`instance ${i} signs with the new secret`, await crossing(fleet, before)])
  }
  // 3. After SVC_FEEDBACK_MAX_AGE_S the old secret's tokens have expired: the previous one is dropped.
  for (const i of [0, 1]) {
    fleet[i] = await start(t, NEW)
    steps.push([`instance ${i} drops the old secret`, await crossing(fleet)])
  }
  t.same(
    steps,
    steps.map(([step]) => [step, 0]),
  )
})

t.test('the one-step rotation refuses, as invalid_token, every label a restarted instance signed that reaches one not yet restarted', async (t) => {
  const fleet = [await start(t, OLD), await start(t, OLD)]
  fleet[0] = await start(t, NEW, OLD)
  const signed = [await mint(fleet[0]), await mint(fleet[0]), await mint(fleet[0])]
  t.equal(await invalidTokens(fleet[1] as Running, signed), 3, 'the window: the old instance knows no new secret')
  t.equal(await invalidTokens(fleet[0], [await mint(fleet[1] as Running)]), 0, 'the other way round is accepted, as the previous secret')
  fleet[1] = await start(t, NEW, OLD)
  t.equal(await invalidTokens(fleet[1], signed), 0, 'the window closes once every instance restarted')
})
