// Reading and rewriting ONNX models without a protobuf library. Models built here byte by byte cover
// every path, whatever is installed; the graphs of test/fixtures/onnx/generate.py are checked against
// onnx itself (Debian's python3-onnx), skipped with a message when it is missing.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { exposeZipMapInputs, inspectGraph, MAX_NESTING, OnnxGraphError, type OnnxGraphErrorCode } from '../../../lib/models/onnx/graph.js'
import { mulberry32 } from '../../fixtures/fuzz.js'
import { ONNX_GRAPHS, type OnnxGraphName, onnxGraphs, python } from '../../fixtures/onnx-graphs.js'

// ---- a protobuf encoder for the cases: fields in, bytes out

const varint = (value: number): number[] => {
  const out: number[] = []
  let rest = value
  for (; rest >= 0x80; rest = Math.floor(rest / 0x80)) out.push((rest % 0x80) | 0x80)
  out.push(rest)
  return out
}
const bytes = (...parts: ReadonlyArray<Uint8Array | readonly number[]>): Buffer => Buffer.concat(parts.map((p) => Buffer.from(p)))
/** A length-delimited field: a message (its fields), a string, or raw bytes. */
const len = (field: number, ...payload: ReadonlyArray<Uint8Array | readonly number[] | string>): Buffer => {
  const body = Buffer.concat(payload.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))))
  return bytes(varint(field * 8 + 2), varint(body.length), body)
}
const int = (field: number, value: number): Buffer => bytes(varint(field * 8), varint(value))
const fixed64 = (field: number): Buffer => bytes(varint(field * 8 + 1), [1, 2, 3, 4, 5, 6, 7, 8])
const fixed32 = (field: number): Buffer => bytes(varint(field * 8 + 5), [1, 2, 3, 4])
/** Fields of every wire type under numbers onnx.proto does not use: what a reader must skip and keep. */
const unknown = (): Buffer => bytes(int(1000, 300), fixed64(1001), fixed32(1002), len(1003, len(1, 'x')))

type Dim = number | string | null
const shape = (dims: readonly Dim[]): Buffer => len(2, ...dims.map((d) => len(1, typeof d === 'number' ? int(1, d) : d === null ? Buffer.alloc(0) : len(2, d))))
/** TypeProto { tensor_type }: elem_type, then a shape when dims are given. */
const tensorType = (elem: number, dims?: readonly Dim[]): Buffer => len(1, int(1, elem), dims === undefined ? Buffer.alloc(0) : shape(dims))
const seqType = (elem: Buffer): Buffer => len(4, len(1, elem))
const mapType = (key: number, value: Buffer): Buffer => len(5, int(1, key), len(2, value))
const valueInfo = (name: string, type?: Buffer): Buffer => (type === undefined ? len(1, name) : bytes(len(1, name), len(2, type)))
const node = (op: string, inputs: readonly string[], outputs: readonly string[], domain?: string): Buffer =>
  bytes(...inputs.map((i) => len(1, i)), ...outputs.map((o) => len(2, o)), len(4, op), domain === undefined ? [] : len(7, domain))
const opset = (domain: string, version: number): Buffer => len(8, len(1, domain), int(2, version))
const ML = 'ai.onnx.ml'
const OPSETS = bytes(opset('', 15), opset(ML, 3))
/** As onnx writes a model: ir_version, producer_name, the graph, then the opsets. */
const model = (graph: Buffer, opsets: Buffer = OPSETS): Buffer => bytes(int(1, 8), len(2, 'svc-test'), len(7, graph), opsets)

