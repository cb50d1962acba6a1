// `svc loadgen` from its arguments to its exit status: 0 for --help, 2 for a bad command line (its
// message and the pointer to --help on stderr), 1 for a run that cannot reach the service.
import t from 'tap'
import { runLoadgenCommand } from '../../../lib/tools/loadgen/command.js'
import { LOADGEN_USAGE } from '../../../lib/tools/loadgen/loadgen.js'
import { kernelVersion } from '../../fixtures/model-runtime.js'
import { closedPort, httpServer } from '../../fixtures/tcp.js'

const run = async (argv: readonly string[]) => {
  const out = { stdout: '', stderr: '' }
  const status = await runLoadgenCommand(argv, { stdout: (text) => void (out.stdout += text), stderr: (text) => void (out.stderr += text) })
  return { status, ...out }
}

t.test('--help and -h print the usage on stdout and exit 0', async (t) => {
  for (const flag of ['--help', '-h']) t.same(await run(['--model', 'iris', flag]), { status: 0, stdout: LOADGEN_USAGE, stderr: '' }, flag)
})

t.test('a bad option exits 2, its message and the pointer to --help on stderr', async (t) => {
  t.same(await run(['--model', 'iris', '--rate', '0']), {
    status: 2,
    stdout: '',
    stderr: 'svc loadgen: --rate 0: expected a rate above 0 and at most 100000\nsvc loadgen --help lists the options.\n',
  })
  t.same(await run([]), { status: 2, stdout: '', stderr: 'svc loadgen: --model is required\nsvc loadgen --help lists the options.\n' })
})

t.test('nothing listening on the URL exits 1, the failure in one line on stderr without the pointer to --help', async (t) => {
  const port = await closedPort()
  const { status, stderr } = await run(['--model', 'iris', '--url', `http://127.0.0.1:${port}`, '--duration', '1s', '--timeout', '2s'])
  t.equal(status, 1)
  t.match(stderr, /^svc loadgen: .+\n$/)
  t.notMatch(stderr, /--help/)
})

t.test('a run exits 0 when every request is answered 2xx, 1 when one is not', async (t) => {
  const { version, sha256, inputs, task, outputs, classes } = kernelVersion('iris').model as ReturnType<typeof kernelVersion>['model'] & { classes: string[] }
  const described = JSON.stringify({ version, versions: [version], sha256, inputs, task, outputs, classes })
  let predictStatus = 200
  const server = await httpServer(t, (req, res) => {
    req.resume()
    req.on('end', () => {
      const status = req.method === 'GET' ? 200 : predictStatus
      res.writeHead(status, { 'content-type': 'application/json' }).end(req.method === 'GET' ? described : '{}')
    })
  })
  const argv = ['--model', 'iris', '--url', `http://127.0.0.1:${server.port}`, '--rate', '20', '--duration', '150ms', '--seed', '1']
  const clean = await run(argv)
  t.equal(clean.status, 0, clean.stderr)
  t.match(clean.stdout, /loadgen: sent \d+ requests .*, 0 failed, 0 skipped/)
  predictStatus = 500
  const failed = await run(argv)
  t.equal(failed.status, 1)
  t.match(failed.stdout, /500: \d+/)
  t.equal(failed.stderr, '', 'a run that went is no failure of the command')
})
