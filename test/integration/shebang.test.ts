// The CLI in tests as users run it: with the Node flags of its own `#!` line (test/fixtures/shebang.ts),
// read by the one parser the bench and the reliability scripts use too.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { shebangNodeFlags } from '../fixtures/shebang.js'
import { ROOT, spawnBuilt, spawnTs } from '../fixtures/spawn.js'

const CLI = 'bin/svc.ts'

t.test('tests start the CLI with the Node flags of its #! line, as an installed svc runs', async (t) => {
  const probe = spawnTs('test/fixtures/exec-argv.ts')
  t.same(await probe.exited, { code: 0, signal: null })
  t.same((JSON.parse(probe.stdout()) as string[]).slice(-2), ['--stack-size=2000', '--no-memory-reducer'], "a script's own #! flags, last")
  // What each child was started with, as the kernel keeps it: node, its flags, the script, its
  // arguments. spawn returns once the child has run exec, long before node could exit.
  for (const [script, child, before] of [
    [`${ROOT}${CLI}`, spawnTs(CLI, ['--port', '0']), process.execArgv],
    [`${ROOT}dist/bin/svc.js`, spawnBuilt(['--port', '0']), []],
  ] as const) {
    const argv = readFileSync(`/proc/${child.proc.pid}/cmdline`, 'utf8').split('\0').slice(0, -1)
    child.proc.kill('SIGKILL')
    const flags = shebangNodeFlags(readFileSync(script, 'utf8'))
    t.same(argv, [process.execPath, ...before, ...flags, script, '--port', '0'], script)
    await child.exited
  }
})
