// The strict member readers the plan and the state share: each refusal names the member's path.
import t from 'tap'
import { fieldsOf, pathOf, shown } from '../../../lib/tools/rollout/fields.js'

class Refused extends Error {
  constructor(
    readonly code: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`)
  }
}

const fields = fieldsOf((code, field, reason) => new Refused(code, field, reason))
const isNumber = (value: unknown): value is number => typeof value === 'number'

t.test('a path joins members with dots and indexes with brackets; the document has none', async (t) => {
  t.equal(pathOf('', 'steps'), 'steps')
  t.equal(pathOf('steps', 2), 'steps[2]')
  t.equal(pathOf('steps[2]', 'percent'), 'steps[2].percent')
  t.equal(shown(undefined), 'missing')
  t.equal(shown('5m'), '"5m"')
})

t.test('an object is checked for its members: the first unknown one is refused with the list it takes', async (t) => {
  t.same(fields.object({ a: 1 }, 'x', ['a', 'b'], 'an x'), { a: 1 })
  t.throws(() => fields.object({ a: 1, c: 2 }, 'x', ['a', 'b'], 'an x'), { code: 'UNKNOWN_MEMBER', field: 'x.c', reason: 'unknown member; an x takes a, b' })
  t.throws(() => fields.object([], 'x', ['a'], 'an x'), { code: 'INVALID_MEMBER', message: 'x: must be an x (a JSON object), is []' })
  t.throws(() => fields.object(null, '', ['a'], 'a plan'), { message: '(document): must be a plan (a JSON object), is null' })
  t.throws(() => fields.object({ c: 1 }, '', ['a'], 'a plan'), { code: 'UNKNOWN_MEMBER', field: 'c' }, "the document's members are named bare")
})

t.test('a value is kept when valid and refused with what was expected and what was found', async (t) => {
  t.equal(fields.valid(3, 'n', isNumber, 'a number'), 3)
  t.throws(() => fields.valid('3', 'n', isNumber, 'a number'), { code: 'INVALID_MEMBER', message: 'n: must be a number, is "3"' })
  t.throws(() => fields.valid(undefined, 'n', isNumber, 'a number'), { message: 'n: must be a number, is missing' })
  t.match(fields.invalid('n', 'is wrong'), { code: 'INVALID_MEMBER', field: 'n', reason: 'is wrong' })
})
