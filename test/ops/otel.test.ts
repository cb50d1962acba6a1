// ops/otel/collector.yaml: no collector binary is packaged in Debian, so this checks what the
// collector would refuse or get wrong: every pipeline component defined, the OTLP/gRPC receiver on
// loopback 4317, memory_limiter before batch, and an OTLP exporter.
import t from 'tap'
import { readYaml } from './fixtures/ops.js'

type Components = Record<string, Record<string, unknown> | null>
type Collector = {
  receivers: Components
  processors: Components
  exporters: Components
  extensions?: Components
  service: { extensions?: string[]; pipelines: Record<string, { receivers: string[]; processors?: string[]; exporters: string[] }> }
}

t.test('the YAML parses and every component a pipeline names is defined', async (t) => {
  const config = await readYaml<Collector>('otel/collector.yaml')
  t.ok(Object.keys(config.service.pipelines).length > 0, 'at least one pipeline')
  for (const [name, pipeline] of Object.entries(config.service.pipelines)) {
    for (const r of pipeline.receivers) t.ok(r in config.receivers, `${name}: receiver ${r}`)
    for (const p of pipeline.processors ?? []) t.ok(p in config.processors, `${name}: processor ${p}`)
    for (const e of pipeline.exporters) t.ok(e in config.exporters, `${name}: exporter ${e}`)
  }
  for (const e of config.service.extensions ?? []) t.ok(config.extensions !== undefined && e in config.extensions, `extension ${e}`)
})

t.test('traces: OTLP/gRPC on loopback 4317, memory_limiter then batch, OTLP out', async (t) => {
  const config = await readYaml<Collector>('otel/collector.yaml')
  const traces = config.service.pipelines['traces']
  t.same(traces?.receivers, ['otlp'])
  t.same(traces?.processors, ['memory_limiter', 'batch'], 'memory_limiter first, batch last')
  t.same(traces?.exporters, ['otlp'])
  t.match(config.receivers['otlp'], { protocols: { grpc: { endpoint: '127.0.0.1:4317' } } }, 'loopback unless the operator opts in')
  t.match(config.exporters['otlp'], { endpoint: /\S/ })
  t.match(config.processors['memory_limiter'], { check_interval: /\S/ })
})