// A classifier as skl2onnx exports it, an initializer also listed as an input (as IR < 4 wants).
const CLASSIFIER = node('LinearClassifier', ['X', 'w'], ['label', 'probability_tensor'], ML)
const ZIPMAP = node('ZipMap', ['probability_tensor'], ['probabilities'], ML)
const LABEL = len(12, valueInfo('label', tensorType(7, ['N'])))
const PROBABILITIES = len(12, valueInfo('probabilities', seqType(mapType(7, tensorType(1)))))
const EXPOSED = len(12, valueInfo('probability_tensor', tensorType(1, [null, null])))
const graphOf = (...outputs: Buffer[]): Buffer =>
  bytes(
    len(1, CLASSIFIER, unknown()),
    len(1, ZIPMAP),
    len(2, 'classifier'),
    len(5, int(1, 4), len(8, 'w')),
    len(11, valueInfo('X', tensorType(1, ['N', 4]))),
    len(11, valueInfo('w', tensorType(1, [4]))),
    unknown(),
    ...outputs,
  )

const codeOf = (f: () => unknown): OnnxGraphErrorCode | string => {
  try {
    f()
    return 'no error'
  } catch (error) {
    return error instanceof OnnxGraphError ? error.code : `${(error as Error).name}: ${(error as Error).message}`
  }
}

t.test('a model is described without running it: inputs a caller feeds, typed outputs, ZipMap nodes', async (t) => {
  const summary = inspectGraph(model(graphOf(LABEL, PROBABILITIES)))
  t.same(summary, {
    inputs: [{ name: 'X', type: 'tensor(float)', elemType: 1, shape: ['N', 4] }],
    outputs: [
      { name: 'label', type: 'tensor(int64)', elemType: 7, shape: ['N'] },
      { name: 'probabilities', type: 'seq(map(int64,tensor(float)))', elemType: undefined, shape: undefined },
    ],
    zipMaps: [{ input: 'probability_tensor', output: 'probabilities' }],
  })
  t.notOk('fieldStart' in (summary.outputs[0] as object), 'no byte offsets handed out')
  t.same(Object.keys(summary.zipMaps[0] as object), ['input', 'output'])
})

t.test('every kind of type is spelled as onnxruntime spells it, whatever fields surround it', async (t) => {
  const outputs = [
    valueInfo('fixed', tensorType(11, [2, 'batch', null])),
    valueInfo('no_shape', tensorType(8)),
    valueInfo('untyped'),
    bytes(valueInfo('empty_type', Buffer.alloc(0)), len(3, 'a doc string')),
    valueInfo('sparse', len(8, int(1, 1), shape([3, 3]))),
    valueInfo('optional', len(9, len(1, tensorType(7)))),
    valueInfo('empty_seq', len(4, Buffer.alloc(0))),
    valueInfo('map', mapType(8, seqType(tensorType(16)))),
    valueInfo('empty_map', len(5, Buffer.alloc(0))),
    valueInfo('future_elem', tensorType(99, [1])),
    valueInfo('no_elem', len(1, shape([]))),
    // denotation (6) and unknown fields at every level, a Dimension with its denotation (3)
    valueInfo(
      'noisy',
      bytes(len(6, 'TENSOR'), len(1, int(1, 1), unknown(), len(2, unknown(), len(1, int(1, 5), len(3, 'BATCH'), unknown()))), unknown(), len(1000, 'x')),
    ),
    valueInfo('noisy_seq', len(4, unknown(), len(1, tensorType(1)))),
    valueInfo('noisy_map', len(5, unknown(), int(1, 7), len(2, tensorType(1)))),
    valueInfo('twice', bytes(tensorType(7), tensorType(1))),
  ]
  const { outputs: read } = inspectGraph(model(bytes(len(1, node('Identity', ['x'], ['y'])), ...outputs.map((o) => len(12, o))), opset('ai.onnx', 15)))
  t.same(
    read.map((o) => [o.name, o.type, o.elemType, o.shape]),
    [
      ['fixed', 'tensor(double)', 11, [2, 'batch', null]],
      ['no_shape', 'tensor(string)', 8, undefined],
      ['untyped', 'unknown', undefined, undefined],
      ['empty_type', 'unknown', undefined, undefined],
      ['sparse', 'sparse_tensor(float)', 1, [3, 3]],
      ['optional', 'optional(tensor(int64))', undefined, undefined],
      ['empty_seq', 'seq(unknown)', undefined, undefined],
      ['map', 'map(string,seq(tensor(bfloat16)))', undefined, undefined],
      ['empty_map', 'map(undefined,unknown)', undefined, undefined],
      ['future_elem', 'tensor(elem_type 99)', 99, [1]],
      ['no_elem', 'tensor(undefined)', 0, []],
      ['noisy', 'tensor(float)', 1, [5]],
      ['noisy_seq', 'seq(tensor(float))', undefined, undefined],
      ['noisy_map', 'map(int64,tensor(float))', undefined, undefined],
      ['twice', 'tensor(float)', 1, undefined],
    ],
    'a field written twice counts as the last',
  )
})

