// parseOnnxMetadata: metadata.json beside a model.onnx, optional as a whole and in every member,
// checked as strictly as a manifest so a misspelt member stops the version with a reason.
import t from 'tap'
import { NO_METADATA, OnnxMetadataError, parseOnnxMetadata } from '../../../lib/models/onnx/metadata.js'

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))

t.test('no metadata.json is no metadata: no features, classes, levels or task, and the type "onnx"', async (t) => {
  t.equal(parseOnnxMetadata(undefined), NO_METADATA)
  t.same(NO_METADATA, { features: undefined, classes: undefined, levels: {}, task: undefined, type: 'onnx', batch: {} })
  t.ok(Object.isFrozen(NO_METADATA) && Object.isFrozen(NO_METADATA.levels))
})

t.test('an empty object is a file that says nothing: every member takes its default', async (t) => {
  const metadata = parseOnnxMetadata(json({}))
  t.same(metadata, { features: undefined, classes: undefined, levels: {}, task: undefined, type: 'onnx', batch: {} })
  t.ok(Object.isFrozen(metadata))
})

t.test('every member is read as written, in order', async (t) => {
  const metadata = parseOnnxMetadata(
    json({
      features: ['sepal_length', 'sepal_width'],
      classes: ['setosa', 'versicolor', 'virginica'],
      levels: { colour: ['red', 'green'], size: ['S'] },
      task: 'classification',
      type: 'GradientBoostingClassifier',
    }),
  )
  t.same(metadata.features, ['sepal_length', 'sepal_width'])
  t.same(metadata.classes, ['setosa', 'versicolor', 'virginica'])
  t.same(Object.entries(metadata.levels), [
    ['colour', ['red', 'green']],
    ['size', ['S']],
  ])
  t.equal(metadata.task, 'classification')
  t.equal(metadata.type, 'GradientBoostingClassifier')
  // Looked up by input name: an input called `toString` must not find Object.prototype's.
  t.equal(metadata.levels['toString'], undefined, 'levels hold only what the file lists')
  t.equal(parseOnnxMetadata(json({ task: 'regression' })).task, 'regression')
})

t.test('names and labels of 1 to 256 characters are accepted, whatever they contain', async (t) => {
  const longest = 'x'.repeat(256)
  const metadata = parseOnnxMetadata(json({ features: [longest, 'é', ' '], classes: ['0', '1'], levels: { [longest]: [longest] }, type: longest }))
  t.same(metadata.features, [longest, 'é', ' '])
  t.same(metadata.levels[longest], [longest])
  t.equal(metadata.type, longest)
})

t.test('the result is frozen through: members, lists and levels cannot be changed after the check', async (t) => {
  const metadata = parseOnnxMetadata(json({ features: ['a'], classes: ['x', 'y'], levels: { c: ['p', 'q'] } }))
  t.ok(Object.isFrozen(metadata))
  t.ok(Object.isFrozen(metadata.features))
  t.ok(Object.isFrozen(metadata.classes))
  t.ok(Object.isFrozen(metadata.levels))
  t.ok(Object.isFrozen(metadata.levels['c']))
  // Module code is strict: a write to a frozen object throws instead of passing silently.
  t.throws(() => (metadata.classes as string[]).push('z'), TypeError)
  t.throws(() => {
    ;(metadata as { type: string }).type = 'other'
  }, TypeError)
})

t.test('a document that is not UTF-8 JSON is refused as a whole', async (t) => {
  t.throws(() => parseOnnxMetadata(Buffer.from('{"features": [')), { name: 'OnnxMetadataError', message: /^\(document\): is not UTF-8 JSON: / })
  t.throws(() => parseOnnxMetadata(Buffer.from('')), { message: /^\(document\): is not UTF-8 JSON: / }, 'an empty file')
  // 0xff is never UTF-8: the decoder is fatal, so no U+FFFD slips into a name.
  t.throws(() => parseOnnxMetadata(Buffer.from([0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])), {
    message: /^\(document\): is not UTF-8 JSON: /,
  })
})

t.test('a document that is not a JSON object is refused', async (t) => {
  for (const value of [[], null, 'features', 1, true])
    t.throws(() => parseOnnxMetadata(json(value)), { message: /^\(document\): must be a JSON object$/ }, JSON.stringify(value))
})

