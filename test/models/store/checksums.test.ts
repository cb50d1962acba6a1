// A version's checksums.json: written by `svc push`, checked at load whatever the store.
import t from 'tap'
import { CHECKSUMS_FILE, formatChecksums, parseChecksums, sha256Hex, verifyChecksums } from '../../../lib/models/store/checksums.js'

const onnx = Buffer.from('graph bytes')
const metadata = Buffer.from('{"outputs":[]}')

t.test('formatChecksums lists every file by name, sorted, and parseChecksums reads it back', async (t) => {
  const bytes = formatChecksums(
    new Map([
      ['model.onnx', onnx],
      ['metadata.json', metadata],
    ]),
  )
  t.equal(bytes.toString(), `{\n  "sha256": {\n    "metadata.json": "${sha256Hex(metadata)}",\n    "model.onnx": "${sha256Hex(onnx)}"\n  }\n}\n`)
  t.same(
    [...parseChecksums(bytes, 'iris/3/checksums.json')],
    [
      ['metadata.json', sha256Hex(metadata)],
      ['model.onnx', sha256Hex(onnx)],
    ],
  )
})

t.test('parseChecksums refuses anything but {"sha256": {file: hex}}', async (t) => {
  const digest = sha256Hex(onnx)
  const cases: ReadonlyArray<readonly [string, RegExp]> = [
    ['not json', /iris\/3\/checksums\.json is not \{"sha256".*: .*JSON/],
    ['[]', /its members/],
    ['{"sha256": {}, "extra": 1}', /its members/],
    ['{"sha256": []}', /its members/],
    [`{"sha256": {"../model.onnx": "${digest}"}}`, /"\.\.\/model\.onnx" is not a file of the version/],
    [`{"sha256": {"${CHECKSUMS_FILE}": "${digest}"}}`, /is not a file of the version/],
    ['{"sha256": {"model.onnx": "ABC"}}', /model\.onnx: "ABC" is not 64 lower-case hex digits/],
    [`{"sha256": {"model.onnx": "${digest.toUpperCase()}"}}`, /not 64 lower-case hex digits/],
    ['{"sha256": {"model.onnx": 1}}', /model\.onnx: 1 is not/],
  ]
  for (const [text, message] of cases) t.throws(() => parseChecksums(Buffer.from(text), 'iris/3/checksums.json'), { code: 'CHECKSUM_MISMATCH', message }, text)
})

t.test('verifyChecksums passes the recorded bytes and names the file that differs or is missing', async (t) => {
  const checksums = parseChecksums(
    formatChecksums(
      new Map([
        ['model.onnx', onnx],
        ['profile.json', metadata],
      ]),
    ),
    'x',
  )
  t.doesNotThrow(() =>
    verifyChecksums(
      checksums,
      new Map([
        ['model.onnx', onnx],
        ['profile.json', metadata],
        ['metadata.json', undefined],
      ]),
      'iris/3/',
    ),
  )
  t.doesNotThrow(() => verifyChecksums(checksums, new Map([['model.onnx', onnx]]), 'iris/3/'), 'a recorded file the runtime does not read is not checked')
  t.throws(
    () =>
      verifyChecksums(
        checksums,
        new Map([
          ['model.onnx', Buffer.from('other')],
          ['profile.json', metadata],
        ]),
        'iris/3/',
      ),
    {
      code: 'CHECKSUM_MISMATCH',
      message: `iris/3/model.onnx hashes to sha256 ${sha256Hex(Buffer.from('other'))}, not the ${sha256Hex(onnx)} recorded in iris/3/checksums.json when it was pushed`,
    },
  )
  t.throws(
    () =>
      verifyChecksums(
        checksums,
        new Map([
          ['model.onnx', onnx],
          ['profile.json', undefined],
        ]),
        'iris/3/',
      ),
    {
      code: 'CHECKSUM_MISMATCH',
      message: 'iris/3/profile.json is recorded in iris/3/checksums.json but the version holds no such file',
    },
  )
})
