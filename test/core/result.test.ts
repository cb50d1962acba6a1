import t from 'tap'
import { failed, succeeded, type Result } from '../../lib/core/result.js'

t.test('a result is a success with its value or a failure with its reason, told apart by ok', async (t) => {
  const results: Result<number>[] = [succeeded(1), failed('no')]
  t.same(results, [
    { ok: true, value: 1 },
    { ok: false, reason: 'no' },
  ])
  t.same(
    results.map((r) => (r.ok ? r.value : r.reason)),
    [1, 'no'],
  )
})
