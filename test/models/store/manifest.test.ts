// The manifest a registry reads per model: a default version, optionally more versions and a rollout
// (a canary, a shadow), nothing else. What is wrong with a rollout is its own refusal, never the manifest's.
import t from 'tap'
import { compareVersions, parseManifest } from '../../../lib/models/store/manifest.js'

const parse = (text: string) => parseManifest(Buffer.from(text))
const NO_ROLLOUT = { canary: undefined, shadow: undefined, logPercent: undefined, rolloutError: undefined }

t.test('a manifest names the default version; versions adds others, sorted, the default included once', async (t) => {
  t.strictSame(parse('{"default_version":"1"}'), { defaultVersion: '1', versions: ['1'], ...NO_ROLLOUT })
  t.strictSame(parse('{"default_version":"2","versions":["10","1","2"]}'), { defaultVersion: '2', versions: ['1', '2', '10'], ...NO_ROLLOUT })
  t.strictSame(parse('{"default_version":"3","versions":[]}'), { defaultVersion: '3', versions: ['3'], ...NO_ROLLOUT })
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
  ['an unknown member', '{"default_version":"1","versoins":["2"]}', 'versoins: is not a member of a manifest (default_version, versions, canary, shadow, log)'],
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

t.test('a canary and a shadow name a listed version other than the default, with a percent from 0 to 100', async (t) => {
  const manifest = parse('{"default_version":"1","versions":["2","3"],"canary":{"version":"2","percent":5},"shadow":{"percent":100,"version":"3"}}')
  t.strictSame(manifest, {
    defaultVersion: '1',
    versions: ['1', '2', '3'],
    canary: { version: '2', percent: 5 },
    shadow: { version: '3', percent: 100 },
    logPercent: undefined,
    rolloutError: undefined,
  })
  t.ok(Object.isFrozen(manifest.canary) && Object.isFrozen(manifest.shadow))
  t.strictSame(
    parse('{"default_version":"1","versions":["2"],"canary":{"version":"2","percent":0}}').canary,
    { version: '2', percent: 0 },
    '0 %: declared, idle',
  )
  t.strictSame(parse('{"default_version":"1","versions":["2"],"shadow":{"version":"2","percent":12.5}}').shadow, { version: '2', percent: 12.5 })
})

const ROLLOUT_REFUSED: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
  ['a canary that is not an object', { canary: '2' }, 'canary: must be an object {"version": …, "percent": …}'],
  ['an unknown canary member', { canary: { version: '2', percent: 5, weight: 1 } }, 'canary.weight: is not a member of canary (version, percent)'],
  ['no version', { shadow: { percent: 5 } }, 'shadow.version: is missing'],
  ['a bad version', { canary: { version: '../2', percent: 5 } }, 'canary.version: must be a version string matching /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/'],
  ['no percent', { canary: { version: '2' } }, 'canary.percent: must be a number from 0 to 100, is missing'],
  ['a percent as text', { canary: { version: '2', percent: '5' } }, 'canary.percent: must be a number from 0 to 100, is "5"'],
  ['a percent over 100', { shadow: { version: '2', percent: 101 } }, 'shadow.percent: must be a number from 0 to 100, is 101'],
  ['a negative percent', { canary: { version: '2', percent: -0.5 } }, 'canary.percent: must be a number from 0 to 100, is -0.5'],
  [
    'a canary that is the default',
    { canary: { version: '1', percent: 5 } },
    'canary.version: "1" is the default version; a canary must be another listed version',
  ],
  [
    'a shadow that is the default',
    { shadow: { version: '1', percent: 5 } },
    'shadow.version: "1" is the default version; a shadow must be another listed version',
  ],
  ['a version not listed', { canary: { version: '3', percent: 5 } }, 'canary.version: "3" is not listed in versions'],
  ['a log that is not an object', { log: 10 }, 'log: must be an object {"percent": …}'],
  ['an unknown log member', { log: { percent: 10, rate: 1 } }, 'log.rate: is not a member of log (percent)'],
  ['a log without a percent', { log: {} }, 'log.percent: must be a number from 0 to 100, is missing'],
  ['a log percent over 100', { log: { percent: 150 } }, 'log.percent: must be a number from 0 to 100, is 150'],
  ['a good log beside a bad canary', { log: { percent: 10 }, canary: { version: '3', percent: 5 } }, 'canary.version: "3" is not listed in versions'],
]

t.test("a log member sets the share of the model's requests the payload log writes", async (t) => {
  t.equal(parse('{"default_version":"1","log":{"percent":12.5}}').logPercent, 12.5)
  t.equal(parse('{"default_version":"1","log":{"percent":0}}').logPercent, 0, '0 %: nothing of this model is logged')
  t.equal(parse('{"default_version":"1"}').logPercent, undefined, 'absent: SVC_PAYLOAD_LOG_PERCENT')
})

t.test('a rollout that is wrong is refused with the member named, and the rest of the manifest stands', async (t) => {
  for (const [what, rollout, message] of ROLLOUT_REFUSED) {
    const manifest = parse(JSON.stringify({ default_version: '1', versions: ['2'], ...rollout }))
    t.strictSame(
      manifest,
      { defaultVersion: '1', versions: ['1', '2'], canary: undefined, shadow: undefined, logPercent: undefined, rolloutError: message },
      what,
    )
  }
})
