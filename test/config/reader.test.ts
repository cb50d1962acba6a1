// Reading declared variables: flag over variable, empty as unset, defaults for the unset and the
// refused, problems in the order found and labelled with what the operator wrote (secrets masked).
import t from 'tap'
import { Reader } from '../../lib/config/reader.js'

t.test('a flag wins over its variable, which wins over the default', async (t) => {
  t.equal(new Reader({ PORT: '9000' }, ['--port', '9100']).read('PORT'), 9100)
  t.equal(new Reader({ PORT: '9000' }, []).read('PORT'), 9000)
  t.equal(new Reader({}, []).read('PORT'), 8000)
})

t.test('an unset or empty variable takes its default and is noted as defaulted', async (t) => {
  const reader = new Reader({ PORT: '', HOST: '0.0.0.0' }, [])
  t.equal(reader.read('PORT'), 8000)
  t.equal(reader.read('HOST'), '0.0.0.0')
  t.equal(reader.read('SVC_DB_HOST'), undefined, 'no default: undefined')
  t.same([...reader.defaulted], ['PORT', 'SVC_DB_HOST'])
  t.equal(reader.isSet('PORT'), false)
  t.equal(reader.isSet('HOST'), true)
  t.same(reader.problems, [])
})

t.test('a refused value is reported with its source and takes the default', async (t) => {
  const reader = new Reader({ PORT: 'eighty', SVC_METRICS_TOKEN: 'x' }, ['--log-level', 'loud'])
  t.equal(reader.read('LOG_LEVEL'), 'info')
  t.equal(reader.read('PORT'), 8000)
  reader.read('SVC_METRICS_TOKEN')
  t.equal(reader.problems.length, 3)
  t.match(reader.problems[0], /^--log-level=loud: /)
  t.match(reader.problems[1], /^PORT=eighty: expected an integer from 0 to 65535/)
  t.match(reader.problems[2], /^SVC_METRICS_TOKEN: /, 'a secret is named, never shown')
  t.notMatch(reader.problems[2], /=x/)
  t.same([...reader.defaulted], [], 'refused is not unset')
})

t.test('refuse reports against a set variable only; problem reports as given', async (t) => {
  const reader = new Reader({ PORT: '80' }, [])
  reader.refuse('PORT', 'taken')
  reader.refuse('HOST', 'unset: not reported')
  reader.problem('PORT and SVC_ADMIN_PORT are the same')
  t.same(reader.problems, ['PORT=80: taken', 'PORT and SVC_ADMIN_PORT are the same'])
})

t.test('an unknown flag or a positional is one problem listing the accepted flags', async (t) => {
  const unknown = new Reader({ PORT: '9000' }, ['--prot', '80'])
  t.equal(unknown.problems.length, 1)
  t.match(unknown.problems[0], /^Unknown option '--prot'; accepted flags: --name, --host, --port, /)
  t.match(unknown.problems[0], /, --help, --version$/)
  t.equal(unknown.read('PORT'), 9000, 'the variables are still read')
  t.match(new Reader({}, ['serve']).problems, [/^Unexpected argument 'serve'/])
})
