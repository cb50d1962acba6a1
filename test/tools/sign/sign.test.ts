// What `svc sign` makes of one artifact document: the sha256 it states and the one its content
// hashes to, and the signed text, laid out as svc writes artifacts.
import t from 'tap'
import { ArtifactError } from '../../../lib/models/artifact.js'
import { readArtifactText } from '../../../lib/tools/sign/sign.js'
import { artifactBytes, rawArtifact } from '../../fixtures/models.js'

const SHIPPED = artifactBytes('iris')
const SHIPPED_SHA = rawArtifact('iris').sha256 as string

t.test('a shipped artifact: stated and computed agree, and signing changes no byte', async (t) => {
  const read = readArtifactText(SHIPPED)
  t.equal(read.stated, SHIPPED_SHA)
  t.equal(read.sha256, SHIPPED_SHA)
  t.equal(read.text, SHIPPED.toString('utf8'))
})

t.test('an edited artifact: the stated hash is the old one, the text carries the new', async (t) => {
  const raw = rawArtifact('iris')
  raw.parameters.weights[0][0] = 0.5
  const read = readArtifactText(Buffer.from(JSON.stringify(raw)))
  t.equal(read.stated, SHIPPED_SHA)
  t.not(read.sha256, SHIPPED_SHA)
  t.equal(JSON.parse(read.text).sha256, read.sha256)
  t.match(read.text, /^\{\n {2}"format_version": 1,\n/, 'laid out two spaces deep, as svc writes it')
  t.ok(read.text.endsWith('}\n'))
})

t.test('without a sha256: stated is (none) and the signed member goes last', async (t) => {
  const raw = rawArtifact('iris')
  delete raw.sha256
  const read = readArtifactText(Buffer.from(JSON.stringify(raw)))
  t.equal(read.stated, '(none)')
  t.equal(read.sha256, SHIPPED_SHA, 'the hash is of the content, not of the member')
  t.same(Object.keys(JSON.parse(read.text)).at(-1), 'sha256')
})

t.test('a document svc would refuse is refused, naming what is wrong', async (t) => {
  t.throws(() => readArtifactText(Buffer.from('{')), { code: 'INVALID_JSON', field: '(document)', reason: /^is not UTF-8 JSON: / })
  t.throws(() => readArtifactText(Buffer.from('[1]')), { code: 'INVALID_SCHEMA', field: '(document)', reason: 'must be a JSON object' })
  const raw = rawArtifact('iris')
  raw.task = 'regression'
  t.throws(() => readArtifactText(Buffer.from(JSON.stringify(raw))), ArtifactError, 'a right hash on a bad artifact is no pass')
})
