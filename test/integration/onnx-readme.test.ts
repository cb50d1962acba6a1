// README.md's ONNX route without the Python package index: its python3-onnx snippet, run as written
// by Debian's /usr/bin/python3 in an empty folder, gives model.onnx and metadata.json; svc serves
// them, and each answer equals the one computed here from the coefficients the snippet states,
// by plain arithmetic: the softmax of x · coefᵀ + intercept, and its most probable class.
import { execFile } from 'node:child_process'
import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { startApp } from '../fixtures/app.js'
import { tempTree } from '../fixtures/model-store.js'
import { PYTHON, python } from '../fixtures/onnx-graphs.js'
import { readmeBlocks } from '../fixtures/readme-blocks.js'

const HEADING = '### Serve your own model'

/** The snippet: the python block of the section that builds the graph with onnx.helper. */
const snippet = (): string => {
  const found = readmeBlocks('README.md', HEADING, 'python').find((block) => block.includes('from onnx import'))
  if (found === undefined) throw new Error(`README.md, ${HEADING}: no python block using onnx.helper`)
  return found
}

/** `name = [...]` of the snippet, read as JSON (its lists of numbers and double-quoted strings are JSON too). */
const stated = <T>(code: string, name: string): T => {
  const match = new RegExp(`^${name} = (\\[.*\\])`, 'm').exec(code)
  if (match === null) throw new Error(`the snippet sets no ${name}`)
  return JSON.parse(match[1] as string) as T
}

const ROWS = [
  [5.1, 3.5, 1.4, 0.2],
  [6.0, 2.9, 4.5, 1.5],
  [6.7, 3.0, 5.2, 2.3],
  [4.9, 2.5, 4.5, 1.7],
]

t.test("README's python3-onnx snippet builds a logistic model svc serves, answering what its coefficients compute", async (t) => {
  try {
    await python('import onnx')
  } catch {
    const message = `${PYTHON} cannot import onnx: install Debian's python3-onnx package`
    if (process.env['CI'] === 'true') t.fail(`${message} (required under CI=true)`)
    else t.pass(message, { skip: message })
    return
  }
  const code = snippet()
  const root = await tempTree(t, { 'iris-lr/manifest.json': '{"default_version": "1"}' })
  const folder = join(root, 'iris-lr/1')
  await mkdir(folder)
  // Run where the files are to be: the snippet writes model.onnx and metadata.json beside it.
  await new Promise<void>((resolve, reject) =>
    execFile(PYTHON, ['-c', code], { cwd: folder }, (error, _stdout, stderr) =>
      error === null ? resolve() : reject(new Error(`the snippet failed: ${stderr}`)),
    ),
  )
  const features = stated<string[]>(code, 'features')
  const classes = stated<string[]>(code, 'classes')
  const coef = stated<number[][]>(code, 'coef')
  const intercept = stated<number[]>(code, 'intercept')
  t.same(JSON.parse(await readFile(join(folder, 'metadata.json'), 'utf8')), { features, classes, type: 'LogisticRegression' })

  const running = await startApp(t, { SVC_MODEL_STORE: root })
  const res = await fetch(`${running.base}/api/v1/predict`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'iris-lr', instances: ROWS.map((row) => Object.fromEntries(features.map((name, f) => [name, row[f]]))) }),
  })
  const body = (await res.json()) as { outputs: Array<{ name: string; data: Array<string | number> }> }
  t.equal(res.status, 200, JSON.stringify(body))
  const [label, probabilities] = body.outputs
  t.same([label?.name, probabilities?.name], ['label', 'probabilities'])

  const expected = ROWS.map((x) => {
    const logits = coef.map((row, k) => row.reduce((sum, w, f) => sum + w * (x[f] as number), intercept[k] as number))
    const top = Math.max(...logits)
    const exps = logits.map((z) => Math.exp(z - top))
    const total = exps.reduce((a, b) => a + b, 0)
    return exps.map((e) => e / total)
  })
  t.same(
    label?.data,
    expected.map((p) => classes[p.indexOf(Math.max(...p))]),
    'the label is the class of the largest logit, named by metadata.json',
  )
  // The graph computes in float32: its probabilities agree with these to a few parts in 10⁶.
  for (const [i, p] of expected.flat().entries())
    t.ok(Math.abs((probabilities?.data[i] as number) - p) < 1e-5, `probability ${i}: ${probabilities?.data[i]} ≈ ${p}`)
  t.same(new Set(label?.data), new Set(classes), 'the rows reach every class')
})
