import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api'
import { SamplingDecision } from '@opentelemetry/sdk-trace-node'
import t from 'tap'
import { createSampling, PRE_SAMPLED_CONTEXT, UNSAMPLED_CONTEXT } from '../../lib/telemetry/sampling.js'

const PARENT_BASED =
  'remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler'
const SAMPLERS = [
  ['always_on', 'AlwaysOnSampler', false],
  ['always_off', 'AlwaysOffSampler', true],
  ['traceidratio', 'TraceIdRatioBased{0.25}', true],
  ['parentbased_always_on', `ParentBased{root=AlwaysOnSampler, ${PARENT_BASED}}`, false],
  ['parentbased_always_off', `ParentBased{root=AlwaysOffSampler, ${PARENT_BASED}}`, true],
  ['parentbased_traceidratio', `ParentBased{root=TraceIdRatioBased{0.25}, ${PARENT_BASED}}`, true],
] as const

for (const [name, description, isDecidedByLayer] of SAMPLERS) {
  t.test(`OTEL_TRACES_SAMPLER=${name} builds the standard sampler`, async (t) => {
    const { sampler, decideRoot } = createSampling({ sampler: name, samplerRatio: 0.25 })
    t.equal(sampler.toString(), description)
    t.equal(decideRoot !== undefined, isDecidedByLayer, 'the layer draws root decisions only where the SDK would often say no')
  })
}

t.test('a ratio of 1 leaves every decision to the SDK', async (t) => {
  t.equal(createSampling({ sampler: 'parentbased_traceidratio', samplerRatio: 1 }).decideRoot, undefined)
})

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const decide = (sampler: ReturnType<typeof createSampling>['sampler'], context = ROOT_CONTEXT): SamplingDecision =>
  sampler.shouldSample(context, TRACE, 'GET /', SpanKind.SERVER, {}, []).decision

t.test('the layer draws about the configured ratio; the sampler honours what it drew', async (t) => {
  const { sampler, decideRoot } = createSampling({ sampler: 'parentbased_traceidratio', samplerRatio: 0.25 })
  let sampled = 0
  for (let i = 0; i < 20_000; i++) if (decideRoot?.() === true) sampled++
  t.ok(sampled > 4500 && sampled < 5500, `${sampled} of 20000 at 0.25`)
  t.equal(decide(sampler, PRE_SAMPLED_CONTEXT), SamplingDecision.RECORD_AND_SAMPLED, 'marked by the layer: sampled once, not re-drawn')
  const { sampler: none } = createSampling({ sampler: 'traceidratio', samplerRatio: 0 })
  t.equal(decide(none), SamplingDecision.NOT_RECORD, 'unmarked roots still follow the ratio')
  t.equal(decide(none, PRE_SAMPLED_CONTEXT), SamplingDecision.RECORD_AND_SAMPLED)
  t.equal(createSampling({ sampler: 'always_off', samplerRatio: 1 }).decideRoot?.(), false)
})

t.test('the shared unsampled context holds a valid span that parent-based samplers follow', async (t) => {
  const context = trace.getSpanContext(UNSAMPLED_CONTEXT)
  t.ok(context !== undefined && trace.isSpanContextValid(context))
  t.equal(context?.traceFlags, TraceFlags.NONE)
  const { sampler } = createSampling({ sampler: 'parentbased_traceidratio', samplerRatio: 0.5 })
  t.equal(decide(sampler, UNSAMPLED_CONTEXT), SamplingDecision.NOT_RECORD, 'a custom span in an unsampled request is not sampled')
})
