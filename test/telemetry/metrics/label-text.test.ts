// Label text as the exposition writes it, made once with a label set. Its bytes against
// prom-client's are checked whole in exposition.test.ts; here, each rule on its own.
import t from 'tap'
import { escapeLabel, escapeText, labelPair, labelText, labelTextWith } from '../../../lib/telemetry/metrics/label-text.js'

t.test('a label value escapes a backslash, a newline and a double quote, each alone, and nothing else', async (t) => {
  t.equal(escapeLabel('a\\b'), 'a\\\\b')
  t.equal(escapeLabel('a\nb'), 'a\\nb')
  t.equal(escapeLabel('a"b'), 'a\\"b')
  t.equal(escapeLabel('é 😀 {}=,'), 'é 😀 {}=,')
  t.equal(escapeLabel(3), 3, 'a number is written as it is')
  t.equal(escapeText('say "hi"\\\n'), 'say "hi"\\\\\\n', 'HELP text keeps its quotes')
})

t.test("a label set's text keeps the set's order, one pair per label", async (t) => {
  t.equal(labelText({}), '')
  t.equal(labelText({ model: 'iris', version: '1', bin: '0' }), 'model="iris",version="1",bin="0"')
  t.equal(labelText({ z: 'a"', a: 'b' }), 'z="a\\"",a="b"')
  t.equal(labelPair('le', '+Inf'), 'le="+Inf"')
})

t.test('one more pair goes after the text, with a comma only between two', async (t) => {
  t.equal(labelTextWith('', 'bin="0"'), 'bin="0"')
  t.equal(labelTextWith('model="iris"', 'bin="0"'), 'model="iris",bin="0"')
})