t.test('every graph output a ZipMap writes becomes the float tensor it reads, and the ZipMap goes', async (t) => {
  const before = model(graphOf(LABEL, PROBABILITIES))
  const after = exposeZipMapInputs(before)
  const expected = model(
    bytes(
      len(1, CLASSIFIER, unknown()),
      len(2, 'classifier'),
      len(5, int(1, 4), len(8, 'w')),
      len(11, valueInfo('X', tensorType(1, ['N', 4]))),
      len(11, valueInfo('w', tensorType(1, [4]))),
      unknown(),
      LABEL,
      EXPOSED,
    ),
  )
  t.same(Buffer.from(after), expected, 'byte for byte: only the output and the ZipMap node differ')
  t.same(inspectGraph(after), {
    inputs: [{ name: 'X', type: 'tensor(float)', elemType: 1, shape: ['N', 4] }],
    outputs: [
      { name: 'label', type: 'tensor(int64)', elemType: 7, shape: ['N'] },
      { name: 'probability_tensor', type: 'tensor(float)', elemType: 1, shape: [null, null] },
    ],
    zipMaps: [],
  })
  t.same(Buffer.from(exposeZipMapInputs(after)), expected, 'a second pass changes nothing')

  // In place: the replaced output keeps its position among the others; fields around the graph stay.
  const around = bytes(int(1, 8), unknown(), len(7, graphOf(PROBABILITIES, LABEL)), OPSETS, unknown())
  const rewritten = Buffer.from(exposeZipMapInputs(around))
  t.same(
    inspectGraph(rewritten).outputs.map((o) => o.name),
    ['probability_tensor', 'label'],
  )
  t.same(rewritten.subarray(0, 2 + unknown().length), around.subarray(0, 2 + unknown().length), 'the fields before the graph')
  t.same(rewritten.subarray(-(OPSETS.length + unknown().length)), around.subarray(-(OPSETS.length + unknown().length)), 'the fields after it')
})

t.test('the tensor behind a ZipMap that is already an output is not listed twice', async (t) => {
  const alreadyListed = len(12, valueInfo('probability_tensor', tensorType(1, ['N', 3])))
  const after = exposeZipMapInputs(model(graphOf(LABEL, alreadyListed, PROBABILITIES)))
  t.same(
    inspectGraph(after).outputs.map((o) => [o.name, o.shape]),
    [
      ['label', ['N']],
      ['probability_tensor', ['N', 3]],
    ],
  )
  t.notOk(Buffer.from(after).includes('ZipMap'), 'the ZipMap node is gone')
  const twice = exposeZipMapInputs(model(graphOf(PROBABILITIES, LABEL, PROBABILITIES)))
  t.same(
    inspectGraph(twice).outputs.map((o) => o.name),
    ['probability_tensor', 'label'],
    'an output listed twice is exposed once',
  )
  t.notOk(Buffer.from(twice).includes('ZipMap'))
})

t.test('a ZipMap whose output another node reads stays; only the graph output changes', async (t) => {
  const graph = bytes(graphOf(LABEL, PROBABILITIES), len(1, node('SequenceLength', ['probabilities'], ['rows'])))
  const after = exposeZipMapInputs(model(graph))
  t.ok(Buffer.from(after).includes(ZIPMAP), 'the ZipMap node, byte for byte')
  t.same(
    inspectGraph(after).outputs.map((o) => o.name),
    ['label', 'probability_tensor'],
  )
  t.same(inspectGraph(after).zipMaps, [{ input: 'probability_tensor', output: 'probabilities' }])
})

