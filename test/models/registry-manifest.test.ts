// The manifest a registry reads per model: a default version, optionally more versions, nothing else.
import t from 'tap'
import { compareVersions, parseManifest } from '../../lib/models/store/manifest.js'

const parse = (text: string) => parseManifest(Buffer.from(text))

t.test('a manifest names the default version; versions adds others, sorted, the default included once', async (t) => {
  t.same(parse('{"default_version":"1"}'), { defaultVersion: '1', versions: ['1'] })
  t.same(parse('{"default_version":"2","versions":["10","1","2"]}'), { defaultVersion: '2', versions: ['1', '2', '10'] })
  t.same(parse('{"default_version":"3","versions":[]}'), { defaultVersion: '3', versions: ['3'] })
  const manifest = parse('{"default_version":"1"}')
  t.ok(Object.isFrozen(manifest) && Object.isFrozen(manifest.versions))
})

t.test('versions sort with their numbers compared as numbers', async (t) => {
  t.same(['1.10', '10', '2', '1.9', 'b', 'a'].sort(compareVersions), ['1.9', '1.10', '2', '10', 'a', 'b'])
})

const REFUSED: ReadonlyArray<readonly [string, string | Buffer, RegExp | string]> = [
  ['not JSON', '{"default_version":', /^\(document\): is not UTF-8 JSON: /],
  ['not UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), /^\(document\): is not UTF-8 JSON: /],
  ['an array', '["1"]', '(document): must be a JSON object'],
  ['null', 'null', '(document): must be a JSON object'],
  ['a string', '"1"', '(document): must be a JSON object'],
  ['an unknown member', '{"default_version":"1","versoins":["2"]}', 'versoins: is not a member of a manifest (default_version, versions)'],
  ['no default', '{"versions":["1"]}', 'default_version: is missing'],
  ['a numeric default', '{"default_version":1}', 'default_version: must be a version string matching /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/'],
  ['a default that is a path', '{"default_version":"1/../2"}', /^default_version: must be a version string/],
  ['an empty default', '{"default_version":""}', /^default_version: must be a version string/],
  ['versions not an array', '{"default_version":"1","versions":"2"}', 'versions: must be an array of version strings'],
  ['a bad listed version', '{"default_version":"1","versions":["2",".3"]}', /^versions\[1\]: must be a version string/],
  ['a repeated version', '{"default_version":"1","versions":["2","1","2"]}', 'versions[2]: repeats "2"'],
]

t.test('a manifest that is not exactly what the format says is refused, naming the member', async (t) => {
  for (const [what, text, message] of REFUSED) {
    t.throws(() => parseManifest(Buffer.from(text)), { name: 'ManifestError', code: 'INVALID_MANIFEST', message }, what)
  }
})
