// ops/runbooks: one per alert, each reached by its alert's runbook_url, with the sections an
// on-call engineer looks for, pointing at dashboard panels that exist.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { allPanels, loadDashboard } from './fixtures/dashboard.js'
import { OPS } from './fixtures/ops.js'
import { alertRules } from './fixtures/rules.js'

const DIR = join(OPS, 'runbooks')
const SECTIONS = ['Meaning', 'Impact', 'Dashboard', 'First checks', 'Mitigation', 'Escalation']

t.test("every alert's runbook_url resolves to a runbook in ops/runbooks, and every runbook has an alert", async (t) => {
  const files = new Set((await readdir(DIR)).filter((f) => f.endsWith('.md')))
  const linked = new Set<string>()
  for (const rule of await alertRules()) {
    const file = /\/([^/]+\.md)$/.exec(rule.annotations?.['runbook_url'] ?? '')?.[1]
    t.ok(file !== undefined && files.has(file), `${rule.alert} → ${rule.annotations?.['runbook_url']}`)
    if (file !== undefined) linked.add(file)
  }
  t.same([...files].sort(), [...linked].sort(), 'no runbook without an alert')
})

t.test('each runbook has the sections, the first checks and a panel that exists', async (t) => {
  const panels = new Set(allPanels(await loadDashboard()).map((p) => p.title))
  for (const file of (await readdir(DIR)).filter((f) => f.endsWith('.md'))) {
    const text = await readFile(join(DIR, file), 'utf8')
    t.match(text, new RegExp(`^# ${file.replace(/\.md$/, '')}\\n`), `${file}: titled by its alert`)
    t.same(
      [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]),
      SECTIONS,
      `${file}: sections`,
    )
    for (const check of ['journalctl -u', '/ready', '/metrics', 'deploy']) t.match(text, check, `${file}: first checks include ${check}`)
    const dashboardSection = /^## Dashboard\n([\s\S]*?)^## /m.exec(text)?.[1] ?? ''
    const named = [...dashboardSection.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string)
    t.ok(named.length > 0, `${file}: names a dashboard panel`)
    for (const title of named) t.ok(panels.has(title), `${file}: panel "${title}" exists`)
  }
})