t.test('a model with no ZipMap output comes back as the same array', async (t) => {
  const probabilities = len(12, valueInfo('probability_tensor', tensorType(1, ['N', 3])))
  const cases: Record<string, Buffer> = {
    'no ZipMap': model(bytes(len(1, CLASSIFIER), LABEL, probabilities)),
    'a ZipMap whose output is not a graph output': model(graphOf(LABEL, probabilities)),
    'a ZipMap of another domain': model(
      bytes(len(1, node('ZipMap', ['p'], ['probabilities'], 'com.example')), PROBABILITIES),
      bytes(OPSETS, opset('com.example', 1)),
    ),
    'an op named ZipMap in the default domain': model(bytes(len(1, node('ZipMap', ['p'], ['probabilities'])), PROBABILITIES)),
    'no nodes at all': model(bytes(len(2, 'empty'))),
  }
  for (const [name, bytes] of Object.entries(cases)) t.equal(exposeZipMapInputs(bytes), bytes, name)
  t.same(
    inspectGraph(cases['a ZipMap whose output is not a graph output']!).zipMaps,
    [{ input: 'probability_tensor', output: 'probabilities' }],
    'listed all the same',
  )
  t.same(inspectGraph(cases['a ZipMap of another domain']!).zipMaps, [], 'not a ZipMap')
})

