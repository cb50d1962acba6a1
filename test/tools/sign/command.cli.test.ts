// `svc sign` as a user runs it: a child process of bin/svc.ts, its exit status and its two streams.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ARTIFACTS, rawArtifact } from '../../fixtures/models.js'
import { spawnTs } from '../../fixtures/spawn.js'

t.test('svc sign --check: a shipped artifact is right (exit 0), a file that is not JSON is named on stderr (exit 2)', async (t) => {
  const shipped = new URL('iris/1/model.json', ARTIFACTS).pathname
  const broken = join(t.testdir(), 'model.json')
  writeFileSync(broken, '{')
  const child = spawnTs('bin/svc.ts', ['sign', '--check', shipped, broken])
  t.same(await child.exited, { code: 2, signal: null })
  t.equal(child.stdout(), `${shipped}: sha256 ${rawArtifact('iris').sha256} is right\n`)
  t.match(child.stderr(), new RegExp(`^svc sign: ${broken}: \\(document\\): is not UTF-8 JSON: [^\\n]+\\n$`))
})
