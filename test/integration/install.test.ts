// svc installed as a package, the two ways the READMEs say:
// 1. `npm pack`, as on ops/README.md's build machine (the prepare script builds dist/);
// 2. a developer's `npm link --ignore-scripts` (README.md, Running), into a temporary prefix:
//    its bin/svc runs this checkout's build;
// 3. the operator's `sudo npm install -g …` of ops/README.md, read from it and run as written but
//    for sudo, with `--prefix` to a temporary directory, on a host that reaches the npm registry and
//    nothing else: onnxruntime-node's install script downloads through global-agent, which
//    GLOBAL_AGENT_HTTP(S)_PROXY sends to a closed port here;
// 4. the installed svc: --version, the ONNX runtime it ships, a start-up on PORT=0 and a SIGTERM.
// The dependencies come from the npm registry: without it (`npm ping` fails) the test skips with a
// message, except under CI=true. Every npm command has a timeout, and the file one of its own.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, readdir, realpath, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { PACKAGE_VERSION } from '../fixtures/package-version.js'
import { readmeBlocks } from '../fixtures/readme-blocks.js'
import { ROOT, spawnProgram, UNTAPPED_ENV as ENV } from '../fixtures/spawn.js'

t.setTimeout(10 * 60_000)

type Ran = Readonly<{ code: number; output: string }>

const run = (command: string, args: readonly string[], cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv = {}): Promise<Ran> =>
  new Promise((resolve) => {
    execFile(command, args, { cwd, env: { ...ENV, ...env }, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` }),
    )
  })

/** A port nothing listens on: a connection to it is refused at once. */
const closedPort = async (): Promise<number> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** ops/README.md's install line, as words: `sudo npm install -g … ./svc-<version>.tgz`. */
const documentedInstall = (): string[] => {
  const line = readFileSync(join(ROOT, 'ops', 'README.md'), 'utf8')
    .split('\n')
    .find((l) => l.startsWith('sudo npm install -g '))
  return (line ?? '').replace(/\s+#.*$/, '').split(/\s+/)
}

t.test('packed, linked for a developer, installed for an operator from the npm registry alone: svc runs', async (t) => {
  const ping = await run('npm', ['ping'], ROOT, 30_000)
  if (ping.code !== 0) {
    const message = `the npm registry cannot be reached (npm ping: ${ping.output.trim().split('\n').at(-1)}): skipping the install`
    if (process.env['CI'] === 'true') t.fail(`${message} (required under CI=true)`)
    else t.pass(message, { skip: message })
    return
  }
  const dir = await mkdtemp(join(tmpdir(), 'svc-install-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))

  const tarball = `svc-${PACKAGE_VERSION}.tgz`
  const packed = await run('npm', ['pack', '--pack-destination', dir], ROOT, 240_000)
  if (!t.equal(packed.code, 0, packed.output)) return
  t.same(await readdir(dir), [tarball])

  // README.md: "npm link --ignore-scripts" after npm ci, which built dist/ as the pack just did.
  const linkPrefix = join(dir, 'link')
  const linked = await run('npm', ['link', '--ignore-scripts'], ROOT, 120_000, { npm_config_prefix: linkPrefix })
  if (!t.equal(linked.code, 0, linked.output)) return
  t.equal(await realpath(join(linkPrefix, 'bin', 'svc')), join(ROOT, 'dist', 'bin', 'svc.js'), "the link runs this checkout's build")
  t.same(await run(join(linkPrefix, 'bin', 'svc'), ['--version'], dir, 30_000), { code: 0, output: `${PACKAGE_VERSION}\n` })

  const words = documentedInstall()
  t.same(words.slice(0, 4), ['sudo', 'npm', 'install', '-g'], 'ops/README.md: sudo npm install -g …')
  t.equal(words.at(-1), `./${tarball}`, 'the tarball npm pack writes')
  const prefix = join(dir, 'prefix')
  const proxy = `http://127.0.0.1:${await closedPort()}`
  const installed = await run('npm', [...words.slice(2), '--prefix', prefix], dir, 240_000, {
    GLOBAL_AGENT_HTTP_PROXY: proxy,
    GLOBAL_AGENT_HTTPS_PROXY: proxy,
  })
  if (!t.equal(installed.code, 0, installed.output)) return

  const svc = join(prefix, 'bin', 'svc')
  t.same(await run(svc, ['--version'], dir, 30_000), { code: 0, output: `${PACKAGE_VERSION}\n` })
  // ops/README.md's drop-in that turns V8's memory reducer off names the installed CLI's path.
  const [dropIn = ''] = readmeBlocks('ops/README.md', '### 3. Run one instance per core', 'ini')
  const flagged = /^ExecStart=\/usr\/bin\/node (.+) --port %i$/m.exec(dropIn)?.[1]?.replaceAll('/usr/local/', `${prefix}/`) ?? ''
  t.same(await run(process.execPath, [...flagged.split(' '), '--version'], dir, 30_000), { code: 0, output: `${PACKAGE_VERSION}\n` }, flagged)
  const backends = await run(
    process.execPath,
    ['--input-type=module', '-e', "const ort = await import('onnxruntime-node'); console.log(ort.listSupportedBackends().map((b) => b.name).join(','))"],
    join(prefix, 'lib', 'node_modules', 'svc'),
    30_000,
  )
  t.match(backends, { code: 0, output: /(^|,)cpu(,|\n)/ }, "onnxruntime-node's CPU runtime, shipped in its package, loads without its install script")

  const child = spawnProgram(svc, [], { cwd: dir, env: { ...ENV, PORT: '0', SVC_ENVIRONMENT: 'dev' } })
  t.teardown(() => void child.proc.kill('SIGKILL'))
  const started = await child.waitForEvent('application_started', 60_000)
  t.match(started, { version: PACKAGE_VERSION, port: Number })
  const root = await fetch(`http://127.0.0.1:${String(started['port'])}/`)
  t.equal(root.status, 200)
  t.match(await root.json(), { service: 'svc', version: PACKAGE_VERSION })
  child.proc.kill('SIGTERM')
  t.same(await child.exited, { code: 0, signal: null }, child.stderr())
})