t.test('malformed models are refused with where and why, never a RangeError', async (t) => {
  const graph = graphOf(LABEL, PROBABILITIES)
  const deep = (levels: number): Buffer => {
    let type = tensorType(1)
    for (let i = 0; i < levels; i++) type = seqType(type)
    return model(bytes(len(12, valueInfo('deep', type))))
  }
  const cases: ReadonlyArray<readonly [string, Uint8Array, OnnxGraphErrorCode, RegExp]> = [
    ['empty', new Uint8Array(0), 'MALFORMED', /^model: no graph \(field 7\)/],
    ['JSON', Buffer.from('{"format":1}'), 'MALFORMED', /^model: field 15 at byte 0 has group start/],
    ['field number 0', bytes([0x02, 0x00]), 'MALFORMED', /^model: field number 0 at byte 0/],
    ['a field number beyond 2^29 - 1', bytes(varint(2 ** 29 * 8), [0]), 'MALFORMED', /field number 536870912/],
    ['wire type 4', bytes([0x0c]), 'MALFORMED', /field 1 at byte 0 has group end/],
    ['wire type 6', bytes(int(1, 8), [0x0e]), 'MALFORMED', /field 1 at byte 2 has wire type 6/],
    ['wire type 7', bytes([0x0f]), 'MALFORMED', /wire type 7/],
    ['a varint of 11 bytes', bytes([0x08], new Array(10).fill(0x80), [0x01]), 'MALFORMED', /the varint at byte 1 is longer than 10 bytes/],
    ['the graph as a varint', bytes(int(7, 1), OPSETS), 'MALFORMED', /^model: field 7 at byte 0 is varint, expected length-delimited/],
    ['two graphs', bytes(len(7, graph), len(7, graph), OPSETS), 'MALFORMED', /^model: a second graph \(field 7\) at byte \d+/],
    [
      'no opsets',
      bytes(len(7, graph)),
      'MALFORMED',
      /^model.opset_import: no opset for domain "ai.onnx.ml", which model.graph.node\[0\] \(LinearClassifier\) uses/,
    ],
    [
      'no opset for the default domain',
      model(bytes(len(1, node('Relu', ['x'], ['y']))), opset(ML, 3)),
      'MALFORMED',
      /no opset for domain "", which model.graph.node\[0\] \(Relu\)/,
    ],
    ['an opset domain as a varint', model(graph, bytes(len(8, int(1, 5)))), 'MALFORMED', /^model.opset_import\[0\]: field 1 at byte \d+ is varint/],
    [
      'an op type that is not UTF-8',
      model(bytes(len(1, len(4, Buffer.from([0xff, 0xfe]))))),
      'MALFORMED',
      /^model.graph.node\[0\]: field 4 at byte \d+ is not UTF-8/,
    ],
    ['a node as a fixed32', model(bytes(fixed32(1))), 'MALFORMED', /^model.graph: field 1 at byte \d+ is fixed32, expected length-delimited/],
    [
      'a ZipMap with two inputs',
      model(bytes(len(1, node('ZipMap', ['a', 'b'], ['c'], ML)))),
      'MALFORMED',
      /^model.graph.node\[0\]: ZipMap takes one input and writes one output, not \["a","b"\] → \["c"\]/,
    ],
    ['a ZipMap without output', model(bytes(len(1, node('ZipMap', ['a'], [], ML)))), 'MALFORMED', /ZipMap takes one input/],
    ['a ZipMap with an empty input', model(bytes(len(1, node('ZipMap', [''], ['c'], ML)))), 'MALFORMED', /ZipMap takes one input/],
    ['a ZipMap with an empty output', model(bytes(len(1, node('ZipMap', ['a'], [''], ML)))), 'MALFORMED', /ZipMap takes one input/],
    [
      'an elem_type as a string',
      model(bytes(len(12, valueInfo('x', len(1, len(1, 'float')))))),
      'MALFORMED',
      /^model.graph.output\[0\].type.tensor_type: field 1 at byte \d+ is length-delimited, expected varint/,
    ],
    ['a map key as a string', model(bytes(len(12, valueInfo('x', len(5, len(1, 'int64')))))), 'MALFORMED', /^model.graph.output\[0\].type.map_type: field 1/],
    [
      'a dimension as fixed64',
      model(bytes(len(11, valueInfo('x', len(1, int(1, 1), len(2, len(1, fixed64(1)))))))),
      'MALFORMED',
      /^model.graph.input\[0\].type.tensor_type.shape.dim\[0\]: field 1 at byte \d+ is fixed64, expected varint/,
    ],
    [
      'a field overrunning its message',
      model(bytes(len(1, [0x22, 0x05, 0x41]), len(2, 'padding'))),
      'MALFORMED',
      /^model.graph.node\[0\]: field 4 at byte \d+ holds 5 bytes, 1 remain/,
    ],
    [
      'a varint overrunning its message',
      model(bytes(len(12, valueInfo('x', len(1, [0x08, 0x80]))), len(2, 'padding'))),
      'MALFORMED',
      /^model.graph.output\[0\].type.tensor_type: the varint at byte \d+ runs past the end/,
    ],
    [
      'a fixed64 overrunning its message',
      model(bytes(len(1, [0x09, 1, 2]), len(2, 'padding'))),
      'MALFORMED',
      /^model.graph.node\[0\]: field 1 at byte \d+ holds 8 bytes, 2 remain/,
    ],
    ['a fixed32 cut short', bytes(int(1, 8), [0x15, 1, 2, 3]), 'TRUNCATED', /^model: field 2 at byte 2 holds 4 bytes, 3 remain/],
    ['a length cut short', bytes(int(1, 8), [0x3a, 0x80]), 'TRUNCATED', /^model: the varint at byte 3 runs past the end/],
    ['a graph cut short', model(graph).subarray(0, 40), 'TRUNCATED', /^model: field 7 at byte 12 holds \d+ bytes, 25 remain/],
    [
      `types nested deeper than ${MAX_NESTING} messages`,
      deep(7),
      'TOO_DEEP',
      /^model.graph.output\[0\].type(.sequence_type.elem_type){7}: nested deeper than 16 messages$/,
    ],
  ]
  for (const [name, input, code, message] of cases) {
    for (const f of [inspectGraph, exposeZipMapInputs]) {
      try {
        f(input)
        t.fail(`${name}: ${f.name} accepted it`)
      } catch (error) {
        t.ok(error instanceof OnnxGraphError, `${name}: an OnnxGraphError`)
        t.match(error, { name: 'OnnxGraphError', code, message }, `${name}: ${f.name}`)
      }
    }
  }
  t.equal(
    codeOf(() => inspectGraph(deep(6))),
    'no error',
    `six sequences deep reads: its tensor_type is at level ${MAX_NESTING}`,
  )
  t.equal(
    codeOf(() => inspectGraph(deep(1000))),
    'TOO_DEEP',
    'far deeper is refused at the same level',
  )
  const error = new OnnxGraphError('TRUNCATED', 'model.graph', 'why')
  t.match(error, { field: 'model.graph', message: 'model.graph: why' })
})

