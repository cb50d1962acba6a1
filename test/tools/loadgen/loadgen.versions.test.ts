// svc loadgen against real services rolling out a second iris version: --version names it in every
// request, --label-noise VERSION=P makes only that version's labels wrong (a worse canary staged),
// and --token / --header reach a fleet behind SVC_API_TOKENS.
import t, { type Test } from 'tap'
import { runLoadgenCommand } from '../../../lib/tools/loadgen/command.js'
import { LoadgenUsageError } from '../../../lib/tools/loadgen/errors.js'
import { isCleanRun, runLoadgen } from '../../../lib/tools/loadgen/loadgen.js'
import { startApp, type Running } from '../../fixtures/app.js'
import { loadgenOptions } from '../../fixtures/loadgen.js'
import { sample } from '../../fixtures/metrics-text.js'
import { tempTree } from '../../fixtures/model-store.js'
import { irisVersions, withCanary } from '../../fixtures/rollout.js'

const SECRET = 'the fleet secret, 32 bytes long!'
const TOKEN = 'loadgen-test-token-0123456789'

/** iris versions 1 (the default) and 2 (a canary taking `percent` of the requests that name none). */
const rollout = async (t: Test, percent: number, env: Readonly<Record<string, string>> = {}): Promise<Running> =>
  startApp(t, { SVC_MODEL_STORE: await tempTree(t, irisVersions(withCanary(percent))), ...env })

const scrape = async (running: Running, headers: Record<string, string> = {}): Promise<string> => (await fetch(`${running.base}/metrics`, { headers })).text()

const rowsOf = (text: string, version: string): number =>
  sample(text, 'svc_model_predictions_total', { model: 'iris', version, environment: 'dev' }) ?? Number.NaN

/** Labels scored for a version, and how many of them matched the answer. */
const scored = (text: string, version: string): { rows: number; right: number } => {
  let [rows, right] = [0, 0]
  for (const [, labels, value] of text.matchAll(/^svc_model_feedback_confusion_total\{(.*)\} (\S+)$/gm)) {
    if (!(labels as string).includes(`version="${version}"`)) continue
    rows += Number(value)
    if ((labels as string).includes('correct="true"')) right += Number(value)
  }
  return { rows, right }
}

t.test('--version names the version in every request: a 10 % canary answers them all', async (t) => {
  const running = await rollout(t, 10)
  const lines: string[] = []
  const summary = await runLoadgen(loadgenOptions(running.base, { version: '2', rate: 40, durationMs: 250, batch: 10, concurrency: 100 }), (line) =>
    lines.push(line),
  )
  t.ok(isCleanRun(summary))
  t.equal(summary.rows, 100)
  const text = await scrape(running)
  t.equal(rowsOf(text, '2'), 100, 'every row answered by version 2')
  t.equal(rowsOf(text, '1'), 0, 'none by the default')
  t.match(lines[0], /^loadgen: iris version 2 named in every request at /)
})

t.test('a --version or --label-noise version the model does not serve is a usage error naming the flag, exit 2', async (t) => {
  const running = await rollout(t, 10)
  const error = await t.rejects(runLoadgen(loadgenOptions(running.base, { version: '3' }), () => {}))
  t.type(error, LoadgenUsageError)
  t.equal((error as unknown as Error).message, '--version 3: model iris serves versions 1, 2')
  const noisy = loadgenOptions(running.base, {
    feedback: true,
    versionNoise: new Map([
      ['2', 0.1],
      ['9', 0.3],
    ]),
  })
  await t.rejects(
    runLoadgen(noisy, () => {}),
    { name: 'LoadgenUsageError', message: '--label-noise 9=0.3: model iris serves versions 1, 2' },
  )
  const stderr: string[] = []
  const code = await runLoadgenCommand(['--model', 'iris', '--url', running.base, '--version', '3'], { stdout: () => {}, stderr: (text) => stderr.push(text) })
  t.equal(code, 2)
  t.equal(stderr.join(''), 'svc loadgen: --version 3: model iris serves versions 1, 2\nsvc loadgen --help lists the options.\n')
  t.equal(rowsOf(await scrape(running), '1'), 0, 'nothing was sent')
})

t.test("--label-noise 2=1 makes every label of the canary's answers wrong and none of the default's", async (t) => {
  const running = await rollout(t, 50, { SVC_FEEDBACK_SECRET: SECRET })
  const lines: string[] = []
  const options = loadgenOptions(running.base, { rate: 40, durationMs: 500, batch: 10, concurrency: 100, feedback: true, versionNoise: new Map([['2', 1]]) })
  const summary = await runLoadgen(options, (line) => lines.push(line))
  t.ok(isCleanRun(summary), `every label accepted: ${JSON.stringify(summary)}`)
  t.match(lines[0], /; labels from species to the same instance, 0 % of them wrong \(version 2: 100 %\)$/)
  const text = await scrape(running)
  const [v1, v2] = [scored(text, '1'), scored(text, '2')]
  t.equal(v1.rows, rowsOf(text, '1'), 'a label for every row the default answered')
  t.equal(v2.rows, rowsOf(text, '2'), 'and for every row the canary answered')
  t.ok(v1.rows > 0 && v2.rows > 0, `both versions answered: ${v1.rows} and ${v2.rows} rows`)
  // Version 2 is a rebuilt iris: right on most training rows, so a right label matches most answers.
  t.ok(v1.right / v1.rows > 0.8, `the default's labels are the truths: ${v1.right} of ${v1.rows} match its answers`)
  t.ok(v2.right / v2.rows < 0.2, `the canary's are all wrong: only ${v2.right} of ${v2.rows} match, where its answer was wrong too`)
})

t.test('--token, or --header Authorization, reaches a fleet with SVC_API_TOKENS; without, the description is refused', async (t) => {
  const running = await rollout(t, 0, { SVC_API_TOKENS: TOKEN, SVC_FEEDBACK_SECRET: SECRET })
  await t.rejects(
    runLoadgen(loadgenOptions(running.base), () => {}),
    { message: /^GET \/api\/v1\/models\/iris: 401/ },
  )
  const stdout: string[] = []
  const args = ['--model', 'iris', '--url', running.base, '--rate', '20', '--duration', '250ms', '--batch', '5', '--concurrency', '100', '--feedback']
  const io = { stdout: (text: string) => stdout.push(text), stderr: (text: string) => stdout.push(text) }
  t.equal(await runLoadgenCommand([...args, '--token', TOKEN], io), 0, stdout.join(''))
  t.equal(await runLoadgenCommand([...args, '--header', `Authorization: Bearer ${TOKEN}`, '--header', 'X-Team: ml'], io), 0, stdout.join(''))
  t.match(stdout.join(''), /labels: sent 25 in \d+ requests, 25 accepted, 0 refused/)
  const text = await scrape(running)
  t.equal(rowsOf(text, '1'), 50, 'both runs predicted')
  t.equal(scored(text, '1').rows, 50, 'and their labels were scored: the feedback requests carried the token too')
})
