import { parseArgs } from 'node:util'
import t from 'tap'
import { argsProblem } from '../../lib/core/args.js'

const refusal = (args: string[], allowPositionals: boolean): unknown => {
  try {
    parseArgs({ args, options: { port: { type: 'string' } }, strict: true, allowPositionals })
  } catch (error: unknown) {
    return error
  }
  throw new Error('expected parseArgs to refuse')
}

t.test("argsProblem is parseArgs' message without its hint about positional arguments", async (t) => {
  t.equal(argsProblem(refusal(['--prot', '80'], true)), "Unknown option '--prot'")
  t.equal(argsProblem(refusal(['--prot', '80'], false)), "Unknown option '--prot'")
  t.equal(argsProblem(refusal(['--port'], false)), "Option '--port <value>' argument missing")
  t.equal(argsProblem(refusal(['serve'], false)), "Unexpected argument 'serve'. This command does not take positional arguments")
})

t.test('argsProblem reads anything thrown', async (t) => {
  t.equal(argsProblem('text'), 'text')
})