/**
 * Every proper prefix of a model is refused or reads exactly as the whole (a cut that leaves off
 * only an opset no node uses); one that cuts into the graph field is TRUNCATED.
 */
const checkPrefixes = (t: Test, name: string, whole: Uint8Array, cuts: Iterable<number>): void => {
  const wrong: string[] = []
  const [graphStart, graphEnd] = graphField(whole)
  const described = JSON.stringify(inspectGraph(whole))
  for (const cut of cuts) {
    const prefix = whole.subarray(0, cut)
    const code = codeOf(() => inspectGraph(prefix))
    if (cut > graphStart && cut < graphEnd ? code !== 'TRUNCATED' : code === 'TOO_DEEP') wrong.push(`${cut}: ${code}`)
    if (code === 'no error' && JSON.stringify(inspectGraph(prefix)) !== described) wrong.push(`${cut}: read as another model`)
  }
  t.same(wrong, [], `${name}: every cut refused or harmless`)
}

/** Where the graph field starts and ends, found by the test's own reading of the top-level fields. */
const graphField = (model: Uint8Array): [number, number] => {
  let pos = 0
  for (;;) {
    const start = pos
    const [tag, afterTag] = readVarint(model, pos)
    if (tag % 8 === 0) pos = readVarint(model, afterTag)[1]
    else {
      const [length, valueStart] = readVarint(model, afterTag)
      pos = valueStart + length
    }
    if (Math.floor(tag / 8) === 7) return [start, pos]
  }
}
const readVarint = (b: Uint8Array, at: number): [number, number] => {
  let value = 0
  let pos = at
  for (let scale = 1; ; scale *= 128) {
    const byte = b[pos++]!
    value += (byte & 0x7f) * scale
    if (byte < 0x80) return [value, pos]
  }
}

/** Every byte set to a few hostile values: the reader answers or refuses, nothing else. */
const checkMutations = (t: Test, name: string, whole: Uint8Array): void => {
  const wrong = new Set<string>()
  const copy = Uint8Array.from(whole)
  for (let i = 0; i < copy.length; i++) {
    const original = copy[i]!
    for (const value of [0x00, 0xff, 0x80, original ^ 0x80, original + 1]) {
      copy[i] = value & 0xff
      for (const f of [inspectGraph, exposeZipMapInputs]) {
        const code = codeOf(() => f(copy))
        if (code !== 'no error' && code !== 'TRUNCATED' && code !== 'MALFORMED' && code !== 'TOO_DEEP') wrong.add(`byte ${i} = ${value}: ${code}`)
      }
    }
    copy[i] = original
  }
  t.same([...wrong], [], `${name}: every mutation read or refused`)
}

t.test('a model cut anywhere, or with any byte changed, is refused or read, never a RangeError', async (t) => {
  const whole = model(graphOf(LABEL, PROBABILITIES))
  checkPrefixes(
    t,
    'the classifier',
    whole,
    Array.from({ length: whole.length }, (_, i) => i),
  )
  checkMutations(t, 'the classifier', whole)
  const random = mulberry32(7)
  const garbage = Uint8Array.from({ length: 4096 }, () => Math.floor(random() * 256))
  t.match(
    codeOf(() => inspectGraph(garbage)),
    /^(MALFORMED|TRUNCATED)$/,
    'random bytes',
  )
})