t.test('an unknown member is refused by name, listing the members there are', async (t) => {
  t.throws(() => parseOnnxMetadata(json({ clases: ['a', 'b'] })), {
    name: 'OnnxMetadataError',
    message: /^clases: is not a member of metadata\.json \(features, classes, levels, task, type, batch\)$/,
  })
  t.throws(() => parseOnnxMetadata(json({ type: 'x', inputs: [] })), { message: /^inputs: is not a member/ }, 'beside valid members')
})

t.test('a task other than classification or regression is refused', async (t) => {
  for (const task of ['Classification', 'clustering', '', 1, null, ['regression']])
    t.throws(() => parseOnnxMetadata(json({ task })), { message: /^task: must be one of classification, regression$/ }, JSON.stringify(task))
})

t.test('features and classes must be non-empty arrays of distinct names of 1 to 256 characters', async (t) => {
  for (const member of ['features', 'classes']) {
    for (const value of ['a', { a: 1 }, null, 0, []])
      t.throws(
        () => parseOnnxMetadata(json({ [member]: value })),
        { message: new RegExp(`^${member}: must be a non-empty array of strings$`) },
        `${member}: ${JSON.stringify(value)}`,
      )
    for (const entry of [1, null, '', 'x'.repeat(257), ['a']])
      t.throws(
        () => parseOnnxMetadata(json({ [member]: ['a', entry] })),
        { message: new RegExp(`^${member}\\[1\\]: must be a string of 1 to 256 characters$`) },
        `${member}[1]: ${JSON.stringify(entry)}`,
      )
    t.throws(() => parseOnnxMetadata(json({ [member]: ['a', 'b', 'a'] })), { message: new RegExp(`^${member}\\[2\\]: repeats "a"$`) }, `${member} repeated`)
  }
})

t.test('levels must be an object of input name to a non-empty array of distinct strings', async (t) => {
  for (const value of [[], ['a'], null, 'colour', 1])
    t.throws(() => parseOnnxMetadata(json({ levels: value })), { message: /^levels: must be an object of input name to its strings$/ }, JSON.stringify(value))
  t.throws(() => parseOnnxMetadata(json({ levels: { colour: [] } })), { message: /^levels\.colour: must be a non-empty array of strings$/ })
  t.throws(() => parseOnnxMetadata(json({ levels: { colour: 'red' } })), { message: /^levels\.colour: must be a non-empty array of strings$/ })
  t.throws(() => parseOnnxMetadata(json({ levels: { size: ['S'], colour: ['red', 2] } })), {
    message: /^levels\.colour\[1\]: must be a string of 1 to 256 characters$/,
  })
  t.throws(() => parseOnnxMetadata(json({ levels: { colour: ['red', 'green', 'red'] } })), { message: /^levels\.colour\[2\]: repeats "red"$/ })
})

t.test('a type must be a name of 1 to 256 characters', async (t) => {
  for (const type of ['', 'x'.repeat(257), 1, null, ['onnx']])
    t.throws(() => parseOnnxMetadata(json({ type })), { message: /^type: must be a string of 1 to 256 characters$/ }, JSON.stringify(type))
})

t.test('every refusal is an OnnxMetadataError', async (t) => {
  try {
    parseOnnxMetadata(json({ features: [] }))
    t.fail('should have thrown')
  } catch (error) {
    t.ok(error instanceof OnnxMetadataError)
    t.ok(error instanceof Error)
    t.equal((error as Error).name, 'OnnxMetadataError')
  }
})

t.test("batch sets a version's own limits in the worker pool, each checked", async (t) => {
  t.same(parseOnnxMetadata(json({ batch: { max_rows: 32, max_delay_us: 0 } })).batch, { maxRows: 32, maxDelayUs: 0 })
  t.same(parseOnnxMetadata(json({ batch: {} })).batch, {}, 'an empty batch keeps the service settings')
  t.throws(() => parseOnnxMetadata(json({ batch: 8 })), { message: 'batch: must be an object with max_rows and/or max_delay_us' })
  t.throws(() => parseOnnxMetadata(json({ batch: { max_rows: 0 } })), { message: 'batch.max_rows: must be an integer from 1 to 100000' })
  t.throws(() => parseOnnxMetadata(json({ batch: { max_delay_us: 1.5 } })), { message: 'batch.max_delay_us: must be an integer from 0 to 1000000' })
  t.throws(() => parseOnnxMetadata(json({ batch: { max_rows: '8' } })), { message: /batch.max_rows/ })
  t.throws(() => parseOnnxMetadata(json({ batch: { rows: 8 } })), { message: 'batch.rows: is not a member of batch (max_rows, max_delay_us)' })
})
