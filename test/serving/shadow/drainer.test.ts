// The shadow queue's drainer alone: from a later turn, one run at a time (an asynchronous one holds
// the slot until it settles), synchronous runs back to back for a turn budget, everything dropped
// and counted under pressure or behind a timed-out run, and a copy of a former shadow not run.
import { setImmediate as turn } from 'node:timers/promises'
import { Registry } from 'prom-client'
import t from 'tap'
import type { Ctx } from '../../../lib/core/http/context.js'
import { createRing } from '../../../lib/core/ring.js'
import type { ServedModel } from '../../../lib/models/registry/registry.js'
import { createDrainer, dropAll, type DrainerOptions, TURN_BUDGET_MS } from '../../../lib/serving/shadow/drainer.js'
import { createShadowMetrics, type ShadowCells } from '../../../lib/serving/shadow/metrics.js'
import type { ShadowCopy } from '../../../lib/serving/shadow/run.js'
import { requestStore } from '../../../lib/telemetry/request-store.js'
import { makeCtx } from '../../fixtures/ctx.js'

const build = (version: string): ServedModel => ({ name: 'iris', version }) as unknown as ServedModel
const [two, three, gone] = [build('2'), build('3'), build('4')]
const copyOf = (shadow: ServedModel): ShadowCopy => ({ shadow }) as unknown as ShadowCopy

const harness = (capacity = 16, run?: DrainerOptions['run']) => {
  const cells = createShadowMetrics(new Registry()).track([two, three])
  const byBuild = new Map<ServedModel, ShadowCells>([
    [two, cells.get('iris/2') as ShadowCells],
    [three, cells.get('iris/3') as ShadowCells],
  ])
  const queue = createRing<ShadowCopy>(capacity)
  const ran: string[] = []
  const pressure = { isOn: false }
  const drainer = createDrainer({
    queue,
    cellsOf: (shadow) => byBuild.get(shadow),
    run:
      run ??
      ((copy) => {
        ran.push(copy.shadow.version)
        return undefined
      }),
    isUnderPressure: () => pressure.isOn,
  })
  const queued = (...shadows: ServedModel[]): void => {
    for (const shadow of shadows) queue.put(copyOf(shadow))
    drainer.schedule()
  }
  const dropped = (shadow: ServedModel) => (byBuild.get(shadow) as ShadowCells).dropped.value
  return { drainer, queue, ran, pressure, queued, dropped, byBuild }
}

t.test('dropAll empties the queue, each copy counted against its shadow; a former shadow has no series to count in', async (t) => {
  const h = harness()
  for (const shadow of [two, two, three, gone]) h.queue.put(copyOf(shadow))
  dropAll(h.queue, (shadow) => h.byBuild.get(shadow))
  t.equal(h.queue.size, 0)
  t.equal(h.dropped(two), 2)
  t.equal(h.dropped(three), 1)
})

t.test("copies run from a later turn than the schedule's, in order; a former shadow's is skipped", async (t) => {
  const h = harness()
  h.queued(two, gone, three)
  t.same(h.ran, [], 'nothing in the turn that queued them')
  h.drainer.schedule()
  await turn()
  t.same(h.ran, ['2', '3'])
  t.equal(h.queue.size, 0)
  h.drainer.schedule()
  await turn()
  t.same(h.ran, ['2', '3'], 'an empty queue schedules nothing')
})

t.test('one run at a time: an asynchronous copy holds the slot until it settles, then the drain goes on', async (t) => {
  const settles: Array<() => void> = []
  let [running, most] = [0, 0]
  const h = harness(16, (copy) => {
    h.ran.push(copy.shadow.version)
    most = Math.max(most, ++running)
    return new Promise<void>((resolve) =>
      settles.push(() => {
        running--
        resolve()
      }),
    )
  })
  h.queued(two, three, two)
  await turn()
  t.same(h.ran, ['2'])
  t.ok(h.drainer.isRunning())
  h.drainer.schedule()
  await turn()
  t.same(h.ran, ['2'], 'a schedule while a run holds the slot waits')
  ;(settles.shift() as () => void)()
  await turn()
  await turn()
  t.same(h.ran, ['2', '3'], 'the next starts once it settled')
  ;(settles.shift() as () => void)()
  await turn()
  await turn()
  ;(settles.shift() as () => void)()
  await turn()
  t.same(h.ran, ['2', '3', '2'])
  t.notOk(h.drainer.isRunning())
  t.equal(most, 1, 'never two at once')
})

t.test('past the timeout everything waiting is dropped, and overdue holds until the run settles', async (t) => {
  let settle: () => void = () => {}
  const h = harness(16, () => new Promise<void>((resolve) => (settle = resolve)))
  h.queued(two, three, two)
  await turn()
  t.notOk(h.drainer.isOverdue())
  h.drainer.overdue()
  t.ok(h.drainer.isOverdue())
  t.equal(h.queue.size, 0)
  t.same([h.dropped(two), h.dropped(three)], [1, 1], 'what waited is dropped and counted')
  settle()
  await turn()
  t.notOk(h.drainer.isOverdue(), 'over once the run settles')
  t.notOk(h.drainer.isRunning())
})

t.test('under pressure a drain drops what waits instead of running it', async (t) => {
  const h = harness()
  h.queued(two, two, three)
  h.pressure.isOn = true
  await turn()
  t.same(h.ran, [])
  t.same([h.dropped(two), h.dropped(three)], [2, 1])
})

t.test('synchronous copies run back to back for at most the turn budget, then yield the loop', async (t) => {
  t.equal(TURN_BUDGET_MS, 1)
  const h = harness(64, (copy) => {
    const until = performance.now() + 0.4
    while (performance.now() < until);
    h.ran.push(copy.shadow.version)
    return undefined
  })
  h.queued(...Array.from({ length: 40 }, () => two))
  await turn()
  t.ok(h.ran.length > 0 && h.ran.length < 40, `a turn ran some and left the rest (${h.ran.length} ran)`)
  for (let i = 0; i < 200 && h.queue.size > 0; i++) await turn()
  t.equal(h.ran.length, 40, 'the rest run in later turns')
})

t.test("a drain scheduled inside a request's store runs outside it", async (t) => {
  let seen: Ctx | undefined | 'not run' = 'not run'
  const h = harness(16, () => {
    seen = requestStore.getStore() as Ctx | undefined
    return undefined
  })
  const ctx = makeCtx('POST', '/api/v1/predict')
  requestStore.run(ctx, () => h.queued(two))
  await turn()
  t.equal(seen, undefined)
})