// ---- the generated graphs, against onnx itself

const ZIPMAP_GRAPHS: readonly OnnxGraphName[] = ['linear-zipmap', 'linear-strings-zipmap', 'tree-classifier']

t.test('the generated graphs read as onnx describes them', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  for (const name of ONNX_GRAPHS) {
    const params = graphs.params(name) as { inputs: unknown[]; outputs: unknown[]; zipmap?: unknown; classes?: unknown[] }
    const summary = inspectGraph(graphs.bytes(name))
    const described = (values: readonly { name: string; type: string; shape: unknown }[]) =>
      values.map(({ name, type, shape }) => (shape === undefined ? { name, type } : { name, type, shape }))
    t.same(described(summary.inputs), params.inputs, `${name}: inputs`)
    t.same(described(summary.outputs), params.outputs, `${name}: outputs`)
    t.same(summary.zipMaps, params.zipmap === undefined ? [] : [params.zipmap], `${name}: ZipMap`)
    // Integer labels (classlabels_ints on LinearClassifier, _int64s on trees and ZipMap) read as text.
    t.same(summary.classLabels, params.classes?.map(String), `${name}: class labels`)
  }
  t.same(
    ONNX_GRAPHS.filter((name) => inspectGraph(graphs.bytes(name)).zipMaps.length > 0),
    ZIPMAP_GRAPHS,
  )
})

t.test('onnx.checker accepts the rewritten graphs, which list the tensor behind the ZipMap and keep the rest', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  const pairs: string[] = []
  for (const name of ZIPMAP_GRAPHS) {
    const rewritten = join(graphs.dir, `${name}.exposed.onnx`)
    writeFileSync(rewritten, exposeZipMapInputs(graphs.bytes(name)))
    pairs.push(graphs.path(name), rewritten)
  }
  // Full check: shape inference too, which onnx 1.12 cannot run over a ZipMap (generate.py).
  const report = await python(
    `
import json, sys, onnx
out = []
for original_path, rewritten_path in zip(sys.argv[1::2], sys.argv[2::2]):
    original, rewritten = onnx.load(original_path), onnx.load(rewritten_path)
    onnx.checker.check_model(rewritten, full_check=True)
    outputs = [(o.name, o.type.tensor_type.elem_type, len(o.type.tensor_type.shape.dim)) for o in rewritten.graph.output]
    kept_nodes = [n for n in original.graph.node if n.op_type != 'ZipMap'] == list(rewritten.graph.node)
    same_graph = original.graph.input == rewritten.graph.input and original.graph.initializer == rewritten.graph.initializer and original.graph.name == rewritten.graph.name and original.graph.output[0] == rewritten.graph.output[0]
    original.ClearField('graph'); rewritten.ClearField('graph')
    out.append({'outputs': outputs, 'kept_nodes': kept_nodes, 'same_graph': same_graph, 'same_model': original == rewritten})
print(json.dumps(out))
`,
    pairs,
  )
  const results = JSON.parse(report) as unknown[]
  ZIPMAP_GRAPHS.forEach((name, i) => {
    t.same(
      results[i],
      {
        outputs: [
          ['label', name === 'linear-strings-zipmap' ? 8 : 7, 1],
          ['probability_tensor', 1, 2],
        ],
        kept_nodes: true,
        same_graph: true,
        same_model: true,
      },
      name,
    )
  })
})

t.test('a generated graph without ZipMap comes back unchanged', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  for (const name of ONNX_GRAPHS) {
    if (ZIPMAP_GRAPHS.includes(name)) continue
    const bytes = graphs.bytes(name)
    t.equal(exposeZipMapInputs(bytes), bytes, name)
  }
})

