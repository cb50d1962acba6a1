// The closed sets of choices: each variable that chooses from one refuses what the set leaves out,
// so the sets are what the configuration accepts, not a list kept beside it.
import t from 'tap'
import { ENVIRONMENTS, LOG_FORMATS, LOG_LEVELS, RATE_PROVIDERS, SAMPLERS } from '../../lib/config/choices.js'
import { Reader } from '../../lib/config/reader.js'

t.test('the choices, in the order help and defaults list them', async (t) => {
  t.same(ENVIRONMENTS, ['dev', 'stage', 'prod'])
  t.same(LOG_LEVELS, ['debug', 'info', 'warning', 'error'])
  t.same(LOG_FORMATS, ['json', 'console'])
  t.same(SAMPLERS, ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
  t.same(RATE_PROVIDERS, ['coingecko', 'coinbase'])
})

t.test('a variable choosing from a set takes each member and refuses anything else', async (t) => {
  for (const [name, set] of [
    ['SVC_ENVIRONMENT', ENVIRONMENTS],
    ['LOG_LEVEL', LOG_LEVELS],
    ['LOG_FORMAT', LOG_FORMATS],
    ['OTEL_TRACES_SAMPLER', SAMPLERS],
  ] as const) {
    for (const choice of set) {
      const reader = new Reader({ [name]: choice }, [])
      t.equal(reader.read(name), choice, `${name}=${choice}`)
      t.same(reader.problems, [])
    }
    const reader = new Reader({ [name]: 'other' }, [])
    reader.read(name)
    t.equal(reader.problems.length, 1, `${name}=other is refused`)
  }
})
