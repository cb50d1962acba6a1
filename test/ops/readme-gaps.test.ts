// What ops/README.md must tell an operator before the shipped files run anywhere real, read from
// the files themselves so that a placeholder added there and left unexplained fails here: every
// non-loopback host in the target lists, the Alertmanager address, the HAProxy lines that need
// root, socat's install, and what `increase()` does to the fleet's row counts.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import t from 'tap'
import { OPS, readYaml } from './fixtures/ops.js'

type TargetGroup = { targets: string[] }
type PrometheusConfig = { alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> } }

const readme = async (): Promise<string> => readFile(join(OPS, 'README.md'), 'utf8')

/** The README's paragraphs and list items, each on one line: a statement and where it applies travel together. */
const passages = (text: string): string[] =>
  text
    .split(/\n(?=\s*\n|\d+\. |- )/)
    .map((passage) => passage.replace(/\s+/g, ' ').trim())
    .filter(Boolean)

/** The passage that names `what`, or undefined. */
const passageNaming = (text: string, what: string): string | undefined => passages(text).find((passage) => passage.includes(what))

t.test('every placeholder host of the stage and prod target lists is named, with the file to change it in', async (t) => {
  const text = await readme()
  for (const env of ['stage', 'prod']) {
    const groups = await readYaml<TargetGroup[]>(`prometheus/targets/${env}.yml`)
    const hosts = new Set(groups.flatMap((group) => group.targets).map((target) => target.replace(/:\d+$/, '')))
    t.ok(hosts.size > 0, `${env}: targets listed`)
    for (const host of hosts) {
      if (host === '127.0.0.1' || host === 'localhost') continue
      const passage = passageNaming(text, `\`${host}\``)
      t.ok(passage?.includes(`targets/${env}.yml`), `${host} (targets/${env}.yml) is named in ops/README.md beside its file: ${passage}`)
    }
  }
})

t.test('the Alertmanager address is named with where prometheus.yml holds it', async (t) => {
  const text = await readme()
  const config = await readYaml<PrometheusConfig>('prometheus/prometheus.yml')
  const targets = config.alerting.alertmanagers.flatMap((a) => a.static_configs.flatMap((s) => s.targets))
  t.ok(targets.length > 0)
  for (const target of targets) {
    const passage = passages(text).find((p) => p.includes(`\`${target}\``) && p.includes('alertmanagers'))
    t.ok(passage?.includes('`prometheus.yml`'), `${target}: ops/README.md says it is in prometheus.yml under alerting.alertmanagers`)
  }
})

t.test('the HAProxy lines to edit off its Debian host are quoted as the configuration has them, and socat is installed by a command', async (t) => {
  const text = await readme()
  const config = (await readFile(join(OPS, 'haproxy/haproxy.cfg'), 'utf8')).split('\n').map((line) => line.replace(/#.*$/, '').trim())
  const lines = config.filter((line) => /^(bind|stats socket|chroot|user|group) /.test(line))
  t.same(
    lines.map((line) => line.split(' ')[0]),
    ['chroot', 'user', 'group', 'stats', 'bind'],
    'the lines that need root or a Debian path',
  )
  for (const line of lines) t.ok(text.includes(`\`${line}\``), `ops/README.md quotes \`${line}\``)
  t.match(text, /`sudo apt-get install -y socat`/)
})

t.test("the fleet drift rules' row count is said to be extrapolated, with the example", async (t) => {
  const passage = passageNaming(await readme(), '`fleet:svc_drift_rows:increase` can read')
  t.match(passage, /`increase\(\)` extrapolates/)
  t.match(passage, /1 064\.8 for 927 rows/)
})
