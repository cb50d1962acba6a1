// One mechanism makes and drops every per-version family (lib/models/registry/version-series.ts):
// made at 0 by the publish that serves the version, dropped by the publish that stops serving it, or
// a lifetime after it.
import t from 'tap'
import { createVersionFamily, type SeriesPolicy } from '../../../lib/models/registry/version-series.js'

type Version = Readonly<{ name: string; version: string }>
const v = (version: string): Version => ({ name: 'iris', version })

const familyOf = (policy: SeriesPolicy) => {
  const made: string[] = []
  const dropped: string[] = []
  const family = createVersionFamily({
    policy,
    keyOf: ({ name, version }: Version) => `${name}/${version}`,
    make: ({ version }: Version) => {
      made.push(version)
      return { version }
    },
    drop: (key: string) => void dropped.push(key),
  })
  return { family, made, dropped }
}

t.test("a version's series are made by the publish that serves it, before any call, and found by every call", async (t) => {
  const { family, made, dropped } = familyOf({ keptS: 0 })
  family.publish([v('1'), v('2')], 0)
  t.same(made, ['1', '2'], 'made at the publish, before any request')
  t.equal(family.of(v('2')), family.series().get('iris/2'), 'a call finds what the publish made')
  t.equal(family.of(v('2')), family.of(v('2')), 'the same series on every call')
  t.same(made, ['1', '2'], 'no call makes them again')
  family.publish([v('1')], 10)
  t.same(dropped, ['iris/2'])
  family.of(v('2'))
  t.same(made, ['1', '2', '2'], 'a version dropped starts afresh')
})

t.test('a call before any publish makes the series; the first publish not serving the version drops them', async (t) => {
  const { family, made, dropped } = familyOf({ keptS: 0 })
  const series = family.of(v('3'))
  t.same(made, ['3'])
  family.publish([v('3')], 0)
  t.equal(family.series().get('iris/3'), series, 'a publish keeps what a call made')
  family.publish([v('1')], 1)
  t.same(dropped, ['iris/3'])
  t.same([...family.series().keys()], ['iris/1'])
})

t.test('a publish family is made at the publish, in the order served, and dropped by the one that ends it', async (t) => {
  const { family, made, dropped } = familyOf({ keptS: 0 })
  family.publish([v('1')], 0)
  const first = family.series().get('iris/1')
  family.publish([v('2'), v('1')], 1)
  t.same([...family.series().keys()], ['iris/2', 'iris/1'], 'the order served')
  t.equal(family.series().get('iris/1'), first, 'a version still served keeps its series')
  family.publish([v('2')], 2)
  t.same(made, ['1', '2'])
  t.same(dropped, ['iris/1'])
})

t.test('a family kept for a lifetime drops a version only once it is over, and one served again is kept', async (t) => {
  const { family, dropped } = familyOf({ keptS: 60 })
  family.publish([v('1'), v('2')], 0)
  family.publish([v('2')], 10)
  family.publish([v('2')], 70)
  t.same(dropped, [], 'kept while the lifetime runs, to its last second')
  t.same([...family.series().keys()], ['iris/2', 'iris/1'], 'a retired version is still read')
  family.publish([v('2')], 71)
  t.same(dropped, ['iris/1'], 'gone past its lifetime')
  family.publish([v('2'), v('1')], 100)
  family.publish([v('2')], 110)
  family.publish([v('2'), v('1')], 120)
  family.publish([v('2'), v('1')], 1000)
  t.same(dropped, ['iris/1'], 'a version served again before its end is not dropped')
  t.same([...family.series().keys()], ['iris/2', 'iris/1'])
})
