// README.md's rollout walk, run as written: the shipped iris copied into a store, a real svc from
// dist/ (`npm run -s build` first) serving it with hot reload, version 2 copied from 1, edited and
// pushed (signed) with `svc push`, a manifest giving it a 20 % canary, and the curl loop that shows the
// split, whose counts must be the ones README.md states. The commands come from the README's block
// itself; only the port is changed (0, then the one svc took), and `svc` on PATH runs dist/.
import { execFile, execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { readmeBlocks } from '../fixtures/readme-blocks.js'
import { predictIris, until } from '../fixtures/rollout.js'
import { asItsShebangRuns } from '../fixtures/shebang.js'
import { ROOT, spawnProgram, UNTAPPED_ENV } from '../fixtures/spawn.js'

const HEADING = '### Rolling out a new model version'
const SVC = join(ROOT, 'dist/bin/svc.js')

type Ran = Readonly<{ code: number; output: string }>

const bash = (script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> =>
  new Promise((resolve) => {
    execFile('bash', ['-e', '-c', script], { cwd, env, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` }),
    )
  })

const hasTool = (name: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** The walk's parts: before the server, the server's line, the new version, the loop. */
const walk = () => {
  const lines = (readmeBlocks('README.md', HEADING, 'sh')[0] as string).trimEnd().split('\n')
  const server = lines.findIndex((line) => / svc --port 8000 &$/.test(line))
  const loop = lines.findIndex((line) => line.startsWith('for '))
  if (server === -1 || loop < server) throw new Error(`README.md, ${HEADING}: expected a server line (svc --port 8000 &), then a for loop`)
  const counts = /# ((?:\d+ × \S+(?:, )?)+):/.exec(lines.at(-1) as string)?.[1]
  return {
    before: lines.slice(0, server).join('\n'),
    server: (lines[server] as string).replace(/ --port 8000 &$/, ' --port 0'),
    version: lines.slice(server + 1, loop).join('\n'),
    loop: lines.slice(loop).join('\n'),
    /** What the README says the loop prints: `156 × 1, 44 × 2`, as version → count. */
    counts: Object.fromEntries((counts ?? '').split(', ').map((pair) => pair.split(' × ').reverse())),
  }
}

t.test("README's rollout: a copy of version 1, edited, pushed, listed as a canary, answers its share", async (t) => {
  const missing = ['curl', 'jq'].filter((tool) => !hasTool(tool))
  if (missing.length > 0) {
    const message = `${missing.join(' and ')} not installed (Debian's curl, jq): skipping README's rollout walk`
    if (process.env['CI'] === 'true') t.fail(`${message} (required under CI=true)`)
    else t.pass(message, { skip: message })
    return
  }
  t.ok(existsSync(SVC), `${SVC} is built (npm run -s build)`)
  const steps = walk()
  const dir = await mkdtemp(join(tmpdir(), 'svc-rollout-readme-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  // The folder the README's commands run in: a checkout's lib/, and `svc` on PATH.
  await symlink(join(ROOT, 'lib'), join(dir, 'lib'))
  await mkdir(join(dir, 'bin'))
  const command = [process.execPath, ...asItsShebangRuns(SVC)].map((word) => JSON.stringify(word)).join(' ')
  await writeFile(join(dir, 'bin/svc'), `#!/bin/sh\nexec ${command} "$@"\n`)
  await chmod(join(dir, 'bin/svc'), 0o755)
  const env = { ...UNTAPPED_ENV, PATH: `${join(dir, 'bin')}:${UNTAPPED_ENV['PATH']}` }

  const before = await bash(steps.before, dir, env)
  if (!t.equal(before.code, 0, before.output)) return
  // bash runs a single command in place (exec), so the signal below reaches svc itself.
  const server = spawnProgram('bash', ['-c', steps.server], { cwd: dir, env })
  t.teardown(async () => {
    server.proc.kill('SIGTERM')
    await server.exited
  })
  const { port } = await server.waitForEvent('application_started', 60_000)
  const base = `http://127.0.0.1:${port}`

  const version = await bash(steps.version, dir, env)
  if (!t.equal(version.code, 0, version.output)) return
  t.match(
    version.output,
    /^uploaded iris\/2\/model\.json \(\d+ bytes\)\nuploaded iris\/2\/checksums\.json \(\d+ bytes\)\nadded version 2 to iris\/manifest\.json in \S+\/store \(versions: 1, 2; default 1\)\n/,
    'svc push uploaded version 2 and listed it',
  )
  t.match(version.output, /iris-2\/model\.json: sha256 [0-9a-f]{64} is not its content's; uploaded signed, sha256 [0-9a-f]{64}/, 'and signed it on the way')
  const canary = async () => ((await (await fetch(`${base}/api/v1/models/iris`)).json()) as { rollout?: { canary?: unknown } }).rollout?.canary
  await until(async () => JSON.stringify(await canary()) === '{"version":"2","percent":20}', 'the reload applies the canary', 60_000)

  const loop = await bash(steps.loop.replaceAll('localhost:8000', `localhost:${port}`), dir, env)
  if (!t.equal(loop.code, 0, loop.output)) return
  const counted = Object.fromEntries(
    loop.output
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/).reverse()),
  )
  t.same(counted, steps.counts, `the split README.md states (${JSON.stringify(steps.counts)})`)
  t.ok(Number(counted['2']) > 0 && Number(counted['1']) > Number(counted['2']), 'version 2 answers its share, version 1 the rest')

  // The edit meant something: the same row gets other probabilities from version 2.
  const answers = await Promise.all(['1', '2'].map((v) => predictIris(base, { version: v })))
  t.same(
    answers.map((a) => a.version),
    ['1', '2'],
  )
  t.not(JSON.stringify(answers[0]?.body['outputs']), JSON.stringify(answers[1]?.body['outputs']))
})