t.test('the generated graphs cut anywhere, or with any byte changed, are refused or read', async (t) => {
  const graphs = await onnxGraphs(t)
  if (graphs === undefined) return
  for (const name of ONNX_GRAPHS) {
    const whole = graphs.bytes(name)
    if (name === 'forest' || name === 'wide') {
      // 470 kB and 1 MB: a sample of cuts, each end of the graph field among them.
      const random = mulberry32(11)
      const [start, end] = graphField(whole)
      const edges = [0, 1, start, start + 1, end - 1, end, end + 1, whole.length - 1]
      const cuts = [...edges, ...Array.from({ length: 200 }, () => Math.floor(random() * whole.length))]
      checkPrefixes(t, name, whole, cuts)
      continue
    }
    checkPrefixes(
      t,
      name,
      whole,
      Array.from({ length: whole.length }, (_, i) => i),
    )
    checkMutations(t, name, whole)
  }
})

// ---- class labels, from node attributes

/** An int64 of -1 as protobuf writes it: ten bytes of two's complement. */
const MINUS_ONE = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
/** NodeProto.attribute (5): AttributeProto with its name (1) and values. */
const attribute = (name: string, ...values: Buffer[]): Buffer => len(5, len(1, name), ...values)
const labelled = (nodes: readonly Buffer[], opsets: Buffer = OPSETS): Buffer =>
  model(bytes(...nodes.map((n) => len(1, n)), len(11, valueInfo('X', tensorType(1, ['N', 4]))), len(12, valueInfo('p', tensorType(1, ['N', 3])))), opsets)

t.test('class labels come from the first ai.onnx.ml classifier or ZipMap that names them, integers exactly', async (t) => {
  const ints = (...values: ReadonlyArray<readonly number[]>) => values.map((v) => bytes(varint(8 * 8), v))
  const cases: ReadonlyArray<readonly [string, Buffer, readonly string[] | undefined]> = [
    [
      'classlabels_ints, one field each',
      labelled([bytes(node('LinearClassifier', ['X'], ['l', 'p'], ML), attribute('classlabels_ints', ...ints(varint(0), varint(7), MINUS_ONE)))]),
      ['0', '7', '-1'],
    ],
    [
      'classlabels_int64s, packed',
      labelled([bytes(node('TreeEnsembleClassifier', ['X'], ['l', 'p'], ML), attribute('classlabels_int64s', len(8, varint(3), MINUS_ONE, varint(2 ** 60))))]),
      ['3', '-1', '1152921504606846976'],
    ],
    [
      'classlabels_strings',
      labelled([bytes(node('SVMClassifier', ['X'], ['l', 'p'], ML), attribute('classlabels_strings', len(9, 'cat'), len(9, 'dog')))]),
      ['cat', 'dog'],
    ],
    [
      'other attributes are not labels',
      labelled([
        bytes(
          node('LinearClassifier', ['X'], ['l', 'p'], ML),
          attribute('post_transform', len(4, 'SOFTMAX')),
          attribute('coefficients', len(7, [0, 0, 128, 63])),
        ),
      ]),
      undefined,
    ],
    [
      'a node of another domain',
      labelled([bytes(node('Classifier', ['X'], ['p'], 'com.example'), attribute('classlabels_strings', len(9, 'x')))], bytes(OPSETS, opset('com.example', 1))),
      undefined,
    ],
    [
      'the first labelled node',
      labelled([
        bytes(node('Normalizer', ['X'], ['n'], ML), attribute('classlabels_strings', len(9, 'not a classifier'))),
        bytes(node('LinearClassifier', ['n'], ['l', 'q'], ML), attribute('classlabels_strings', len(9, 'a'), len(9, 'b'))),
        bytes(node('ZipMap', ['q'], ['p'], ML), attribute('classlabels_strings', len(9, 'c'), len(9, 'd'))),
      ]),
      ['a', 'b'],
    ],
  ]
  for (const [what, bytesOf, labels] of cases) t.same(inspectGraph(bytesOf).classLabels, labels, what)
})
